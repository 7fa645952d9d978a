"""The graph walk over a tenant's :class:`Adjacency`: the same answers as the SQL of
context.graph — the same fan-out caps and order, costs computed with the same float
operations, the same filters and tie-breaks — without a round trip.

Three pieces, each the twin of one query there: a hop of the ranked walk
(:func:`hop_rows`, ``hop_query``), the plain walk (:func:`plain_walk`, ``walk_query``)
and the edges among the reached records (:func:`edges_among`, ``_EDGES``).
"""

from __future__ import annotations

import uuid
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cairn.context.adjacency import Adjacency, Lists
from cairn.context.model import EdgeColumns, EdgeType
from cairn.context.pathfinder import CostModel

TEMPORAL = EdgeType.temporal.value
Nodes = NDArray[np.integer[Any]]


@dataclass(frozen=True, slots=True)
class Walk:
    """What every step of one walk shares."""

    adjacency: Adjacency
    fanout: int
    quiet: uuid.UUID | None
    excluded: frozenset[str]
    scope: frozenset[str] | None
    isolated: frozenset[str]
    quiet_node: int | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        if self.quiet is not None:
            object.__setattr__(self, "quiet_node", self.adjacency.node(self.quiet))

    def steps(self, node: int) -> Iterable[Lists]:
        """The node's outgoing, then incoming, strongest edges, each capped at the fan-out;
        the ``quiet`` record's temporal edges are not walked (nor counted in the cap)."""
        quiet = self.quiet_node
        for far, kind, weight in (self.adjacency.outgoing(node), self.adjacency.incoming(node)):
            if node == quiet:
                keep = kind != TEMPORAL
                far, kind, weight = far[keep], kind[keep], weight[keep]
            yield far[: self.fanout], kind[: self.fanout], weight[: self.fanout]

    def walkable(self, nodes: Nodes) -> NDArray[np.bool_]:
        """Visible, not of an excluded schema and, with a scope, in it."""
        adjacency = self.adjacency
        ok = adjacency.present[nodes].copy()
        banned = [adjacency.schemas.ids[s] for s in self.excluded if s in adjacency.schemas.ids]
        if banned:
            ok &= ~np.isin(adjacency.schema[nodes], banned)
        if self.scope is not None:
            scope = self.scope
            values = adjacency.session_sets.values
            sets = adjacency.sessions[nodes]
            allowed = [s for s in np.unique(sets) if not values[s] or values[s] & scope]
            ok &= np.isin(sets, allowed)
        return ok

    def isolated_of(self, nodes: Nodes) -> NDArray[np.bool_]:
        """Labelled, and every label one of the isolated domains."""
        if not self.isolated:
            return np.zeros(len(nodes), np.bool_)
        values = self.adjacency.domain_sets.values
        sets = self.adjacency.domains[nodes]
        cut = [d for d in np.unique(sets) if values[d] and values[d] <= self.isolated]
        return np.isin(sets, cut)


def hop_rows(
    walk: Walk, frontier: Mapping[uuid.UUID, float], costs: CostModel, limit: int
) -> list[tuple[uuid.UUID, float, bool]]:
    """One hop of the ranked walk: each reached record with its least cost, the nearest
    ``limit`` of them by (cost, id); with isolated domains, the nearest ``limit`` isolated
    ones too, flagged."""
    adjacency = walk.adjacency
    nodes = adjacency.nodes(list(frontier))
    known = nodes >= 0
    if not known.any():
        return []
    nodes = nodes[known]
    starts = np.fromiter(frontier.values(), np.float64, len(frontier))[known]
    far, total = _steps(walk, nodes, starts, costs)
    ok = walk.walkable(far)
    far, total = far[ok], total[ok]
    reached, inverse = np.unique(far, return_inverse=True)
    best = np.full(len(reached), np.inf)
    np.minimum.at(best, inverse, total)
    isolated = walk.isolated_of(reached)
    rows: list[tuple[uuid.UUID, float, bool]] = []
    for flag in (False, True) if walk.isolated else (False,):
        keep = isolated == flag
        chosen, cost = reached[keep], best[keep]
        lo, hi = adjacency.id_order(chosen)
        order = np.lexsort((lo, hi, cost))[:limit]
        names = adjacency.record_ids(chosen[order])
        rows += [(n, c, flag) for n, c in zip(names, cost[order].tolist(), strict=True)]
    return rows


