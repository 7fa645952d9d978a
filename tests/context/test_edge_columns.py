"""Edges held as arrays (``EdgeColumns``: the in-memory walk's own, or made from ``Edge``
tuples by ``Graph``) select, cost and support exactly as the tuples they make say."""

from __future__ import annotations

import random

import numpy as np
from hypothesis import given, settings, strategies as st
from tests.context.helpers import record, rid

from cairn.context import DEFAULT_COSTS, EdgeType, Graph, Seed, select_within_budget
from cairn.context.model import EdgeColumns
from cairn.context.pathfinder import _Search, _units
from cairn.context.support import with_neighbour_support

# Weights as the adjacency stores them (float32), the edges of a clip included.
WEIGHTS = [0.0, 1.0, 0.5, 0.25, -0.1, 1.2, 0.7071067811865476]


def _case(rng: random.Random, n: int) -> tuple[Graph, Graph, list[Seed]]:
    """One graph twice: edges as arrays and as the tuples they make. Some ids are not
    loaded records (the far ends of a walk), some edges loop on one record."""
    ids = [rid(i) for i in range(1, n + 1)]
    records = {r.id: r for r in (record(i) for i in range(1, n + 1)) if rng.random() < 0.85}
    count = rng.randint(0, 4 * n)
    weights = [rng.choice([*WEIGHTS, rng.random()]) for _ in range(count)]
    columns = EdgeColumns(
        ids,
        np.array([rng.randrange(n) for _ in range(count)], np.intp),
        np.array([rng.randrange(n) for _ in range(count)], np.intp),
        np.array([rng.choice(list(EdgeType)).value for _ in range(count)], np.int8),
        np.array(weights, np.float32),
    )
    seeds = [
        Seed(rng.choice(ids), rng.choice(["trigger", "session", "semantic"]), rng.random())
        for _ in range(rng.randint(1, 6))
    ]
    return Graph(records, columns), Graph(records, tuple(columns)), seeds


def _linked_edge_by_edge(graph: Graph) -> list[list[tuple[int, int]]]:
    """The search's links made one ``Edge`` at a time with ``CostModel.edge_cost`` and
    Python's ``round``: the reference the arrays' costing must match to the unit."""
    search = _Search(Graph(graph.records), DEFAULT_COSTS)  # the numbering, no links
    at = search.index.get
    for edge in graph.edges:
        a, b = at(edge.from_id.int), at(edge.to_id.int)
        if a is not None and b is not None and a != b:
            step = _units(DEFAULT_COSTS.edge_cost(edge))
            search.adjacency[a].append((b, step))
            search.adjacency[b].append((a, step))
    return search.adjacency


@settings(max_examples=120, deadline=None)
@given(seed=st.integers(0, 100_000), n=st.integers(1, 40))
def test_arrays_and_tuples_link_the_same_steps(seed: int, n: int) -> None:
    held, made = _case(random.Random(seed), n)[:2]
    assert isinstance(held.edges, EdgeColumns) and isinstance(made.edges, EdgeColumns)
    assert tuple(made.edges) == tuple(held.edges)  # made from the tuples, given back
    reference = _linked_edge_by_edge(held)
    assert _Search(held, DEFAULT_COSTS).adjacency == reference
    assert _Search(made, DEFAULT_COSTS).adjacency == reference


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 100_000), n=st.integers(1, 40), budget=st.integers(0, 300))
def test_arrays_and_tuples_select_and_support_the_same(seed: int, n: int, budget: int) -> None:
    held, made, seeds = _case(random.Random(seed), n)

    def select(graph: Graph) -> object:
        return select_within_budget(
            seeds, graph, lambda _: 17, budget, max_nodes=n, fixed_overhead=0, max_hops=3
        )

    assert select(held) == select(made)
    assert with_neighbour_support(seeds, held, 0.3) == with_neighbour_support(seeds, made, 0.3)


def test_iterating_makes_the_edges_from_the_ids_given() -> None:
    ids = [rid(1), rid(2), rid(3)]
    columns = EdgeColumns(
        ids, np.array([0, 2]), np.array([1, 0]), np.array([3, 1], np.int8),
        np.array([0.5, 1.0], np.float32),
    )  # fmt: skip
    assert len(columns) == 2
    assert [(e.from_id, e.to_id, e.edge_type, e.weight) for e in columns] == [
        (rid(1), rid(2), EdgeType.semantic, 0.5),
        (rid(3), rid(1), EdgeType.temporal, 1.0),
    ]
    assert columns[1].from_id is ids[2]  # the given objects, not new UUIDs
