"""Ids and node numbers without a dict: the same answers as one, however the ids arrive."""

from __future__ import annotations

import random
import uuid
from typing import Any

import numpy as np
from asyncpg.pgproto.pgproto import UUID as DriverUUID

from cairn.context import node_ids
from cairn.context.node_ids import NodeIds, split


def _ids(rng: random.Random, n: int) -> list[uuid.UUID]:
    """Random ids, and ids sharing their high half (small ints, one shared prefix), which
    the sorted search must tell apart by the low half."""
    shared = rng.getrandbits(64) << 64
    kinds = (
        lambda: uuid.UUID(int=rng.getrandbits(128)),
        lambda: uuid.UUID(int=rng.randrange(1000)),
        lambda: uuid.UUID(int=shared | rng.getrandbits(64)),
    )
    return [rng.choice(kinds)() for _ in range(n)]


def test_one_by_one_and_in_bulk_agree_with_a_dict(monkeypatch: Any) -> None:
    monkeypatch.setattr(node_ids, "FOLD_AT", 7)  # folds between single interns too
    rng = random.Random(3)
    keys, expected = NodeIds(), {}
    for round_ in range(30):
        batch = _ids(rng, rng.randrange(1, 40))
        if round_ % 2:
            got = [keys.intern(i) for i in batch]
        else:
            got = keys.intern_keys(*split(batch)).tolist()
        for record_id, node in zip(batch, got, strict=True):
            assert expected.setdefault(record_id, node) == node  # an id keeps its node
    assert sorted(expected.values()) == list(range(len(expected)))  # one node per id
    assert keys.size == len(expected)
    probe = list(expected) + _ids(random.Random(99), 50)
    want = [expected.get(i, -1) for i in probe]
    assert keys.nodes(probe).tolist() == want
    assert [keys.get(i) for i in probe] == [None if w < 0 else w for w in want]
    keys.fold()
    assert keys.nodes(probe).tolist() == want
    nodes = np.array(list(expected.values()))
    back = keys.record_ids(nodes)
    assert back == list(expected)
    assert all(type(i) is DriverUUID for i in back)
