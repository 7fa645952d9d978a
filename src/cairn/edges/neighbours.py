"""A record's candidate neighbours for its temporal, tag and semantic edges, in one statement.

Each part is the query it would be alone (same predicates, same order, same limit), joined
by ``UNION ALL`` so that the worker's edge step pays one round trip instead of one per part
and per session tag, plus the ``SET LOCAL`` of the semantic scan's ef_search. Under ingest
every record passes through here once, and each round trip costs the event loop and
PostgreSQL more than the part's own work.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from sqlalchemy import TextClause, text
from sqlalchemy.ext.asyncio import AsyncSession

from cairn.edges.repository import CONTEXT_SCHEMA

PREVIOUS, SHARING, NEAREST = 1, 2, 3

# The previous record of one session tag (``:session_N``).
_PREVIOUS = (
    "(SELECT 1 AS part, {n} AS ord, id, NULL::float8 AS similarity FROM breadcrumbs"
    " WHERE owner_id = :owner AND tags @> ARRAY[CAST(:session_{n} AS text)]"
    " AND id <> :me AND schema_name IS DISTINCT FROM :ctx"
    " AND (created_at, id) < (:created_at, :me) ORDER BY created_at DESC, id DESC LIMIT 1)"
)
# The most recent records sharing a tag pointer.
_SHARING = (
    "(SELECT 2 AS part, 0 AS ord, id, NULL::float8 AS similarity FROM breadcrumbs"
    " WHERE owner_id = :owner AND tags && CAST(:pointers AS text[]) AND id <> :me"
    " AND schema_name IS DISTINCT FROM :ctx ORDER BY created_at DESC LIMIT :tag_limit)"
)
# The k most similar records by the HNSW index. The scan's ef_search is set for the rest of
# the transaction (as SET LOCAL was) by an uncorrelated sub-select in its WHERE clause: a
# one-time filter, evaluated before the index scan is asked for its first row.
_NEAREST = (
    "(SELECT 3 AS part, 0 AS ord, b.id, 1 - (b.embedding <=> me.embedding) AS similarity"
    " FROM breadcrumbs me, LATERAL (SELECT id, embedding FROM breadcrumbs"
    "   WHERE embedding IS NOT NULL AND owner_id = :owner AND id <> :me"
    "   AND schema_name IS DISTINCT FROM :ctx"
    "   AND (SELECT set_config('hnsw.ef_search', CAST(:ef_search AS text), true)) IS NOT NULL"
    "   ORDER BY embedding <=> me.embedding LIMIT :k) b"
    " WHERE me.id = :me AND me.embedding IS NOT NULL)"
)


@dataclass(slots=True)
class Neighbours:
    """Per session tag its previous record (None if it is the first), the records sharing
    a tag pointer, and the nearest records with their cosine similarity."""

    previous: list[uuid.UUID | None] = field(default_factory=list)
    sharing: list[uuid.UUID] = field(default_factory=list)
    nearest: list[tuple[uuid.UUID, float]] = field(default_factory=list)


def ef_search(k: int) -> int:
    """The semantic scan's ef_search for ``k`` neighbours (pgvector's default is 40)."""
    return max(40, 4 * k)


async def find_neighbours(
    session: AsyncSession,
    record: Mapping[Any, Any],
    *,
    sessions: Sequence[str],
    pointers: Sequence[str],
    tag_limit: int,
    k: int | None,
) -> Neighbours:
    """The parts asked for, in one statement: a previous record per tag of ``sessions``,
    records sharing ``pointers`` (none asked if empty), ``k`` nearest (None: not asked)."""
    me = record["id"]
    params: dict[str, Any] = {"owner": record["owner_id"], "me": me, "ctx": CONTEXT_SCHEMA}
    if sessions:
        params["created_at"] = record["created_at"]
        params |= {f"session_{n}": tag for n, tag in enumerate(sessions)}
    if pointers:
        params |= {"pointers": list(pointers), "tag_limit": tag_limit}
    if k is not None:
        params |= {"k": k, "ef_search": str(ef_search(k))}
    found = Neighbours(previous=[None] * len(sessions))
    if not sessions and not pointers and k is None:
        return found
    statement = _statement(len(sessions), bool(pointers), k is not None)
    rows = await session.execute(statement, params)
    for row in rows:
        if row.part == PREVIOUS:
            found.previous[row.ord] = row.id
        elif row.part == SHARING:
            found.sharing.append(row.id)
        else:
            found.nearest.append((row.id, float(row.similarity)))
    return found


@lru_cache(maxsize=64)
def _statement(sessions: int, sharing: bool, nearest: bool) -> TextClause:
    """The statement of these parts (built once: ``text`` scans its SQL for parameters)."""
    parts = [_PREVIOUS.format(n=n) for n in range(sessions)]
    parts += [_SHARING] if sharing else []
    parts += [_NEAREST] if nearest else []
    return text(" UNION ALL ".join(parts))
