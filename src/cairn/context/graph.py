"""The neighbourhood of the seeds: one recursive CTE to radius 2, both directions.

Fan-out is capped per node and per direction (strongest edges first: causal before
temporal before tag before semantic, then by weight), the walk stays inside the owner, and
it neither loads nor walks through blacklisted schemas.

With ``scope`` (the trigger's sessions, for an agent whose graph is session-scoped), the
walk neither loads nor walks through records of other sessions; records of no session
(knowledge, tools) stay reachable.

The trigger's own temporal edges (``quiet``) are neither walked nor returned: the records
before it in its session are the session source's business (``session.limit``), so an
agent that asks for no history does not get the latest turns through the back door.

With ``max_candidates``, the walk goes hop by hop instead, each hop one query that ranks
what it reaches by path cost (seed cost plus the pathfinder's edge costs) and returns only
the nearest; the next hop expands the nearest part of that frontier. Only the seeds and
the ``max_candidates`` records nearest to them are loaded: the pathfinder takes records in
that order, so a budget that fills within the first few hundred never sees the
difference, while loading, rendering and token-counting the whole two-hop neighbourhood
(thousands of records around busy seeds, tens of thousands at scale) would dominate the
assembly.

Each edge list is taken in one order, ties broken by the far end's id, so that the walk
over a worker's in-memory arrays (context.graph_memory, context.walk_memory) gives the
same answer as these queries.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from typing import Any

from sqlalchemy import TextClause, text
from sqlalchemy.ext.asyncio import AsyncSession

from cairn.context.graph_memory import GraphMemory
from cairn.context.model import EDGE_TYPES, SESSION_PREFIX, Edge, Graph, Record
from cairn.context.pathfinder import DEFAULT_COSTS, CostModel
from cairn.context.records import (
    RecordCache,
    isolated_sql,
    load_records,
    load_records_cached,
)
from cairn.context.walk_memory import Walk, edges_among, hop_rows, plain_walk
from cairn.db.driver import while_answered

# A reached record is in scope: it shares a session with the trigger, or it belongs to no
# session at all. Only written into the queries of a scoped walk.
_IN_SCOPE = (
    "(b.tags && CAST(:scope AS text[])"
    " OR NOT EXISTS (SELECT 1 FROM unnest(b.tags) AS tag WHERE starts_with(tag, 'session:')))"
)


def _scope_clause(scoped: bool) -> str:
    return f"AND {_IN_SCOPE}" if scoped else ""


def _not_quiet(node: str) -> str:
    """An edge condition: not a temporal edge of the ``:quiet`` record when at ``node``."""
    return f"(e.edge_type <> 1 OR {node} IS DISTINCT FROM CAST(:quiet AS uuid))"


_WALK = f"""
    WITH RECURSIVE walk(id, depth) AS (
        SELECT seed, 0 FROM unnest(CAST(:seeds AS uuid[])) AS seed
        UNION
        SELECT step.id, walk.depth + 1
        FROM walk
        CROSS JOIN LATERAL (
            (SELECT e.to_id AS id FROM breadcrumb_edges e
              WHERE e.from_id = walk.id AND e.owner_id = :owner
                AND {_not_quiet("walk.id")}
              ORDER BY e.edge_type, e.weight DESC, e.to_id LIMIT :fanout)
            UNION ALL
            (SELECT e.from_id AS id FROM breadcrumb_edges e
              WHERE e.to_id = walk.id AND e.owner_id = :owner
                AND {_not_quiet("walk.id")}
              ORDER BY e.edge_type, e.weight DESC, e.from_id LIMIT :fanout)
        ) AS step
        JOIN breadcrumbs b ON b.id = step.id
        WHERE walk.depth < :radius
          AND (b.schema_name IS NULL OR NOT (b.schema_name = ANY(:excluded))) {{scope}}
          AND NOT {{isolated}}
    )
    SELECT DISTINCT id FROM walk
    """


@cache
def walk_query(isolating: bool, scoped: bool = False) -> TextClause:
    """The plain walk; ``isolating``: records of the ``:isolated`` domains are neither
    loaded nor walked through; ``scoped``: nor records of sessions not in ``:scope``."""
    isolated = isolated_sql("b") if isolating else "false"
    return text(_WALK.format(isolated=isolated, scope=_scope_clause(scoped)))


@cache
def hop_query(costs: CostModel, isolating: bool = False, scoped: bool = False) -> TextClause:
    """One hop of the ranked walk: every frontier node's strongest edges (fan-out capped
    per direction), the reached record's best cost, the nearest :limit of them. The edge
    costs are the pathfinder's, generated from ``costs``. ``isolating``: records of the
    ``:isolated`` domains are neither kept nor walked through; the nearest :limit of them
    come back flagged, for the explanation."""
    flag = f"bool_or({isolated_sql('b')})" if isolating else "false"
    nearest = (
        "(SELECT id, cost, false AS isolated FROM reached WHERE NOT isolated"
        " ORDER BY cost, id LIMIT :limit)"
        " UNION ALL (SELECT id, cost, true FROM reached WHERE isolated"
        " ORDER BY cost, id LIMIT :limit)"
        if isolating
        else "SELECT id, cost, isolated FROM reached ORDER BY cost, id LIMIT :limit"
    )
    return text(
        f"""
        WITH reached AS (
        SELECT hop.id, min(frontier.cost + hop.cost) AS cost, {flag} AS isolated
        FROM unnest(CAST(:frontier AS uuid[]), CAST(:costs AS float8[])) AS frontier(id, cost)
        CROSS JOIN LATERAL (
            SELECT step.id, {costs.edge_cost_sql("step.edge_type", "step.weight")} AS cost
            FROM (
                (SELECT e.to_id AS id, e.edge_type, e.weight FROM breadcrumb_edges e
                  WHERE e.from_id = frontier.id AND e.owner_id = :owner
                    AND {_not_quiet("frontier.id")}
                  ORDER BY e.edge_type, e.weight DESC, e.to_id LIMIT :fanout)
                UNION ALL
                (SELECT e.from_id AS id, e.edge_type, e.weight FROM breadcrumb_edges e
                  WHERE e.to_id = frontier.id AND e.owner_id = :owner
                    AND {_not_quiet("frontier.id")}
                  ORDER BY e.edge_type, e.weight DESC, e.from_id LIMIT :fanout)
            ) AS step
        ) AS hop
        JOIN breadcrumbs b ON b.id = hop.id
        WHERE (b.schema_name IS NULL OR NOT (b.schema_name = ANY(:excluded)))
              {_scope_clause(scoped)}
        GROUP BY hop.id
        )
        {nearest}
        """
    )


_EDGES = text(
    "SELECT from_id, to_id, edge_type, weight FROM breadcrumb_edges"
    " WHERE owner_id = :owner AND from_id = ANY(:ids) AND to_id = ANY(:ids)"
    " AND (edge_type <> 1 OR CAST(:quiet AS uuid) IS NULL"
    " OR CAST(:quiet AS uuid) NOT IN (from_id, to_id))"
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
    cache: RecordCache | None = None,
    quiet: uuid.UUID | None = None,
    scope: Sequence[str] | None = None,
    isolated: frozenset[str] = frozenset(),
    memory: GraphMemory | None = None,
    vectors: bool = True,
) -> Graph:
    """Records and edges within ``radius`` hops of ``seeds`` (``preloaded`` records, such as
    the trigger, are reused, not fetched again); at most the seeds plus the
    ``max_candidates`` nearest others (``seed_costs``: each seed's starting cost, 0 when
    absent). With a ``cache``, records it holds at their current version are not sent.
    ``quiet``'s temporal edges are left out; with ``scope``, records of other sessions; with
    ``isolated`` domains, their records (listed in ``Graph.isolated`` when reached). With
    ``memory``, the walk and the edges come from the tenant's arrays (context.walk_memory),
    the same answers without their queries; only the records are read. ``vectors``: whether
    the records the cache lacks come with their embeddings (for the cache)."""
    seed_ids = list(dict.fromkeys(seeds))
    walk = await _memory_walk(session, owner_id, memory, fanout, quiet, excluded, scope, isolated)
    if max_candidates is None:
        if walk is None:
            params = {
                "seeds": seed_ids, "owner": owner_id, "fanout": fanout, "radius": radius,
                "excluded": sorted(excluded), "quiet": quiet, "scope": _scope(scope),
                "isolated": sorted(isolated),
            }  # fmt: skip
            rows = await session.execute(walk_query(bool(isolated), scope is not None), params)
            walked = {row.id for row in rows}
        else:
            walked = plain_walk(walk, seed_ids, radius)
        reached = walked | set(preloaded or ())
        isolated_ids: list[uuid.UUID] = []
    else:
        starts = {seed: (seed_costs or {}).get(seed, 0.0) for seed in seed_ids}
        ranked = _RankedWalk(
            session, owner_id, excluded, fanout, costs, quiet, _scope(scope), isolated, walk
        )
        reached = await ranked.nearest(starts, radius, max_candidates) | set(preloaded or ())
        isolated_ids = sorted(ranked.isolated, key=lambda n: (ranked.isolated[n], n.int))
    records = {k: v for k, v in (preloaded or {}).items() if k in reached}
    missing = reached - records.keys()
    if walk is not None and missing and cache is not None:
        # The edges are found in the arrays while PostgreSQL reads the records.
        loaded, columns = await while_answered(
            load_records_cached(session, owner_id, missing, excluded, cache, vectors=vectors),
            lambda: edges_among(walk.adjacency, reached, quiet),
        )
        records.update(loaded)
        return Graph(records=records, edges=columns, isolated=tuple(isolated_ids))
    if walk is None:
        params = {"owner": owner_id, "ids": list(reached), "quiet": quiet}
        found = await session.execute(_EDGES, params)
        edges: Sequence[Edge] = tuple(
            Edge(a, b, EDGE_TYPES[kind], float(weight)) for a, b, kind, weight in found.all()
        )  # both ends are in `reached`: the query asks for exactly those
    else:
        edges = edges_among(walk.adjacency, reached, quiet)
    if missing and cache is not None:
        loaded = await load_records_cached(
            session, owner_id, missing, excluded, cache, vectors=vectors
        )
        records.update(loaded)
    elif missing:
        records.update(await load_records(session, owner_id, missing, excluded))
    return Graph(records=records, edges=edges, isolated=tuple(isolated_ids))


async def _memory_walk(
    session: AsyncSession,
    owner_id: uuid.UUID,
    memory: GraphMemory | None,
    fanout: int,
    quiet: uuid.UUID | None,
    excluded: frozenset[str],
    scope: Sequence[str] | None,
    isolated: frozenset[str],
) -> Walk | None:
    """The walk over the tenant's arrays, when there are any and the transaction has not
    written yet. The arrays keep each record's session tags only: a scope naming other tags
    is the SQL's to walk."""
    if memory is None or (
        scope is not None and not all(t.startswith(SESSION_PREFIX) for t in scope)
    ):
        return None
    adjacency = await memory.current(session, owner_id)
    if adjacency is None:
        return None
    within = None if scope is None else frozenset(scope)
    return Walk(adjacency, fanout, quiet, excluded, within, isolated)


