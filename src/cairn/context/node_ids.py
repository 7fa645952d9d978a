"""Record ids and the node numbers of a tenant's graph, without a Python object per record.

A dict of UUID → int and a list of the UUIDs cost ~150 bytes a record (a 72-byte driver
UUID, a 28-byte int, a dict slot and a list slot): ~150 MB in a worker holding a 1M-record
tenant. Here each node's id is two uint64 (its big-endian halves, 16 bytes) and the nodes
sorted by id (4 bytes and a copy of the high half: 12 bytes), found with ``np.searchsorted``;
ids interned since the last fold sit in a small dict until :meth:`NodeIds.fold`. An id is
made a UUID again only when the walk hands it out.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

import numpy as np
from asyncpg.pgproto.pgproto import UUID as DriverUUID
from numpy.typing import NDArray

Keys = NDArray[np.uint64]
Nodes = NDArray[np.int64]

# Ids interned one at a time wait in a dict until there are this many (or a fold is asked
# for): a fold copies the sorted arrays.
FOLD_AT = 4096


def split(ids: Sequence[uuid.UUID]) -> tuple[Keys, Keys]:
    """The ids' high and low halves, as PostgreSQL orders uuids (bytes, big-endian)."""
    keys = np.frombuffer(b"".join(i.bytes for i in ids), dtype=">u8").reshape(-1, 2)
    return keys[:, 0].astype(np.uint64), keys[:, 1].astype(np.uint64)


