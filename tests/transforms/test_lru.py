"""The LRU map, by batches or one key at a time, holds what a plain model of it holds: the
same values found, the same entries kept, in the same order of use."""

from __future__ import annotations

from hypothesis import given, strategies as st

from cairn.transforms.cache import LRU

PAIRS = st.lists(st.tuples(st.integers(0, 12), st.integers()), max_size=8)


class _Model:
    """Entries in order of use, least recent first: a list, searched key by key."""

    def __init__(self, size: int) -> None:
        self.size, self.entries = size, list[tuple[int, int]]()

    def get(self, key: int) -> int | None:
        for n, (held, value) in enumerate(self.entries):
            if held == key:
                self.entries.append(self.entries.pop(n))
                return value
        return None

    def put(self, key: int, value: int) -> None:
        self.entries = [entry for entry in self.entries if entry[0] != key] + [(key, value)]
        self.entries = self.entries[-self.size :]


@given(size=st.integers(1, 8), batches=st.lists(st.tuples(st.booleans(), PAIRS), max_size=12))
def test_batches_act_as_their_operations_one_by_one(
    size: int, batches: list[tuple[bool, list[tuple[int, int]]]]
) -> None:
    """Each batch a ``get_many`` of its keys or a ``put_many`` of its pairs."""
    one_by_one: LRU[int, int] = LRU(size)
    batched: LRU[int, int] = LRU(size)
    model = _Model(size)
    for putting, pairs in batches:
        if putting:
            for key, value in pairs:
                one_by_one.put(key, value)
                model.put(key, value)
            batched.put_many(pairs)
        else:
            keys = [key for key, _ in pairs]
            expected = [model.get(key) for key in keys]
            assert batched.get_many(keys) == [one_by_one.get(key) for key in keys] == expected
        assert list(batched._items.items()) == list(one_by_one._items.items()) == model.entries
