"""Token-aware selection: multi-source Dijkstra from every seed over the loaded graph.

Records are taken in order of path cost. A record whose tokens do not fit what is left of
the budget is skipped — recorded as dropped — and the search goes on, so a large record
early on never hides smaller ones behind it. Paths run through skipped records too: being
too big to show does not make a record's neighbours less relevant. Equal costs are broken
by a total order (source rank, hops, newest first, id), so the result does not depend on
the order of seeds or edges.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple, Protocol
from uuid import UUID

import numpy as np

from cairn.context import sources
from cairn.context.model import (
    TRIGGER_SOURCE,
    Dropped,
    DropReason,
    Edge,
    EdgeColumns,
    EdgeType,
    Graph,
    Seed,
    Selected,
    Selection,
)

# The search adds path costs as integers in units of 1e-9, so sums of equal costs taken in
# another order tie exactly (and no rounding runs in the inner loop).
_SCALE = 1_000_000_000


@dataclass(frozen=True, slots=True)
class CostModel:
    """Path costs; lower is closer to the trigger. A seed starts where its source says
    (context.sources: ``base + span * (1 - score)``, the trigger at 0); each edge adds its
    type's cost, a semantic edge ``semantic + (1 - similarity)``. The graph stage ranks
    what it loads with the same costs, in SQL generated from this model
    (:meth:`edge_cost_sql`)."""

    causal: float = 0.1
    # The turns next to a relevant turn come cheap: in a conversation, that is where the
    # rest of an answer sits.
    temporal: float = 0.12
    # A shared tag says little about relevance (every turn of a speaker shares one).
    tag: float = 0.5
    # A semantic edge's relevance is second-hand (similar to something relevant), while the
    # records the hybrid search ranked carry a first-hand score: the base keeps a record
    # that is merely similar to a seed behind them. The costs were tuned on the LoCoMo
    # split (benchmarks/quality/locomo.py).
    semantic: float = 0.3

    def seed_cost(self, seed: Seed) -> float:
        return sources.seed_cost(seed)

    def edge_cost(self, edge: Edge) -> float:
        if edge.edge_type is EdgeType.semantic:
            return self.semantic + min(1.0, max(0.0, 1.0 - edge.weight))
        return self.type_cost(edge.edge_type)

    def type_cost(self, edge_type: EdgeType) -> float:
        """The cost of a causal, temporal or tag edge (their weight does not count)."""
        if edge_type is EdgeType.causal:
            return self.causal
        return self.temporal if edge_type is EdgeType.temporal else self.tag

    def edge_cost_sql(self, edge_type: str, weight: str) -> str:
        """:meth:`edge_cost` as a SQL expression over the columns (or expressions)
        ``edge_type`` (smallint, :class:`EdgeType`) and ``weight``."""
        fixed = " ".join(
            f"WHEN {kind.value:d} THEN CAST({self.type_cost(kind)!r} AS float8)"
            for kind in EdgeType
            if kind is not EdgeType.semantic
        )
        semantic = (
            f"CAST({self.semantic!r} AS float8)"
            f" + greatest(0, least(1, 1 - CAST({weight} AS float8)))"
        )
        return f"CASE {edge_type} {fixed} ELSE {semantic} END"


DEFAULT_COSTS = CostModel()

# Whether a record the search reached is taken (None) or why not, given its seed source and
# its tokens; called once per record, in path-cost order.
Admit = Callable[[UUID, str, int], DropReason | None]


class BudgetLeft:
    """The default admission: a record is taken while its tokens fit what is left."""

    __slots__ = ("remaining",)

    def __init__(self, remaining: int) -> None:
        self.remaining = remaining

    def __call__(self, record_id: UUID, source: str, tokens: int) -> DropReason | None:
        if tokens > self.remaining:
            return DropReason.over_budget
        self.remaining -= tokens
        return None


_ORIGINS = sources.NAMES  # by rank


class _Path(NamedTuple):  # one per reached record: a frozen dataclass costs several times more
    node: UUID
    via: UUID | None
    origin: str
    cost: float
    hops: int


# (path cost in 1e-9 units, origin rank, hops, node, predecessor or -1). Nodes are numbered
# newest first, then by id, so comparing entries is the whole tie-break order, on ints only.
_Entry = tuple[int, int, int, int, int]


class _Search:
    """Dijkstra with lazy deletion over the graph renumbered 0..n-1 (hashing UUIDs in the
    inner loop would cost more than the search itself)."""

    def __init__(self, graph: Graph, costs: CostModel, max_hops: int | None = None) -> None:
        self.max_hops = max_hops
        ordered = sorted(
            graph.records.values(), key=lambda r: (-r.created_at.timestamp(), r.id.int)
        )
        self.ids = [record.id for record in ordered]
        self.index = {record_id.int: n for n, record_id in enumerate(self.ids)}
        self.adjacency: list[list[tuple[int, int]]] = [[] for _ in self.ids]
        self._link(graph.columns, costs)
        self.best: list[float] = [float("inf")] * len(self.ids)
        self.settled = [False] * len(self.ids)
        self.heap: list[_Entry] = []

    def _link(self, edges: EdgeColumns, costs: CostModel) -> None:
        """Each edge between two loaded records, both ways, with its step: the ends
        renumbered once per record, not once per edge, and the steps costed over the arrays
        with :meth:`CostModel.edge_cost`'s float operations (``fmax``/``fmin`` as
        ``max``/``min``, ``rint`` as ``round``: half to even), so in the same units."""
        at = self.index.get
        where = np.fromiter((at(i.int, -1) for i in edges.ids), np.intp, len(edges.ids))
        a, b = where[edges.near], where[edges.far]
        linked = (a >= 0) & (b >= 0) & (a != b)
        kind = edges.kind[linked]
        fixed = np.zeros(max(EdgeType) + 1)  # by the type's value
        for k in EdgeType:
            fixed[k] = 0.0 if k is EdgeType.semantic else costs.type_cost(k)
        distance = np.fmin(1.0, np.fmax(0.0, 1.0 - edges.weight[linked].astype(np.float64)))
        cost = np.where(kind == EdgeType.semantic, costs.semantic + distance, fixed[kind])
        steps = np.rint(cost * _SCALE).astype(np.int64)
        adjacency = self.adjacency
        for x, y, step in zip(a[linked].tolist(), b[linked].tolist(), steps.tolist(), strict=True):
            adjacency[x].append((y, step))
            adjacency[y].append((x, step))

    def push_seed(self, seed: Seed, cost: float) -> None:
        node = self.index[seed.record_id.int]
        self._push((_units(cost), sources.rank_of(seed.source), 0, node, -1))

    def _push(self, entry: _Entry) -> None:
        node = entry[3]
        if entry[0] <= self.best[node]:
            self.best[node] = entry[0]
            heapq.heappush(self.heap, entry)

    def pop(self) -> _Entry | None:
        while self.heap:
            entry = heapq.heappop(self.heap)
            if not self.settled[entry[3]]:
                self.settled[entry[3]] = True
                return entry
        return None

    def expand(self, entry: _Entry) -> None:
        cost, rank, hops, node, _ = entry
        if self.max_hops is not None and hops >= self.max_hops:
            return
        for other, step in self.adjacency[node]:
            if not self.settled[other]:
                self._push((cost + step, rank, hops + 1, other, node))

    def path(self, entry: _Entry) -> _Path:
        cost, rank, hops, node, via = entry
        before = None if via < 0 else self.ids[via]
        return _Path(self.ids[node], before, _ORIGINS[rank], cost / _SCALE, hops)


@dataclass(frozen=True, slots=True)
class PreparedSearch:
    """The search's graph, numbered and linked (:func:`prepare_search`), for one selection."""

    search: _Search


