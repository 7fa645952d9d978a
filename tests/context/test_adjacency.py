"""The adjacency arrays: lists in the walk's order, replaced lists, and compaction."""

from __future__ import annotations

import random
import uuid

from cairn.context.adjacency import Adjacency, EdgeRow


def _ids(n: int) -> list[uuid.UUID]:
    return [uuid.UUID(int=random.Random(i).getrandbits(128)) for i in range(n)]


def _lists(adjacency: Adjacency, ids: list[uuid.UUID]) -> dict[uuid.UUID, tuple[list, list]]:  # type: ignore[type-arg]
    found = {}
    for record_id in ids:
        node = adjacency.node(record_id)
        assert node is not None
        out, into = adjacency.outgoing(node), adjacency.incoming(node)
        found[record_id] = tuple(
            [
                (f, int(k), float(w))
                for f, k, w in zip(adjacency.record_ids(ends), kinds, weights, strict=True)
            ]
            for ends, kinds, weights in (out, into)
        )
    return found


def test_each_list_is_in_the_walks_order() -> None:
    """Type first, then weight descending, then the far end's id as PostgreSQL sorts uuids."""
    a, *others = _ids(6)
    edges: list[EdgeRow] = [(a, b, 3, 0.5) for b in others] + [(a, others[0], 0, 1.0)]
    adjacency = Adjacency()
    adjacency.build(edges)
    out = _lists(adjacency, [a])[a][0]
    assert out[0] == (others[0], 0, 1.0)
    assert [far for far, _, _ in out[1:]] == sorted(others, key=lambda u: u.bytes)


def test_replaced_lists_and_compaction_agree_with_a_fresh_build() -> None:
    rng = random.Random(7)
    ids = _ids(30)
    edges = {(rng.choice(ids), rng.choice(ids), rng.randrange(4)): rng.choice([0.5, 1.0])
             for _ in range(120)}  # fmt: skip
    adjacency = Adjacency()
    adjacency.build([(*key, w) for key, w in edges.items()])
    for key in rng.sample(sorted(edges), 30):
        del edges[key]
    extra = _ids(35)[30:]
    for _ in range(40):
        edges[(rng.choice(ids + extra), rng.choice(ids + extra), rng.randrange(4))] = 0.25
    touched = ids + extra  # every record's lists read again
    adjacency.replace_lists(touched, [(*key, w) for key, w in edges.items()])
    fresh = Adjacency()
    fresh.build([(*key, w) for key, w in edges.items()])
    expected = _lists(fresh, [i for i in touched if fresh.node(i) is not None])
    assert _lists(adjacency, list(expected)) == expected
    adjacency.compact()
    assert adjacency.overlay_size == 0
    assert _lists(adjacency, list(expected)) == expected


def test_cut_ties_counts_caps_that_fall_inside_equal_type_and_weight() -> None:
    hub, *leaves = _ids(5)
    adjacency = Adjacency()
    adjacency.build([(hub, leaf, 2, 1.0) for leaf in leaves[:3]] + [(hub, leaves[3], 3, 0.5)])
    assert adjacency.cut_ties(2) == (1, 1)  # entries 2 and 3: both tag edges of weight 1
    assert adjacency.cut_ties(3) == (0, 1)  # entries 3 and 4: a tag and a semantic edge
