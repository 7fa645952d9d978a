"""Edge queries. Every one is owner-scoped: an edge never crosses tenants."""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

CONTEXT_SCHEMA = "agent.context.v1"

# The tenant's definitions generation and the live record with the columns its edges and
# its stored block need (whether it has a vector, not the vector), in one round trip; no
# record: NULL columns.
_FOR_EDGES = text(
    "SELECT (SELECT generation FROM definition_generations WHERE owner_id = :owner)"
    " AS generation, b.id, b.owner_id, b.schema_name, b.title, b.tags, b.context,"
    " b.llm_hints, b.version, b.created_at, b.updated_at, b.domains,"
    " b.embedding IS NOT NULL AS has_embedding"
    " FROM (SELECT 1) AS one LEFT JOIN breadcrumbs b ON b.id = :id AND b.owner_id = :owner"
    " AND (b.ttl IS NULL OR b.ttl > now())"
)

_UPSERT = text(
    "INSERT INTO breadcrumb_edges (owner_id, from_id, to_id, edge_type, weight)"
    " SELECT :owner, e.from_id, e.to_id, e.edge_type, e.weight"
    " FROM unnest(CAST(:froms AS uuid[]), CAST(:tos AS uuid[]), CAST(:kinds AS smallint[]),"
    " CAST(:weights AS real[])) AS e(from_id, to_id, edge_type, weight)"
    " ON CONFLICT (from_id, to_id, edge_type) DO UPDATE SET weight = EXCLUDED.weight"
)


@dataclass(frozen=True, slots=True)
class ForEdges:
    """What the worker's edge step reads first: the definitions generation (0: none yet)
    and the record (None: deleted or expired since its event)."""

    generation: int
    record: Mapping[str, Any] | None


async def record_for_edges(
    session: AsyncSession, owner_id: uuid.UUID, record_id: uuid.UUID
) -> ForEdges:
    row = (await session.execute(_FOR_EDGES, {"owner": owner_id, "id": record_id})).one()
    found = row._asdict()
    generation = int(found.pop("generation") or 0)
    return ForEdges(generation, None if row.id is None else found)


async def upsert_edges(
    session: AsyncSession,
    owner_id: uuid.UUID,
    edges: Sequence[tuple[uuid.UUID, uuid.UUID, int, float]],
) -> None:
    """One statement for all of them (the change-log triggers fire once, revision 0022),
    in the given order; an edge listed twice is written once, with its last weight."""
    latest = {(a, b, t): w for a, b, t, w in edges}
    if latest:
        keys = list(latest)
        params = {
            "owner": owner_id, "froms": [k[0] for k in keys], "tos": [k[1] for k in keys],
            "kinds": [k[2] for k in keys], "weights": list(latest.values()),
        }  # fmt: skip
        await session.execute(_UPSERT, params)


async def delete_edges(
    session: AsyncSession, owner_id: uuid.UUID, links: Sequence[tuple[uuid.UUID, uuid.UUID]],
    edge_type: int,
) -> None:  # fmt: skip
    if links:
        query = text(
            "DELETE FROM breadcrumb_edges WHERE owner_id = :owner AND edge_type = :edge_type"
            " AND (from_id, to_id) IN"
            " (SELECT * FROM unnest(CAST(:froms AS uuid[]), CAST(:tos AS uuid[])))"
        )
        froms, tos = [a for a, _ in links], [b for _, b in links]
        params = {"owner": owner_id, "edge_type": edge_type, "froms": froms, "tos": tos}
        await session.execute(query, params)


async def lock_endpoints(
    session: AsyncSession, owner_id: uuid.UUID, ids: Sequence[uuid.UUID]
) -> set[uuid.UUID]:
    """Of ``ids``, the records that still exist, each locked ``FOR KEY SHARE`` (it cannot be
    deleted before this transaction ends) in id order. Taking these locks up front, in one
    order, before any edge row is touched is what keeps edge writes from deadlocking with
    deletes (see :func:`lock_edges_of`); a record deleted meanwhile is simply left out."""
    query = text(
        "SELECT id FROM breadcrumbs WHERE owner_id = :owner AND id = ANY(:ids)"
        " ORDER BY id FOR KEY SHARE"
    )
    rows = await session.execute(query, {"owner": owner_id, "ids": sorted(set(ids))})
    return {row.id for row in rows}


