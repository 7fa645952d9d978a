"""Neighbour support: semantic seeds beside other relevant records gain a share of their score."""

from __future__ import annotations

import random

from tests.context.helpers import graph, record, rid

from cairn.context import EdgeType, Seed
from cairn.context.support import with_neighbour_support

TEMPORAL, TAG, SEMANTIC = EdgeType.temporal, EdgeType.tag, EdgeType.semantic


def semantic(n: int, score: float) -> Seed:
    return Seed(rid(n), "semantic", score, f"similarity {score}")


def scores(seeds: list[Seed]) -> dict[int, float]:
    return {seed.record_id.int: round(seed.score, 6) for seed in seeds}


def test_a_seed_gains_a_share_of_its_best_temporal_neighbour() -> None:
    seeds = [semantic(1, 0.5), semantic(2, 0.8), semantic(3, 0.4), semantic(4, 0.7)]
    g = graph([record(n) for n in range(1, 5)], [(1, 2, TEMPORAL, 1.0), (2, 3, TEMPORAL, 1.0)])
    supported = with_neighbour_support(seeds, g, 0.1)
    # 1 and 3 are beside 2 (0.8); 2 is beside 1 and 3 and takes the better, 0.5; 4 is alone
    assert scores(supported) == {1: 0.58, 2: 0.85, 3: 0.48, 4: 0.7}
    assert [s.record_id for s in supported] == [s.record_id for s in seeds]
    assert supported[0].detail == f"similarity 0.5; +0.080 beside {rid(2)}"
    assert supported[3] == seeds[3]


def test_gains_do_not_feed_each_other() -> None:
    # A chain of equal seeds: each gains from its neighbours' own scores, once.
    seeds = [semantic(n, 0.5) for n in range(1, 6)]
    edges = [(n, n + 1, TEMPORAL, 1.0) for n in range(1, 5)]
    supported = with_neighbour_support(seeds, graph([record(n) for n in range(1, 6)], edges), 0.2)
    assert set(scores(supported).values()) == {0.6}


def test_only_temporal_edges_between_semantic_seeds_count() -> None:
    seeds = [
        semantic(1, 0.5),
        Seed(rid(2), "session", 1.0),
        semantic(3, 0.5),
        semantic(4, 0.9),
        Seed(rid(5), "trigger", 1.0),
    ]
    edges = [
        (1, 2, TEMPORAL, 1.0),  # a session seed gives no support
        (3, 4, TAG, 1.0),  # nor does a tag edge
        (4, 3, SEMANTIC, 0.99),  # or a semantic one
        (5, 4, TEMPORAL, 1.0),  # the trigger neither gives nor gets
        (1, 6, TEMPORAL, 1.0),  # a neighbour that is not a seed scores nothing
    ]
    g = graph([record(n) for n in range(1, 7)], edges)
    assert with_neighbour_support(seeds, g, 0.1) == seeds


def test_the_score_is_capped_at_one_and_weight_zero_changes_nothing() -> None:
    seeds = [semantic(1, 0.95), semantic(2, 0.9)]
    g = graph([record(1), record(2)], [(1, 2, TEMPORAL, 1.0)])
    assert scores(with_neighbour_support(seeds, g, 0.5)) == {1: 1.0, 2: 1.0}
    assert with_neighbour_support(seeds, g, 0.0) == seeds


def test_the_result_does_not_depend_on_the_order_of_edges() -> None:
    seeds = [semantic(1, 0.5), semantic(2, 0.6), semantic(3, 0.6)]
    edges = [(1, 2, TEMPORAL, 1.0), (3, 1, TEMPORAL, 1.0), (2, 1, TEMPORAL, 1.0)]
    results = set()
    for _ in range(10):
        random.shuffle(edges)
        g = graph([record(n) for n in (1, 2, 3)], edges)
        results.add(tuple(s.detail for s in with_neighbour_support(seeds, g, 0.1)))
    assert len(results) == 1