def _scope(scope: Sequence[str] | None) -> list[str] | None:
    return None if scope is None else list(scope)


class _RankedWalk:
    """Hop by hop from the seeds, each hop's nearest records by path cost (each hop one
    query, or one pass over the arrays of ``walk``)."""

    def __init__(
        self,
        session: AsyncSession,
        owner_id: uuid.UUID,
        excluded: frozenset[str],
        fanout: int,
        costs: CostModel,
        quiet: uuid.UUID | None,
        scope: list[str] | None,
        isolated: frozenset[str] = frozenset(),
        walk: Walk | None = None,
    ) -> None:
        self.session = session
        self.params: dict[str, Any] = {
            "owner": owner_id, "excluded": sorted(excluded), "fanout": fanout, "quiet": quiet,
            "scope": scope, "isolated": sorted(isolated),
        }  # fmt: skip
        self.costs = costs
        self.query = hop_query(costs, bool(isolated), scope is not None)
        self.walk = walk
        self.isolated: dict[uuid.UUID, float] = {}  # reached, left out: their least cost

    async def hop(
        self, frontier: Mapping[uuid.UUID, float], limit: int
    ) -> Sequence[tuple[uuid.UUID, float, bool]]:
        if self.walk is not None:
            return hop_rows(self.walk, frontier, self.costs, limit)
        ids = list(frontier)
        params = {"frontier": ids, "costs": [frontier[i] for i in ids], "limit": limit}
        rows = (await self.session.execute(self.query, self.params | params)).all()
        return [(node, cost, isolated) for node, cost, isolated in rows]

    async def nearest(
        self, starts: Mapping[uuid.UUID, float], radius: int, limit: int
    ) -> set[uuid.UUID]:
        """The seeds and the ``limit`` other records of least cost within ``radius``."""
        best = dict(starts)
        frontier = dict(starts)
        for _ in range(radius):
            if not frontier:
                break
            reached: dict[uuid.UUID, float] = {}
            for node, cost, isolated in await self.hop(frontier, limit):
                if isolated:
                    if node not in starts:
                        self.isolated[node] = min(cost, self.isolated.get(node, cost))
                    continue
                if cost < best.get(node, float("inf")):
                    best[node] = reached[node] = cost
            # Expand the nearest half of what is new; the rest stays a candidate.
            nearest_new = sorted(reached.items(), key=lambda p: (p[1], p[0].int))
            frontier = dict(nearest_new[: max(1, limit // 2)])
        others = sorted(
            ((cost, node.int, node) for node, cost in best.items() if node not in starts)
        )
        return set(starts) | {node for _, _, node in others[:limit]}
