"""Ranking beyond path cost: near-duplicates left out but walked through, the relevance
floor for graph-derived records, and the MMR order (context.ranking, the pathfinder)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from uuid import UUID

import numpy as np
from hypothesis import given, settings, strategies as st
from tests.context.helpers import graph, record, rid
from tests.context.test_pathfinder import (
    CAUSAL,
    TEMPORAL,
    TRIGGER,
    order,
    random_case,
    select,
    tokens,
)

from cairn.context import DropReason, Seed, Selection
from cairn.context.agents import Agent, Ranking, parse_agent
from cairn.context.ranking import Embeddings, MaximalMarginalRelevance, near_duplicates


def embeddings(vectors: dict[int, Sequence[float]]) -> Embeddings:
    ids = sorted(vectors)
    unit = np.array([vectors[n] for n in ids], dtype=np.float32)
    unit /= np.linalg.norm(unit, axis=1, keepdims=True)
    return Embeddings({rid(n): row for row, n in enumerate(ids)}, unit)


def dropped(selection: Selection) -> dict[int, DropReason]:
    return {item.record_id.int: item.reason for item in selection.dropped}


# Near-duplicates in the pathfinder


def test_the_costlier_of_two_duplicates_is_left_out_naming_the_other() -> None:
    g = graph([record(n) for n in (1, 2, 3)], [(1, 2, CAUSAL, 1.0), (1, 3, TEMPORAL, 1.0)])
    result = select(g, [TRIGGER], duplicates={rid(2): (rid(3),), rid(3): (rid(2),)})
    assert order(result) == [1, 2]
    [twin] = result.dropped
    assert (twin.record_id, twin.reason, twin.duplicate_of) == (
        rid(3),
        DropReason.duplicate_content,
        rid(2),
    )
    assert twin.path_cost == 0.5


def test_paths_run_through_a_left_out_duplicate() -> None:
    # 4 is reachable only through 3, the duplicate of 2.
    g = graph(
        [record(n) for n in (1, 2, 3, 4)],
        [(1, 2, CAUSAL, 1.0), (1, 3, TEMPORAL, 1.0), (3, 4, CAUSAL, 1.0)],
    )
    result = select(g, [TRIGGER], duplicates={rid(2): (rid(3),), rid(3): (rid(2),)})
    assert order(result) == [1, 2, 4]
    assert dropped(result) == {3: DropReason.duplicate_content}
    four = result.selected[-1]
    assert (four.via, four.hops) == (rid(3), 2)


def test_the_duplicate_of_a_record_too_large_for_the_budget_is_taken() -> None:
    g = graph([record(n) for n in (1, 2, 3)], [(1, 2, CAUSAL, 1.0), (1, 3, TEMPORAL, 1.0)])
    result = select(
        g,
        [TRIGGER],
        budget=100,
        cost=tokens({2: 500}),
        duplicates={rid(2): (rid(3),), rid(3): (rid(2),)},
    )
    assert order(result) == [1, 3]
    assert dropped(result) == {2: DropReason.over_budget}


def test_the_most_similar_record_taken_is_named() -> None:
    g = graph(
        [record(n) for n in (1, 2, 3, 4)],
        [(1, 2, CAUSAL, 1.0), (1, 3, CAUSAL, 1.0), (1, 4, TEMPORAL, 1.0)],
    )
    # 4 resembles 3 more than 2; both are taken before it (newer first at equal cost).
    result = select(g, [TRIGGER], duplicates={rid(4): (rid(3), rid(2))})
    assert order(result) == [1, 3, 2]
    assert [d.duplicate_of for d in result.dropped] == [rid(3)]


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 40), budget=st.integers(0, 400))
def test_no_two_records_taken_are_duplicates_and_every_record_is_accounted_for(
    seed: int, n: int, budget: int
) -> None:
    rng = random.Random(seed)
    g, seeds = random_case(rng, n)
    pairs = {tuple(sorted(rng.sample(range(1, n + 1), 2))) for _ in range(n // 2)}
    twins: dict[UUID, list[UUID]] = {}
    for a, b in pairs:
        twins.setdefault(rid(a), []).append(rid(b))
        twins.setdefault(rid(b), []).append(rid(a))
    cost = tokens({i: rng.randint(1, 60) for i in range(1, n + 1)})
    result = select(g, seeds, budget=budget, cost=cost, duplicates=twins)
    taken = {item.record_id for item in result.selected}
    assert not any(twins.get(node, ()) and set(twins[node]) & taken for node in taken)
    for item in result.dropped:
        if item.reason is DropReason.duplicate_content:
            assert item.duplicate_of in taken and item.duplicate_of in twins[item.record_id]
    left = [item.record_id for item in result.dropped]
    assert taken | set(left) == set(g.records) and not taken & set(left)
    assert result.tokens_used <= max(budget, 0)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 40), budget=st.integers(0, 400))
def test_without_duplicates_the_selection_is_unchanged(seed: int, n: int, budget: int) -> None:
    rng = random.Random(seed)
    g, seeds = random_case(rng, n)
    cost = tokens({i: rng.randint(1, 60) for i in range(1, n + 1)})
    plain = select(g, seeds, budget=budget, cost=cost)
    assert select(g, seeds, budget=budget, cost=cost, duplicates={}) == plain


# The relevance floor


def test_max_path_cost_leaves_out_graph_records_but_not_seeds() -> None:
    g = graph(
        [record(n) for n in (1, 2, 3, 4)],
        [(2, 3, TEMPORAL, 1.0), (3, 4, CAUSAL, 1.0)],
    )
    weak = Seed(rid(2), "semantic", 0.2)  # costs 0.8, above the floor
    result = select(g, [TRIGGER, weak], max_path_cost=0.6)
    assert order(result) == [1, 2]
    # Beyond the floor is beyond it for everything further along the path, too.
    assert dropped(result) == {3: DropReason.below_threshold, 4: DropReason.below_threshold}
    assert [round(d.path_cost or 0, 6) for d in result.dropped] == [1.3, 1.4]


def test_a_graph_record_within_the_floor_is_taken() -> None:
    g = graph([record(n) for n in (1, 2, 3)], [(1, 2, CAUSAL, 1.0), (2, 3, TEMPORAL, 1.0)])
    assert order(select(g, [TRIGGER], max_path_cost=0.6)) == [1, 2, 3]  # 3 at exactly 0.6
    assert order(select(g, [TRIGGER], max_path_cost=0.59)) == [1, 2]


# MMR


def mmr(vectors: dict[int, Sequence[float]], weight: float) -> MaximalMarginalRelevance:
    return MaximalMarginalRelevance(embeddings(vectors), weight)


def test_mmr_takes_a_different_record_before_a_near_copy_of_one_taken() -> None:
    g = graph([record(n) for n in (1, 2, 3, 4)], [])
    seeds = [
        TRIGGER,
        Seed(rid(2), "semantic", 0.9),
        Seed(rid(3), "semantic", 0.85),  # nearly 2
        Seed(rid(4), "semantic", 0.6),  # unlike 2
    ]
    vectors = {2: [1.0, 0.0], 3: [1.0, 0.05], 4: [0.0, 1.0]}
    assert order(select(g, seeds)) == [1, 2, 3, 4]
    # 3: 0.5 * 0.85 - 0.5 * 0.999 < 4: 0.5 * 0.6 - 0.
    assert order(select(g, seeds, picker=mmr(vectors, 0.5))) == [1, 2, 4, 3]
    assert order(select(g, seeds, picker=mmr(vectors, 0.9))) == [1, 2, 3, 4]


def test_a_record_offered_but_too_large_does_not_count_as_taken() -> None:
    g = graph([record(n) for n in (1, 2, 3, 4)], [])
    seeds = [
        TRIGGER,
        Seed(rid(2), "semantic", 0.9),  # too large
        Seed(rid(3), "semantic", 0.85),  # nearly 2
        Seed(rid(4), "semantic", 0.6),
    ]
    vectors = {2: [1.0, 0.0], 3: [1.0, 0.05], 4: [0.0, 1.0]}
    result = select(g, seeds, budget=100, cost=tokens({2: 500}), picker=mmr(vectors, 0.5))
    assert order(result) == [1, 3, 4]


def naive_mmr(
    relevance: Sequence[float], vectors: np.ndarray, weight: float, fits: Sequence[bool]
) -> list[int]:
    """The textbook greedy: an argmax over every open record at every step."""
    open_ = list(range(len(relevance)))
    taken: list[int] = []
    offered: list[int] = []
    while open_:

        def score(i: int) -> float:
            redundancy = max((float(vectors[i] @ vectors[t]) for t in taken), default=0.0)
            return weight * relevance[i] - (1 - weight) * redundancy

        best = max(open_, key=lambda i: (score(i), -i))
        open_.remove(best)
        offered.append(best)
        if fits[best]:
            taken.append(best)
    return offered


@settings(max_examples=80, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(1, 25),
    weight=st.sampled_from([0.0, 0.3, 0.5, 0.7, 1.0]),
)
def test_the_picker_offers_in_the_textbook_greedy_order(seed: int, n: int, weight: float) -> None:
    rng = np.random.default_rng(seed)
    raw = {i: rng.normal(size=4).tolist() for i in range(1, n + 1)}
    costs = sorted(float(c) for c in rng.uniform(0, 2, size=n))
    fits = [bool(f) for f in rng.random(n) < 0.7]
    picker = mmr(raw, weight)
    picker.begin([(rid(i), costs[i - 1]) for i in range(1, n + 1)])
    offered: list[int] = []
    while (index := picker.pick()) is not None:
        offered.append(index)
        if fits[index]:
            picker.taken(index)
    unit = picker.embeddings.rows([rid(i) for i in range(1, n + 1)])
    assert offered == naive_mmr([1 - c for c in costs], unit, weight, fits)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 40), budget=st.integers(0, 400))
def test_mmr_at_lambda_one_is_path_cost_order(seed: int, n: int, budget: int) -> None:
    rng = random.Random(seed)
    g, seeds = random_case(rng, n)
    cost = tokens({i: rng.randint(1, 60) for i in range(1, n + 1)})
    vectors = {i: [rng.random(), rng.random(), rng.random()] for i in range(1, n + 1)}
    plain = select(g, seeds, budget=budget, cost=cost, max_nodes=n // 2 + 1)
    picked = select(
        g, seeds, budget=budget, cost=cost, max_nodes=n // 2 + 1, picker=mmr(vectors, 1.0)
    )
    assert picked.selected == plain.selected
    assert sorted(d.record_id.int for d in picked.dropped) == sorted(
        d.record_id.int for d in plain.dropped
    )


# Near-duplicate pairs


def test_near_duplicates_are_pairs_at_or_above_the_threshold_most_similar_first() -> None:
    found = near_duplicates(
        embeddings({1: [1.0, 0.0], 2: [1.0, 0.1], 3: [1.0, 0.2], 4: [0.0, 1.0]}), 0.98
    )
    # cos(2,3) ≈ 0.99523 > cos(1,2) ≈ 0.99504 > cos(1,3) ≈ 0.981; 4 resembles none.
    assert found == {
        rid(1): (rid(2), rid(3)),
        rid(2): (rid(3), rid(1)),
        rid(3): (rid(2), rid(1)),
    }
    assert near_duplicates(embeddings({1: [1.0, 0.0], 2: [1.0, 0.1]}), 0.999) == {}


# The agent option


def agent_with(**context: object) -> Agent | None:
    return parse_agent(rid(1), rid(2), {"agent_id": "a", "context_trigger": {}, **context})


def test_every_option_is_off_unless_set() -> None:
    default = Ranking(duplicate_similarity=None, mmr_lambda=None, max_path_cost=None)
    assert (agent := agent_with()) is not None and agent.ranking == default
    assert (agent := agent_with(ranking={})) is not None and agent.ranking == default
    assert not default.compares_content
    asked = agent_with(ranking={"duplicate_similarity": 0.9})
    assert asked is not None and asked.ranking == Ranking(0.9, None, None)
    set_ = {"duplicate_similarity": None, "mmr_lambda": 0.7, "max_path_cost": 1}
    assert (agent := agent_with(ranking=set_)) is not None
    assert agent.ranking == Ranking(None, 0.7, 1.0)
    assert not Ranking(None, None, 0.5).compares_content


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 30), copies=st.integers(1, 4))
def test_near_duplicates_are_every_pair_above_the_threshold(seed: int, n: int, copies: int) -> None:
    rng = np.random.default_rng(seed)
    base = rng.normal(size=(n, 6))
    noisy = np.repeat(base, copies, axis=0) + rng.normal(scale=0.1, size=(n * copies, 6))
    found = near_duplicates(embeddings(dict(enumerate(noisy.tolist(), start=1))), 0.95)
    unit = embeddings(dict(enumerate(noisy.tolist(), start=1))).unit
    similarity = unit @ unit.T
    expected: dict[UUID, tuple[UUID, ...]] = {}
    for a in range(len(unit)):
        twins = sorted(
            (-float(similarity[a, b]), b)
            for b in range(len(unit))
            if b != a and similarity[a, b] >= np.float32(0.95)
        )
        if twins:
            expected[rid(a + 1)] = tuple(rid(b + 1) for _, b in twins)
    assert found == expected
