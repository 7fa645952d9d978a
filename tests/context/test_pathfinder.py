"""Token-aware multi-source Dijkstra: order, skip-not-stop, limits, determinism, trigger."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from uuid import UUID

from hypothesis import given, settings, strategies as st
from tests.context.helpers import graph, record, rid

from cairn.context import (
    DEFAULT_COSTS,
    CostModel,
    DropReason,
    Edge,
    EdgeType,
    Graph,
    Seed,
    Selection,
    select_within_budget,
)

CAUSAL, TEMPORAL, TAG, SEMANTIC = (
    EdgeType.causal,
    EdgeType.temporal,
    EdgeType.tag,
    EdgeType.semantic,
)
TRIGGER = Seed(rid(1), "trigger", 1.0, "the trigger")
# The tests below reason about fixed edge costs (causal 0.1, tag 0.3, temporal 0.5, a
# semantic edge exactly 1 - similarity), not about the tuned defaults.
COSTS = CostModel(causal=0.1, tag=0.3, temporal=0.5, semantic=0.0)


def tokens(table: Mapping[int, int], default: int = 10) -> Callable[[UUID], int]:
    return lambda record_id: table.get(record_id.int, default)


def select(
    g: Graph,
    seeds: list[Seed],
    budget: int = 10_000,
    cost: Callable[[UUID], int] | None = None,
    **kwargs: object,
) -> Selection:
    options: dict[str, object] = {
        "max_nodes": 100, "fixed_overhead": 0, "costs": COSTS, **kwargs,
    }  # fmt: skip
    return select_within_budget(seeds, g, cost or tokens({}), budget, **options)  # type: ignore[arg-type]


def order(selection: Selection) -> list[int]:
    return [item.record_id.int for item in selection.selected]


def test_records_are_taken_by_path_cost_from_every_seed_both_directions() -> None:
    g = graph(
        [record(n) for n in range(1, 6)],
        [
            (1, 2, CAUSAL, 1.0),  # 2 at 0.1
            (3, 1, TAG, 1.0),  # an edge *into* the trigger: 3 at 0.3
            (4, 5, TEMPORAL, 1.0),  # 5 at 0.2 + 0.5
        ],
    )
    result = select(g, [TRIGGER, Seed(rid(4), "semantic", 0.8, "similar")])
    assert order(result) == [1, 2, 4, 3, 5]
    costs = {item.record_id.int: round(item.path_cost, 6) for item in result.selected}
    assert costs == {1: 0.0, 2: 0.1, 4: 0.2, 3: 0.3, 5: 0.7}
    five = result.selected[-1]
    assert (five.source, five.via, five.hops, five.seed_score) == (
        "semantic",
        rid(4),
        1,
        None,
    )


def test_a_semantic_edge_costs_one_minus_its_similarity() -> None:
    g = graph([record(1), record(2), record(3)], [(1, 2, SEMANTIC, 0.9), (1, 3, TAG, 1.0)])
    result = select(g, [TRIGGER])
    assert order(result) == [1, 2, 3]
    assert round(result.selected[1].path_cost, 6) == 0.1


def test_a_semantic_edge_adds_the_base_cost_to_one_minus_its_similarity() -> None:
    edge = Edge(rid(1), rid(2), SEMANTIC, 0.9)
    assert round(CostModel(semantic=0.3).edge_cost(edge), 6) == 0.4
    assert round(CostModel(semantic=0.3).edge_cost(edge._replace(weight=-0.5)), 6) == 1.3


def test_a_cheaper_path_through_the_graph_beats_a_record_own_seed_cost() -> None:
    g = graph([record(1), record(2)], [(1, 2, CAUSAL, 1.0)])
    result = select(g, [TRIGGER, Seed(rid(2), "semantic", 0.3)])
    reached = result.selected[1]
    assert (reached.source, reached.via, reached.hops) == ("trigger", rid(1), 1)
    assert reached.seed_score == 0.3  # still reported: the record is a seed as well


def test_a_record_that_does_not_fit_is_skipped_and_the_search_goes_on() -> None:
    g = graph(
        [record(n) for n in range(1, 6)],
        [(1, 2, CAUSAL, 1.0), (2, 3, CAUSAL, 1.0), (1, 4, TAG, 1.0), (1, 5, TEMPORAL, 1.0)],
    )
    result = select(g, [TRIGGER], budget=100, cost=tokens({2: 1000}))
    assert order(result) == [1, 3, 4, 5]  # 3 is reached *through* the skipped record 2
    assert [(d.record_id.int, d.reason, d.tokens) for d in result.dropped] == [
        (2, DropReason.over_budget, 1000)
    ]
    assert result.tokens_used == 40


def test_smaller_records_fill_the_room_a_large_one_leaves() -> None:
    g = graph(
        [record(n) for n in range(1, 5)], [(1, 2, CAUSAL, 1), (1, 3, TAG, 1), (1, 4, TEMPORAL, 1)]
    )
    result = select(g, [TRIGGER], budget=50, cost=tokens({1: 10, 2: 30, 3: 30, 4: 10}))
    assert order(result) == [1, 2, 4]
    assert result.dropped[0].record_id == rid(3)


def test_fixed_overhead_is_taken_from_the_budget() -> None:
    g = graph([record(1), record(2)], [(1, 2, CAUSAL, 1.0)])
    result = select(g, [TRIGGER], budget=25, fixed_overhead=10)
    assert order(result) == [1]
    assert result.tokens_used == 20


def test_max_nodes_ends_the_search_and_names_the_rest() -> None:
    g = graph([record(n) for n in range(1, 6)], [(1, n, TAG, 1.0) for n in range(2, 6)])
    result = select(g, [TRIGGER], max_nodes=3)
    assert order(result) == [1, 5, 4]  # equal costs: newest first
    assert [d.record_id.int for d in result.dropped] == [3, 2]
    assert all(d.reason is DropReason.max_nodes for d in result.dropped)
    assert all(d.path_cost == 0.3 for d in result.dropped)


def test_max_path_cost_drops_the_far_ones_as_below_threshold() -> None:
    g = graph([record(1), record(2), record(3)], [(1, 2, CAUSAL, 1.0), (2, 3, TEMPORAL, 1.0)])
    result = select(g, [TRIGGER], max_path_cost=0.5)
    assert order(result) == [1, 2]
    assert [(d.record_id.int, d.reason) for d in result.dropped] == [
        (3, DropReason.below_threshold)
    ]


def test_paths_end_at_max_hops_however_cheap_the_edges() -> None:
    chain = [(n, n + 1, TEMPORAL, 1.0) for n in range(1, 6)]
    g = graph([record(n) for n in range(1, 7)], chain)
    cheap = CostModel(temporal=0.01)
    assert order(select(g, [TRIGGER], costs=cheap, max_hops=2)) == [1, 2, 3]
    assert order(select(g, [TRIGGER], costs=cheap)) == [1, 2, 3, 4, 5, 6]


def test_the_trigger_comes_first_even_against_a_perfect_semantic_match() -> None:
    g = graph([record(1), record(2)])
    result = select(g, [Seed(rid(2), "semantic", 1.0), TRIGGER])
    assert order(result) == [1, 2]
    assert result.trigger_id == rid(1)


def test_a_trigger_larger_than_the_budget_is_reported_not_fatal() -> None:
    g = graph([record(1), record(2)], [(1, 2, CAUSAL, 1.0)])
    result = select(g, [TRIGGER], budget=50, cost=tokens({1: 500}))
    assert result.trigger_over_budget
    assert result.trigger_id is None
    assert order(result) == [2]
    assert result.dropped[0].record_id == rid(1)
    assert result.dropped[0].reason is DropReason.over_budget


def test_seeds_missing_from_the_graph_and_unreachable_records_are_named() -> None:
    g = graph([record(1), record(9)])
    result = select(g, [TRIGGER, Seed(rid(7), "always")])
    assert order(result) == [1]
    reasons = {(d.record_id.int, d.reason) for d in result.dropped}
    assert reasons == {(7, DropReason.not_loaded), (9, DropReason.unreachable)}


def test_a_record_seeded_twice_is_taken_once_from_its_cheapest_seed() -> None:
    g = graph([record(1), record(2)])
    seeds = [TRIGGER, Seed(rid(2), "session", 0.2), Seed(rid(2), "semantic", 0.9)]
    result = select(g, seeds)
    assert order(result) == [1, 2]
    second = result.selected[1]
    assert (second.source, second.seed_score) == ("semantic", 0.9)


def test_seed_costs_follow_source_and_score() -> None:
    assert DEFAULT_COSTS.seed_cost(TRIGGER) == 0.0
    assert DEFAULT_COSTS.seed_cost(Seed(rid(2), "always", 1.0)) == 0.05
    assert DEFAULT_COSTS.seed_cost(Seed(rid(2), "session", 1.0)) == 0.02
    assert round(DEFAULT_COSTS.seed_cost(Seed(rid(2), "always", 0.5)), 6) == 0.3
    assert round(DEFAULT_COSTS.seed_cost(Seed(rid(2), "semantic", 0.75)), 6) == 0.25


def test_equal_costs_break_by_source_then_newest_then_id() -> None:
    g = graph(
        [record(1), record(2), record(3), record(4), record(5, created_at=record(4).created_at)]
    )
    seeds = [
        TRIGGER,
        Seed(rid(2), "session", 1.0),  # 0.02
        Seed(rid(3), "semantic", 0.98),  # 0.02, but semantic ranks before session
        Seed(rid(4), "session", 1.0),  # 0.02, newer than 2
        Seed(rid(5), "session", 1.0),  # same time as 4: id decides
    ]
    assert order(select(g, seeds)) == [1, 3, 4, 5, 2]


def random_case(rng: random.Random, n: int) -> tuple[Graph, list[Seed]]:
    records = [record(i, created_at=record(rng.randint(1, 5)).created_at) for i in range(1, n + 1)]
    edges = [
        (
            rng.randint(1, n),
            rng.randint(1, n),
            rng.choice(list(EdgeType)),
            rng.choice([0.6, 0.7, 0.9]),
        )
        for _ in range(n * 2)
    ]
    sources = ["always", "session", "semantic"]
    seeds = [TRIGGER] + [
        Seed(rid(rng.randint(2, n)), rng.choice(sources), rng.choice([0.5, 0.8, 1.0]))
        for _ in range(n // 4)
    ]
    return graph(records, edges), seeds


def shuffled(g: Graph, seeds: list[Seed], rng: random.Random) -> tuple[Graph, list[Seed]]:
    items = list(g.records.items())
    rng.shuffle(items)
    edges = list(g.edges)
    rng.shuffle(edges)
    seeds = list(seeds)
    rng.shuffle(seeds)
    return Graph(dict(items), tuple(edges)), seeds


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 40), budget=st.integers(0, 400))
def test_the_result_does_not_depend_on_input_order(seed: int, n: int, budget: int) -> None:
    rng = random.Random(seed)
    g, seeds = random_case(rng, n)
    cost = tokens({i: rng.randint(1, 60) for i in range(1, n + 1)})
    first = select(g, seeds, budget=budget, cost=cost, max_nodes=n // 2 + 1)
    for _ in range(3):
        g2, seeds2 = shuffled(g, seeds, rng)
        assert select(g2, seeds2, budget=budget, cost=cost, max_nodes=n // 2 + 1) == first


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 40), budget=st.integers(0, 400))
def test_the_budget_holds_and_every_candidate_is_accounted_for(
    seed: int, n: int, budget: int
) -> None:
    rng = random.Random(seed)
    g, seeds = random_case(rng, n)
    result = select(
        g, seeds, budget=budget, cost=tokens({i: rng.randint(1, 60) for i in range(1, n + 1)})
    )
    assert result.tokens_used <= max(budget, 0)
    taken = [item.record_id for item in result.selected]
    left = [item.record_id for item in result.dropped]
    assert len(set(taken)) == len(taken)
    assert set(taken) | set(left) == set(g.records)
    assert not set(taken) & set(left)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 30))
def test_path_costs_are_shortest_paths(seed: int, n: int) -> None:
    rng = random.Random(seed)
    g, seeds = random_case(rng, n)
    result = select(g, seeds)
    expected = bellman_ford(g, seeds)
    assert {i.record_id: round(i.path_cost, 6) for i in result.selected} == {
        node: round(cost, 6) for node, cost in expected.items()
    }
    costs = [item.path_cost for item in result.selected]
    assert costs == sorted(costs)


def bellman_ford(g: Graph, seeds: list[Seed]) -> dict[UUID, float]:
    dist = {s.record_id: COSTS.seed_cost(s) for s in seeds}
    for s in seeds:
        dist[s.record_id] = min(dist[s.record_id], COSTS.seed_cost(s))
    for _ in range(len(g.records)):
        for edge in g.edges:
            if edge.from_id == edge.to_id:
                continue
            step = COSTS.edge_cost(edge)
            for a, b in ((edge.from_id, edge.to_id), (edge.to_id, edge.from_id)):
                if a in dist and dist[a] + step < dist.get(b, float("inf")):
                    dist[b] = dist[a] + step
    return dist