async def lock_edges_of(session: AsyncSession, owner_id: uuid.UUID, record_id: uuid.UUID) -> None:
    """Lock every edge of a record about to be deleted, in one global order. The delete's
    cascade would otherwise lock them in two passes (edges from it, then edges to it), and two
    deletes of linked records, each holding one end, would wait for each other."""
    query = text(
        "SELECT 1 FROM breadcrumb_edges WHERE owner_id = :owner"
        " AND (from_id = :id OR to_id = :id)"
        " ORDER BY from_id, to_id, edge_type FOR UPDATE"
    )
    await session.execute(query, {"owner": owner_id, "id": record_id})


async def existing_ids(
    session: AsyncSession, owner_id: uuid.UUID, ids: Sequence[uuid.UUID]
) -> list[uuid.UUID]:
    query = text("SELECT id FROM breadcrumbs WHERE owner_id = :owner AND id = ANY(:ids)")
    rows = await session.execute(query, {"owner": owner_id, "ids": list(ids)})
    return [row.id for row in rows]


async def finished(
    session: AsyncSession, owner_id: uuid.UUID, ids: Sequence[uuid.UUID]
) -> list[tuple[uuid.UUID, bool]]:
    """Of ``ids``, the records that exist, each with whether it is finished: it has no
    ``status`` (text), or its status is ``completed``."""
    query = text(
        "SELECT id, coalesce(jsonb_typeof(context->'status') <> 'string'"
        " OR context->>'status' = 'completed', true) AS finished"
        " FROM breadcrumbs WHERE owner_id = :owner AND id = ANY(:ids)"
    )
    rows = await session.execute(query, {"owner": owner_id, "ids": list(dict.fromkeys(ids))})
    return [(row.id, bool(row.finished)) for row in rows]


async def dependents(
    session: AsyncSession, owner_id: uuid.UUID, record_id: uuid.UUID, keys: Sequence[str]
) -> list[uuid.UUID]:
    """The records whose context lists ``record_id`` under one of ``keys``. Reads every
    record of the owner (65-100 ms at 50,000): a GIN index on the lists would not help,
    since under row-level security PostgreSQL applies no non-leakproof operator such as
    jsonb's ``@>`` through an index. The builder asks only when a record finishes or
    changes its status, which is rare."""
    probes = [json.dumps({key: [str(record_id)]}) for key in keys]
    query = text(
        "SELECT id FROM breadcrumbs WHERE owner_id = :owner AND id <> :me"
        " AND context @> ANY(CAST(:probes AS jsonb[])) AND schema_name IS DISTINCT FROM :ctx"
    )
    params = {"owner": owner_id, "me": record_id, "probes": probes, "ctx": CONTEXT_SCHEMA}
    rows = await session.execute(query, params)
    return [row.id for row in rows]


async def breadcrumbs_of_events(
    session: AsyncSession, owner_id: uuid.UUID, event_ids: Sequence[uuid.UUID]
) -> list[uuid.UUID]:
    """The breadcrumbs that events (by event id, e.g. ``trigger_event_id``) were about."""
    query = text(
        "SELECT DISTINCT (payload->>'breadcrumb_id')::uuid AS id FROM outbox"
        " WHERE owner_id = :owner AND msg_id = ANY(:ids)"
    )
    rows = await session.execute(query, {"owner": owner_id, "ids": list(event_ids)})
    return [row.id for row in rows]


async def request_response_pairs(
    session: AsyncSession,
    owner_id: uuid.UUID,
    record_id: uuid.UUID,
    answers: Sequence[str],
    asks: Sequence[str],
) -> list[tuple[uuid.UUID, uuid.UUID]]:
    """(request, response) pairs linked by ``requestId``, in either arrival order."""
    pairs: list[tuple[uuid.UUID, uuid.UUID]] = []
    for request_id in answers:  # this record answers: find who asked
        query = text(
            "SELECT id FROM breadcrumbs WHERE owner_id = :owner AND id <> :me AND"
            " context @> jsonb_build_object('tool_requests',"
            " jsonb_build_array(jsonb_build_object('requestId', CAST(:rid AS text))))"
            " ORDER BY created_at DESC LIMIT 3"
        )
        rows = await session.execute(query, {"owner": owner_id, "me": record_id, "rid": request_id})
        pairs += [(row.id, record_id) for row in rows]
    for request_id in asks:  # this record asks: find answers already there
        query = text(
            "SELECT id FROM breadcrumbs WHERE owner_id = :owner AND id <> :me AND"
            " context @> jsonb_build_object('requestId', CAST(:rid AS text))"
            " ORDER BY created_at DESC LIMIT 3"
        )
        rows = await session.execute(query, {"owner": owner_id, "me": record_id, "rid": request_id})
        pairs += [(record_id, row.id) for row in rows]
    return pairs


