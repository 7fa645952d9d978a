"""Queries of stored debug paths and waypoints (records of ``debug.path.v1`` and
``debug.waypoint.v1``). Every one is owner-scoped and reads live records only. The schema
names are literals, not parameters, so that the partial indexes of migration 0018 apply
to every plan of the prepared statement."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

PATH_SCHEMA = "debug.path.v1"
WAYPOINT_SCHEMA = "debug.waypoint.v1"

_LIVE = "(ttl IS NULL OR ttl > now())"  # as breadcrumbs.repository._live
# A session's live records (``:owner``, ``:session``: its tag).
_IN_SESSION = f"owner_id = :owner AND {_LIVE} AND tags @> ARRAY[CAST(:session AS text)]"
# Not a record an agent wrote: the paths' own records and assembled contexts.
_NOT_DERIVED = f"schema_name NOT IN ('{PATH_SCHEMA}', '{WAYPOINT_SCHEMA}', 'agent.context.v1')"
CLOCK_SLACK = timedelta(minutes=1)


async def lock_session(session: AsyncSession, owner_id: uuid.UUID, session_tag: str) -> None:
    """Serialise every worker handling this session's records until the transaction ends:
    one active path per session and waypoint sequence numbers without gaps."""
    await session.execute(
        text("SELECT pg_advisory_xact_lock(hashtextextended(:key, 0))"),
        {"key": f"debug-path|{owner_id}|{session_tag}"},
    )


async def active_path(
    session: AsyncSession, owner_id: uuid.UUID, session_tag: str
) -> tuple[uuid.UUID, dict[str, Any]] | None:
    """The session's active path (its id and context), if it has one."""
    query = text(
        f"SELECT id, context FROM breadcrumbs WHERE owner_id = :owner AND {_LIVE}"
        f" AND schema_name = '{PATH_SCHEMA}' AND context->>'session' = :session"
        " AND context->>'status' = 'active' ORDER BY created_at DESC LIMIT 1"
    )
    params = {"owner": owner_id, "session": session_tag}
    row = (await session.execute(query, params)).one_or_none()
    return None if row is None else (row.id, dict(row.context))


async def record_created(
    session: AsyncSession,
    owner_id: uuid.UUID,
    record_id: uuid.UUID,
    waypoint_ids: Sequence[uuid.UUID],
) -> tuple[datetime, bool] | None:
    """When the record was created and whether a waypoint was already derived from it (a
    redelivered event), in one round trip; None if it is gone. Its ``created_at``, not the
    event's time: a batch stamps its records a microsecond apart, in the request's order.

    ``waypoint_ids``: the ids a waypoint from this record would have (derived, one per
    type): probed by primary key, since under row-level security no index on the waypoints'
    ``source_record_id`` can answer (``->>`` is not leakproof)."""
    query = text(
        "SELECT created_at, EXISTS (SELECT 1 FROM breadcrumbs w WHERE w.owner_id = :owner"
        " AND w.id = ANY(:waypoints) AND (w.ttl IS NULL OR w.ttl > now())"
        f" AND w.schema_name = '{WAYPOINT_SCHEMA}') AS tracked"
        f" FROM breadcrumbs WHERE owner_id = :owner AND id = :id AND {_LIVE}"
    )
    params = {"owner": owner_id, "id": record_id, "waypoints": list(waypoint_ids)}
    row = (await session.execute(query, params)).one_or_none()
    return None if row is None else (row.created_at, bool(row.tracked))


async def waypoints_of(
    session: AsyncSession, owner_id: uuid.UUID, path_id: uuid.UUID
) -> list[Mapping[str, Any]]:
    """A path's waypoints (their contexts), in sequence order."""
    query = text(
        f"SELECT context FROM breadcrumbs WHERE owner_id = :owner AND {_LIVE}"
        f" AND schema_name = '{WAYPOINT_SCHEMA}' AND context->>'path_id' = :path"
        " ORDER BY (context->>'sequence')::int"
    )
    params = {"owner": owner_id, "path": str(path_id)}
    return [row.context for row in await session.execute(query, params)]


