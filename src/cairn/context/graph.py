"""The neighbourhood of the seeds: one recursive CTE to radius 2, both directions.

Fan-out is capped per node and per direction (strongest edges first: causal before
temporal before tag before semantic, then by weight), the walk stays inside the owner, and
it neither loads nor walks through blacklisted schemas.

With ``max_candidates``, only the seeds and the records nearest to them by path cost (the
pathfinder's cost model, over the edges among the reached records) are loaded: the
pathfinder takes records in exactly that order, so a budget that fills within the first
few hundred never sees the difference, while loading, rendering and token-counting the
whole two-hop neighbourhood (thousands of records around busy seeds) would dominate the
assembly.
"""

from __future__ import annotations

import heapq
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from cairn.context.model import Edge, EdgeType, Graph, Record
from cairn.context.pathfinder import DEFAULT_COSTS, CostModel
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

_EDGE_TYPES = {kind.value: kind for kind in EdgeType}

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
    seed_costs: Mapping[uuid.UUID, float] | None = None,
    max_candidates: int | None = None,
    costs: CostModel = DEFAULT_COSTS,
) -> Graph:
    """Records and edges within ``radius`` hops of ``seeds`` (records already loaded by
    the seed stage are reused, not fetched again); at most the seeds plus the
    ``max_candidates`` nearest others (``seed_costs``: each seed's starting cost, 0 when
    absent)."""
    seed_ids = list(dict.fromkeys(seeds))
    params = {"seeds": seed_ids, "owner": owner_id, "fanout": fanout, "radius": radius}
    rows = await session.execute(_WALK, params | {"excluded": sorted(excluded)})
    reached = {row.id for row in rows} | set(preloaded or ())
    found = await session.execute(_EDGES, {"owner": owner_id, "ids": list(reached)})
    edge_rows = found.all()
    if max_candidates is not None and len(reached) > len(seed_ids) + max_candidates:
        starts = {seed: (seed_costs or {}).get(seed, 0.0) for seed in seed_ids}
        reached = nearest(starts, edge_steps(edge_rows, costs), max_candidates)
    edges = tuple(
        Edge(a, b, _EDGE_TYPES[kind], float(weight))
        for a, b, kind, weight in edge_rows
        if a in reached and b in reached
    )
    records = {k: v for k, v in (preloaded or {}).items() if k in reached}
    missing = reached - records.keys()
    if missing:
        records.update(await load_records(session, owner_id, missing, excluded))
    return Graph(records=records, edges=edges)


Step = tuple[uuid.UUID, uuid.UUID, float]


def edge_steps(rows: Iterable[Sequence[Any]], costs: CostModel = DEFAULT_COSTS) -> list[Step]:
    """``(from, to, cost)`` of ``(from_id, to_id, edge_type, weight)`` rows."""
    fixed = {
        EdgeType.causal.value: costs.causal,
        EdgeType.temporal.value: costs.temporal,
        EdgeType.tag.value: costs.tag,
    }
    return [
        (a, b, fixed[kind] if kind in fixed else min(1.0, max(0.0, 1.0 - weight)))
        for a, b, kind, weight in rows
    ]


def nearest(starts: Mapping[uuid.UUID, float], steps: Iterable[Step], limit: int) -> set[uuid.UUID]:
    """The seeds and the ``limit`` other records of least path cost from them (Dijkstra
    over the edges in both directions; ties by id, so the cut is deterministic)."""
    adjacency: dict[uuid.UUID, list[tuple[uuid.UUID, float]]] = {}
    for a, b, step in steps:
        adjacency.setdefault(a, []).append((b, step))
        adjacency.setdefault(b, []).append((a, step))
    best = dict(starts)
    heap = [(cost, node.int, node) for node, cost in starts.items()]
    heapq.heapify(heap)
    kept: set[uuid.UUID] = set(starts)
    others = 0
    while heap and others < limit:
        cost, _, node = heapq.heappop(heap)
        if cost > best.get(node, float("inf")):
            continue
        if node not in starts:
            if node in kept:
                continue
            kept.add(node)
            others += 1
        for other, step in adjacency.get(node, ()):
            if cost + step < best.get(other, float("inf")):
                best[other] = cost + step
                heapq.heappush(heap, (cost + step, other.int, other))
    return kept