class NodeIds:
    """Node n's id is ``(hi[n], lo[n])``; nodes are numbered in the order first met."""

    def __init__(self) -> None:
        self.hi = np.zeros(0, np.uint64)
        self.lo = np.zeros(0, np.uint64)
        self.size = 0
        self._by_id = np.zeros(0, np.int32)  # the folded nodes, sorted by (hi, lo)
        self._sorted_hi = np.zeros(0, np.uint64)  # hi[_by_id]
        self._shared = False  # two folded ids share their high half
        self._recent: dict[uuid.UUID, int] = {}

    @property
    def nbytes(self) -> int:
        arrays = (self.hi, self.lo, self._by_id, self._sorted_hi)
        return sum(a.nbytes for a in arrays)

    # -- interning -----------------------------------------------------------------------

    def intern(self, record_id: uuid.UUID) -> int:
        found = self.get(record_id)
        if found is not None:
            return found
        node = self._recent[record_id] = self._append(
            *(np.array([v], np.uint64) for v in divmod(record_id.int, 1 << 64))
        )
        if len(self._recent) >= FOLD_AT:
            self.fold()
        return node

    def intern_keys(self, hi: Keys, lo: Keys) -> NDArray[np.int32]:
        """The nodes of many ids at once (any order, repeats allowed), new ones appended
        and folded in one step."""
        order = np.lexsort((lo, hi))
        h, low = hi[order], lo[order]
        first = np.ones(len(h), np.bool_)
        first[1:] = (h[1:] != h[:-1]) | (low[1:] != low[:-1])
        distinct_hi, distinct_lo = h[first], low[first]
        nodes = self.find(distinct_hi, distinct_lo)
        new = nodes < 0
        if new.any():
            start = self._append(distinct_hi[new], distinct_lo[new])
            nodes[new] = np.arange(start, self.size, dtype=np.int64)
            self.fold()
        out = np.empty(len(hi), np.int32)
        out[order] = nodes[np.cumsum(first) - 1]
        return out

    def _append(self, hi: Keys, lo: Keys) -> int:
        """Room for ``len(hi)`` more nodes; the first new node's number."""
        start, end = self.size, self.size + len(hi)
        if end > len(self.hi):
            self.resize(max(16, end + end // 4))  # a quarter spare: 1M ids, 4 MB
        self.hi[start:end] = hi
        self.lo[start:end] = lo
        self.size = end
        return start

    def resize(self, capacity: int) -> None:
        """Room for ``capacity`` nodes (at least the ones there are)."""
        capacity = max(capacity, self.size)
        for name in ("hi", "lo"):
            old = getattr(self, name)
            resized = np.zeros(capacity, np.uint64)
            resized[: self.size] = old[: self.size]
            setattr(self, name, resized)

    def fold(self) -> None:
        """Every node into the sorted arrays (the dict of recent ids emptied)."""
        folded = len(self._by_id)
        if folded == self.size:
            self._recent.clear()
            return
        new = np.arange(folded, self.size, dtype=np.int32)
        new = new[np.lexsort((self.lo[new], self.hi[new]))]
        at = self._insert_at(self.hi[new], self.lo[new])
        self._by_id = np.insert(self._by_id, at, new)
        self._sorted_hi = self.hi[self._by_id]
        self._shared = bool((self._sorted_hi[1:] == self._sorted_hi[:-1]).any())
        self._recent.clear()

    def _insert_at(self, hi: Keys, lo: Keys) -> Nodes:
        """Where ids (sorted, absent) go among the folded ones."""
        at = np.searchsorted(self._sorted_hi, hi, side="left").astype(np.int64)
        right = np.searchsorted(self._sorted_hi, hi, side="right")
        for n in np.flatnonzero(right > at).tolist():  # a high half shared: order by low
            a, b = int(at[n]), int(right[n])
            at[n] = a + int(np.searchsorted(self.lo[self._by_id[a:b]], lo[n]))
        return at

    # -- lookups -------------------------------------------------------------------------

    def find(self, hi: Keys, lo: Keys) -> Nodes:
        """The node of each id, -1 where there is none."""
        folded = len(self._by_id)
        if not folded:
            out = np.full(len(hi), -1, np.int64)
        else:
            at = np.searchsorted(self._sorted_hi, hi, side="left")
            node = self._by_id[np.minimum(at, folded - 1)].astype(np.int64)
            hit = (self.hi[node] == hi) & (self.lo[node] == lo)
            out = np.where(hit, node, -1)
            # A high half shared by several ids (never by chance in 64 random bits): the
            # first of them was compared; search the rest by the low half.
            shared = np.zeros(0, np.int64)
            if self._shared:
                shared = np.flatnonzero(~hit & (at + 1 < folded))
                shared = shared[self._sorted_hi[at[shared] + 1] == hi[shared]]
            for n in shared.tolist():
                a = int(at[n])
                b = int(np.searchsorted(self._sorted_hi, hi[n], side="right"))
                group = self._by_id[a:b]
                k = int(np.searchsorted(self.lo[group], lo[n]))
                if k < len(group) and self.lo[group[k]] == lo[n]:
                    out[n] = int(group[k])
        if self._recent:
            for n in np.flatnonzero(out < 0).tolist():
                key = uuid.UUID(int=(int(hi[n]) << 64) | int(lo[n]))
                out[n] = self._recent.get(key, -1)
        return out

    def get(self, record_id: uuid.UUID) -> int | None:
        found = self._recent.get(record_id)
        if found is not None:
            return found
        hi, lo = divmod(record_id.int, 1 << 64)
        node = int(self.find(np.array([hi], np.uint64), np.array([lo], np.uint64))[0])
        return None if node < 0 else node

    def nodes(self, ids: Sequence[uuid.UUID]) -> Nodes:
        """The node of each id, -1 where there is none."""
        if not ids:
            return np.zeros(0, np.int64)
        return self.find(*split(ids))

    def record_ids(self, nodes: Sequence[int] | NDArray[np.integer]) -> list[uuid.UUID]:
        """The nodes' ids, as the driver's UUIDs (as every id read from the database is)."""
        at = np.asarray(nodes, np.int64)
        keys = np.empty((len(at), 2), ">u8")
        keys[:, 0] = self.hi[at]
        keys[:, 1] = self.lo[at]
        return list(map(DriverUUID, keys.view("V16").ravel().tolist()))

    def record_id(self, node: int) -> uuid.UUID:
        return self.record_ids([node])[0]