async def edges_touching(
    session: AsyncSession, owner_id: uuid.UUID, ids: Sequence[uuid.UUID], limit: int
) -> list[tuple[uuid.UUID, uuid.UUID, int, float]]:
    """Up to ``limit`` edges from or to any of ``ids``, strongest kinds first (causal before
    temporal before tag before semantic, then by weight): one hop of a bounded walk."""
    query = text(
        "SELECT from_id, to_id, edge_type, weight FROM breadcrumb_edges"
        " WHERE owner_id = :owner AND (from_id = ANY(:ids) OR to_id = ANY(:ids))"
        " ORDER BY edge_type, weight DESC, from_id, to_id LIMIT :limit"
    )
    rows = await session.execute(query, {"owner": owner_id, "ids": list(ids), "limit": limit})
    return [(row.from_id, row.to_id, row.edge_type, float(row.weight)) for row in rows]


async def edges_among(
    session: AsyncSession, owner_id: uuid.UUID, ids: Sequence[uuid.UUID], limit: int
) -> list[tuple[uuid.UUID, uuid.UUID, int, float]]:
    """Up to ``limit`` edges with both ends in ``ids``, strongest kinds first."""
    query = text(
        "SELECT from_id, to_id, edge_type, weight FROM breadcrumb_edges"
        " WHERE owner_id = :owner AND from_id = ANY(:ids) AND to_id = ANY(:ids)"
        " ORDER BY edge_type, weight DESC, from_id, to_id LIMIT :limit"
    )
    rows = await session.execute(query, {"owner": owner_id, "ids": list(ids), "limit": limit})
    return [(row.from_id, row.to_id, row.edge_type, float(row.weight)) for row in rows]


async def node_rows(
    session: AsyncSession, owner_id: uuid.UUID, ids: Sequence[uuid.UUID]
) -> list[Any]:
    """Title, schema and tags of each of ``ids`` that exists and has not expired (in no
    particular order)."""
    query = text(
        "SELECT id, title, schema_name, tags FROM breadcrumbs"
        " WHERE owner_id = :owner AND id = ANY(:ids) AND (ttl IS NULL OR ttl > now())"
    )
    return list(await session.execute(query, {"owner": owner_id, "ids": list(ids)}))


async def edges_of(
    session: AsyncSession, owner_id: uuid.UUID, record_id: uuid.UUID, limit: int
) -> list[Any]:
    """Up to ``limit`` edges out of and ``limit`` into ``record_id``, strongest kinds first,
    each with the other end's title and schema (a live record's only)."""
    query = text(
        "(SELECT 'out' AS direction, e.to_id AS other, e.edge_type, e.weight, b.title,"
        " b.schema_name FROM breadcrumb_edges e JOIN breadcrumbs b ON b.id = e.to_id"
        " WHERE e.owner_id = :owner AND e.from_id = :id AND (b.ttl IS NULL OR b.ttl > now())"
        " ORDER BY e.edge_type, e.weight DESC, e.to_id LIMIT :limit)"
        " UNION ALL"
        " (SELECT 'in', e.from_id, e.edge_type, e.weight, b.title, b.schema_name"
        " FROM breadcrumb_edges e JOIN breadcrumbs b ON b.id = e.from_id"
        " WHERE e.owner_id = :owner AND e.to_id = :id AND (b.ttl IS NULL OR b.ttl > now())"
        " ORDER BY e.edge_type, e.weight DESC, e.from_id LIMIT :limit)"
    )
    params = {"owner": owner_id, "id": record_id, "limit": limit}
    return list(await session.execute(query, params))