async def idle_paths(
    session: AsyncSession, before: datetime, *, limit: int
) -> list[tuple[uuid.UUID, uuid.UUID, str, int]]:
    """Every tenant's active paths whose last waypoint came before ``before``, oldest first:
    (owner, path id, session tag, sequence). A system session's query (it spans tenants)."""
    query = text(
        f"SELECT owner_id, id, context->>'session' AS tag, (context->>'sequence')::int AS seq"
        f" FROM breadcrumbs WHERE {_LIVE} AND schema_name = '{PATH_SCHEMA}'"
        " AND context->>'status' = 'active'"
        " AND (context->>'last_at')::timestamptz < :before"
        " ORDER BY (context->>'last_at')::timestamptz LIMIT :limit"
    )
    rows = await session.execute(query, {"before": before, "limit": limit})
    return [(row.owner_id, row.id, row.tag, row.seq) for row in rows]


async def paths_since(
    session: AsyncSession, owner_id: uuid.UUID, session_tag: str, since: datetime, *,
    latest_only: bool = False,
) -> list[tuple[uuid.UUID, dict[str, Any]]]:  # fmt: skip
    """The session's paths, whatever their status, written at or after ``since`` (ids and
    contexts), latest started first. A path is written after the record of its last
    waypoint was created, so these are all the paths whose last waypoint is at or after
    ``since`` (less ``CLOCK_SLACK``: a batch stamps ``created_at`` with the API host's
    clock, ``updated_at`` is the database's). Under row-level security only plain columns
    make index conditions (the JSON operators are not leakproof): migration 0019's index on
    ``updated_at`` bounds the scan to the tenant's recently written paths."""
    query = text(
        f"SELECT id, context FROM breadcrumbs WHERE owner_id = :owner AND {_LIVE}"
        f" AND schema_name = '{PATH_SCHEMA}' AND updated_at >= :since"
        " AND context->>'session' = :session"
        " ORDER BY (context->>'started_at')::timestamptz DESC, id DESC"
        + (" LIMIT 1" if latest_only else "")
    )
    params = {"owner": owner_id, "session": session_tag, "since": since - CLOCK_SLACK}
    return [(row.id, dict(row.context)) for row in await session.execute(query, params)]


async def created_after(
    session: AsyncSession,
    owner_id: uuid.UUID,
    session_tag: str,
    created_at: datetime,
    record_id: uuid.UUID,
) -> bool:
    """Whether the session holds a record created after this one (by time, then id: the
    order a replay goes in), paths, waypoints and contexts aside."""
    query = text(
        f"SELECT EXISTS (SELECT 1 FROM breadcrumbs WHERE {_IN_SESSION} AND {_NOT_DERIVED}"
        " AND (created_at, id) > (:created_at, :id))"
    )
    params = {"owner": owner_id, "session": session_tag, "created_at": created_at, "id": record_id}
    return bool((await session.execute(query, params)).scalar_one())


async def session_records(
    session: AsyncSession, owner_id: uuid.UUID, session_tag: str, since: datetime
) -> list[Mapping[str, Any]]:
    """The records tagged ``session_tag`` created at or after ``since``, in the order they
    were created (ties by id): what a replay of the session's path goes through."""
    query = text(
        "SELECT id, schema_name, title, tags, context, created_at FROM breadcrumbs"
        f" WHERE {_IN_SESSION} AND created_at >= :since ORDER BY created_at, id"
    )
    params = {"owner": owner_id, "session": session_tag, "since": since}
    return [dict(row._mapping) for row in await session.execute(query, params)]


MAX_FILE_RECORDS = 100


async def file_records(
    session: AsyncSession, owner_id: uuid.UUID, files: list[str]
) -> list[uuid.UUID]:
    """The records that stand for these files: tagged ``file:<path>`` (the convention the
    ``signals`` context source reads too), newest first, at most ``MAX_FILE_RECORDS``."""
    query = text(
        f"SELECT id FROM breadcrumbs WHERE owner_id = :owner AND {_LIVE} AND tags && :tags"
        f" AND {_NOT_DERIVED}"
        " ORDER BY created_at DESC, id LIMIT :limit"
    )
    params = {"owner": owner_id, "tags": [f"file:{f}" for f in files], "limit": MAX_FILE_RECORDS}
    return [row.id for row in await session.execute(query, params)]