def _steps(
    walk: Walk, nodes: NDArray[np.int64], starts: NDArray[np.float64], costs: CostModel
) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """Every capped step from ``nodes`` (far end, path cost); the quiet record's lists,
    filtered before the cap, are taken one by one."""
    adjacency = walk.adjacency
    quiet = walk.quiet_node
    fars: list[NDArray[np.int64]] = []
    totals: list[NDArray[np.float64]] = []
    plain = nodes != quiet if quiet is not None else np.ones(len(nodes), np.bool_)
    for outgoing in (True, False):
        at, far, kind, weight = adjacency.gather(nodes[plain], outgoing, walk.fanout)
        fars.append(far.astype(np.int64))
        totals.append(starts[plain][at] + step_costs(costs, kind, weight))
    for position in np.flatnonzero(~plain).tolist():
        for far, kind, weight in walk.steps(int(nodes[position])):
            fars.append(far.astype(np.int64))
            totals.append(starts[position] + step_costs(costs, kind, weight))
    return np.concatenate(fars), np.concatenate(totals)


def step_costs(
    costs: CostModel, kind: NDArray[np.int8], weight: NDArray[np.float32]
) -> NDArray[np.float64]:
    """:meth:`CostModel.edge_cost` per edge, with the float operations of its SQL."""
    semantic = costs.semantic + np.clip(1.0 - weight.astype(np.float64), 0.0, 1.0)
    fixed = {
        kind.value: costs.type_cost(kind) for kind in EdgeType if kind is not EdgeType.semantic
    }
    out = semantic
    for value, cost in fixed.items():
        out = np.where(kind == value, cost, out)
    return out


def plain_walk(walk: Walk, seeds: Collection[uuid.UUID], radius: int) -> set[uuid.UUID]:
    """Every record within ``radius`` hops of the seeds through walkable records."""
    adjacency = walk.adjacency
    found = adjacency.nodes(list(seeds))
    frontier = found[found >= 0].tolist()
    seen = set(frontier)
    for _ in range(radius):
        fars = [far for node in frontier for far, _, _ in walk.steps(node)]
        if not fars:
            break
        far = np.unique(np.concatenate(fars).astype(np.int64))
        far = far[walk.walkable(far) & ~walk.isolated_of(far)]
        frontier = [int(n) for n in far if int(n) not in seen]
        seen.update(frontier)
    return set(seeds) | set(adjacency.record_ids(np.fromiter(seen, np.int64, len(seen))))


def edges_among(
    adjacency: Adjacency, ids: Iterable[uuid.UUID], quiet: uuid.UUID | None
) -> EdgeColumns:
    """Every edge with both ends in ``ids``, but the ``quiet`` record's temporal ones."""
    given = list(ids)
    found = adjacency.nodes(given)
    nodes = found[found >= 0]
    inside = np.zeros(adjacency.size, np.bool_)
    inside[nodes] = True
    at, far, kind, weight = adjacency.gather(nodes, outgoing=True)
    near = nodes[at]
    keep = inside[far]
    q = adjacency.node(quiet) if quiet is not None else None
    if q is not None:
        keep &= (kind != TEMPORAL) | ((far != q) & (near != q))
    # Each end's place in ``given``: both ends are among the nodes found.
    order = np.argsort(found, kind="stable")
    place = order[np.searchsorted(found, near[keep], sorter=order)]
    far_place = order[np.searchsorted(found, far[keep], sorter=order)]
    return EdgeColumns(given, place, far_place, kind[keep], weight[keep])