def prepare_search(
    graph: Graph, costs: CostModel = DEFAULT_COSTS, max_hops: int | None = None
) -> PreparedSearch:
    """What :func:`select_within_budget` builds first from the graph alone, built apart: an
    assembly builds it while a statement of its own is on its way (context.assemble)."""
    return PreparedSearch(_Search(graph, costs, max_hops))


@dataclass(slots=True)
class _Outcome:
    selected: list[Selected] = field(default_factory=list)
    dropped: list[Dropped] = field(default_factory=list)
    stopped: DropReason | None = None
    trigger_over_budget: bool = False


class Picker(Protocol):
    """The order in which reached records are offered to the budget, when path cost alone
    does not decide it (MMR, context.ranking). ``begin`` gets every reached record with its
    path cost, cheapest first; ``pick`` returns the index of the next one to offer (None:
    done); ``taken`` says that one went into the context."""

    def begin(self, paths: Sequence[tuple[UUID, float]]) -> None: ...

    def pick(self) -> int | None: ...

    def taken(self, index: int) -> None: ...


def select_within_budget(
    seeds: Iterable[Seed],
    graph: Graph,
    cost_of: Callable[[UUID], int],
    budget_tokens: int,
    *,
    max_nodes: int,
    fixed_overhead: int,
    costs: CostModel = DEFAULT_COSTS,
    max_path_cost: float | None = None,
    max_hops: int | None = None,
    admit: Admit | None = None,
    duplicates: Mapping[UUID, Sequence[UUID]] | None = None,
    picker: Picker | None = None,
    prepared: PreparedSearch | None = None,
) -> Selection:
    """Take records in order of path cost while their tokens (``cost_of``: the rendered
    form with its delimiters) fit ``budget_tokens - fixed_overhead``, up to ``max_nodes``.
    Records that are not seeds and cost more than ``max_path_cost`` are dropped as below
    threshold (a seed answers to its source's own threshold). Paths have at most
    ``max_hops`` edges (the graph's radius): cheap edges must not chain a seed to a whole
    conversation. A record is expanded from its cheapest path only. ``admit`` replaces the
    budget rule (an agent's sections admit by their own). ``duplicates`` maps a record to
    its near-duplicates, most similar first: it is not taken once one of them is
    (``duplicate_content``), though paths still run through it. ``picker`` replaces path
    cost as the order records are offered in. ``prepared``: :func:`prepare_search` of the
    same graph, costs and ``max_hops``, made earlier and not used yet."""
    search = _Search(graph, costs, max_hops) if prepared is None else prepared.search
    outcome = _Outcome()
    seeds = list(seeds)
    for seed in seeds:
        if seed.record_id in graph.records:
            search.push_seed(seed, costs.seed_cost(seed))
    missing = dict.fromkeys(s.record_id for s in seeds if s.record_id not in graph.records)
    outcome.dropped.extend(Dropped(node, DropReason.not_loaded) for node in missing)
    taker = _Taker(
        outcome, cost_of, admit or BudgetLeft(budget_tokens - fixed_overhead), max_path_cost,
        _seed_scores(seeds), duplicates or {},
    )  # fmt: skip
    if picker is None:
        _walk(search, taker, max_nodes)
    else:
        _walk_picked(search, taker, max_nodes, picker)
    outcome.dropped.extend(_leftovers(search, outcome.stopped))
    used = fixed_overhead + sum(item.tokens for item in outcome.selected)
    return Selection(
        selected=outcome.selected,
        dropped=outcome.dropped,
        budget_tokens=budget_tokens,
        fixed_overhead=fixed_overhead,
        tokens_used=used,
        trigger_over_budget=outcome.trigger_over_budget,
    )


