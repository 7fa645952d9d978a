"""The graph's candidate cap: the seeds plus the records nearest to them by path cost."""

from __future__ import annotations

from tests.context.helpers import rid

from cairn.context import EdgeType
from cairn.context.graph import Step, edge_steps, nearest


def _edges(*pairs: tuple[int, int, EdgeType, float]) -> list[Step]:
    return edge_steps([(rid(a), rid(b), kind.value, weight) for a, b, kind, weight in pairs])


def test_keeps_the_seeds_and_the_cheapest_paths_first() -> None:
    # 1 is the seed: 2 by a causal edge (0.1), 3 by a tag edge (0.3), 4 beyond 2 (0.1 + 0.5),
    # 5 by a weak semantic edge (1 - 0.2 = 0.8).
    edges = _edges(
        (1, 2, EdgeType.causal, 1.0),
        (3, 1, EdgeType.tag, 1.0),
        (2, 4, EdgeType.temporal, 1.0),
        (1, 5, EdgeType.semantic, 0.2),
    )
    starts = {rid(1): 0.0}
    assert nearest(starts, edges, 2) == {rid(1), rid(2), rid(3)}
    assert nearest(starts, edges, 3) == {rid(1), rid(2), rid(3), rid(4)}


def test_seed_costs_count_and_every_seed_stays() -> None:
    edges = _edges((1, 3, EdgeType.causal, 1.0), (2, 4, EdgeType.causal, 1.0))
    starts = {rid(1): 0.0, rid(2): 0.9}  # 3 costs 0.1, 4 costs 1.0
    assert nearest(starts, edges, 1) == {rid(1), rid(2), rid(3)}


def test_equal_costs_are_cut_by_id() -> None:
    edges = _edges(*[(1, n, EdgeType.tag, 1.0) for n in (9, 7, 8)])
    assert nearest({rid(1): 0.0}, edges, 2) == {rid(1), rid(7), rid(8)}
