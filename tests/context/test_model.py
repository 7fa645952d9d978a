"""The shared vocabulary: seeds validate their score; the graph walks edges both ways."""

from __future__ import annotations

import pytest
from tests.context.helpers import graph, record, rid

from cairn.context import EdgeType, Seed


def test_a_seed_score_outside_zero_to_one_is_refused() -> None:
    with pytest.raises(ValueError, match=r"0\.\.1"):
        Seed(rid(1), "semantic", 1.5)


def test_neighbours_follow_edges_in_both_directions() -> None:
    g = graph(
        [record(1), record(2), record(3)],
        [(1, 2, EdgeType.causal, 1.0), (3, 1, EdgeType.tag, 1.0), (1, 1, EdgeType.tag, 1.0)],
    )
    assert [(other.int, edge.edge_type) for other, edge in g.neighbours(rid(1))] == [
        (2, EdgeType.causal),
        (3, EdgeType.tag),
    ]
    assert [other.int for other, _ in g.neighbours(rid(2))] == [1]


def test_edges_to_records_not_loaded_are_not_walked() -> None:
    g = graph([record(1)], [(1, 9, EdgeType.causal, 1.0)])
    assert g.neighbours(rid(1)) == []


def test_session_tags() -> None:
    item = record(1, tags=("user:message", "session:a", "session:b"))
    assert item.session_tags == frozenset({"session:a", "session:b"})