@dataclass(slots=True)
class _Taker:
    """Takes or drops one record at a time."""

    outcome: _Outcome
    cost_of: Callable[[UUID], int]
    admit: Admit
    max_path_cost: float | None
    seed_scores: Mapping[UUID, float]
    duplicates: Mapping[UUID, Sequence[UUID]]
    taken: set[UUID] = field(default_factory=set)

    def offer(self, path: _Path) -> bool:
        """Whether the record went into the context (else it is recorded as dropped)."""
        outcome, node = self.outcome, path.node
        too_far = self.max_path_cost is not None and path.cost > self.max_path_cost
        if too_far and node not in self.seed_scores:
            outcome.dropped.append(Dropped(node, DropReason.below_threshold, None, path.cost))
            return False
        twins = self.duplicates.get(node)
        twin = next((d for d in twins if d in self.taken), None) if twins else None
        if twin is not None:
            drop = Dropped(node, DropReason.duplicate_content, None, path.cost, twin)
            outcome.dropped.append(drop)
            return False
        tokens = self.cost_of(node)
        refused = self.admit(node, path.origin, tokens)
        if refused is not None:
            outcome.dropped.append(Dropped(node, refused, tokens, path.cost))
            if path.origin == TRIGGER_SOURCE and path.hops == 0:
                outcome.trigger_over_budget = True
            return False
        score = self.seed_scores.get(node)
        outcome.selected.append(
            Selected(node, path.origin, score, path.cost, tokens, path.via, path.hops)
        )
        self.taken.add(node)
        return True


def _walk(search: _Search, taker: _Taker, max_nodes: int) -> None:
    outcome = taker.outcome
    while (entry := search.pop()) is not None:
        path = search.path(entry)
        # Holds for every record popped later too, so the search ends here.
        if len(outcome.selected) >= max_nodes:
            outcome.stopped = DropReason.max_nodes
            outcome.dropped.append(Dropped(path.node, DropReason.max_nodes, None, path.cost))
            return
        taker.offer(path)
        search.expand(entry)


def _walk_picked(search: _Search, taker: _Taker, max_nodes: int, picker: Picker) -> None:
    """The whole search first, then the records in the picker's order."""
    paths: list[_Path] = []
    while (entry := search.pop()) is not None:
        paths.append(search.path(entry))
        search.expand(entry)
    picker.begin([(path.node, path.cost) for path in paths])
    outcome = taker.outcome
    while (index := picker.pick()) is not None:
        path = paths[index]
        if len(outcome.selected) >= max_nodes:
            outcome.dropped.append(Dropped(path.node, DropReason.max_nodes, None, path.cost))
        elif taker.offer(path):
            picker.taken(index)


def _leftovers(search: _Search, stopped: DropReason | None) -> list[Dropped]:
    """Loaded records the search did not reach or did not get to."""
    waiting = [n for n, done in enumerate(search.settled) if not done]
    waiting.sort(key=lambda n: (search.best[n], search.ids[n].int))
    return [
        Dropped(search.ids[n], stopped or DropReason.unreachable, None, _finite(search.best[n]))
        for n in waiting
    ]


def _finite(cost: float) -> float | None:
    return None if cost == float("inf") else cost / _SCALE


def _units(cost: float) -> int:
    return round(cost * _SCALE)


def _seed_scores(seeds: Iterable[Seed]) -> dict[UUID, float]:
    scores: dict[UUID, float] = {}
    for seed in seeds:
        scores[seed.record_id] = max(seed.score, scores.get(seed.record_id, 0.0))
    return scores
