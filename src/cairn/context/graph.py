"""The neighbourhood of the seeds: one recursive CTE to radius 2, both directions.

Fan-out is capped per node and per direction (strongest edges first: causal before
temporal before tag before semantic, then by weight), the walk stays inside the owner, and
it neither loads nor walks through blacklisted schemas.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from cairn.context.model import Edge, EdgeType, Graph, Record
from cairn.context.records import load_records

_WALK = text(
    """
    WITH RECURSIVE walk(id, depth) AS (
        SELECT seed, 0 FROM unnest(CAST(:seeds AS uuid[])) AS seed
        UNION
        SELECT step.id, walk.depth + 1
        FROM walk
        CROSS JOIN LATERAL (
            (SELECT e.to_id AS id FROM breadcrumb_edges e
              WHERE e.from_id = walk.id AND e.owner_id = :owner
              ORDER BY e.edge_type, e.weight DESC LIMIT :fanout)
            UNION ALL
            (SELECT e.from_id AS id FROM breadcrumb_edges e
              WHERE e.to_id = walk.id AND e.owner_id = :owner
              ORDER BY e.edge_type, e.weight DESC LIMIT :fanout)
        ) AS step
        JOIN breadcrumbs b ON b.id = step.id
        WHERE walk.depth < :radius
          AND (b.schema_name IS NULL OR NOT (b.schema_name = ANY(:excluded)))
    )
    SELECT DISTINCT id FROM walk
    """
)

_EDGES = text(
    "SELECT from_id, to_id, edge_type, weight FROM breadcrumb_edges"
    " WHERE owner_id = :owner AND from_id = ANY(:ids) AND to_id = ANY(:ids)"
)


async def load_graph(
    session: AsyncSession,
    owner_id: uuid.UUID,
    seeds: Iterable[uuid.UUID],
    excluded: frozenset[str],
    *,
    radius: int = 2,
    fanout: int = 16,
    preloaded: dict[uuid.UUID, Record] | None = None,
) -> Graph:
    """Records and edges within ``radius`` hops of ``seeds`` (records already loaded by
    the seed stage are reused, not fetched again)."""
    seed_ids = list(dict.fromkeys(seeds))
    params = {"seeds": seed_ids, "owner": owner_id, "fanout": fanout, "radius": radius}
    rows = await session.execute(_WALK, params | {"excluded": sorted(excluded)})
    ids = {row.id for row in rows}
    records = dict(preloaded or {})
    missing = ids - records.keys()
    if missing:
        records.update(await load_records(session, owner_id, missing, excluded))
    loaded = list(records)
    edge_rows = await session.execute(_EDGES, {"owner": owner_id, "ids": loaded})
    edges = tuple(
        Edge(row.from_id, row.to_id, EdgeType(row.edge_type), float(row.weight))
        for row in edge_rows
    )
    return Graph(records=records, edges=edges)
