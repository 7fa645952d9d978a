"""One tenant's graph as arrays: what the graph walk reads, without a query.

Records are interned as ints (in the order first met); each edge is kept twice, in its
source's outgoing list and its target's incoming list, as three parallel arrays (far end,
type, weight) in compressed sparse rows. Each list is sorted as the walk's SQL orders it:
type, weight descending, far end's id — so a fan-out cap is a slice of its head. Per
record, the walk's filters: schema, session tags and domain labels, each interned (the
sets as ids of distinct sets) — 18 bytes per edge and ~40 per record, 28 of them the
record's id and its place in the sorted ids (:class:`cairn.context.node_ids.NodeIds`).

Lists replaced since the arrays were built (a record's edges changed) sit in an overlay;
:meth:`Adjacency.compact` folds it back into fresh arrays.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cairn.context.model import SESSION_PREFIX
from cairn.context.node_ids import NodeIds, split

EdgeRow = tuple[uuid.UUID, uuid.UUID, int, float]
# A record's walk attributes: schema (None: none), session tags, domain labels.
NodeRow = tuple[uuid.UUID, str | None, Sequence[str], Sequence[str]]

Ints = NDArray[np.int32]
Kinds = NDArray[np.int8]
Weights = NDArray[np.float32]
Lists = tuple[Ints, Kinds, Weights]

NO_SCHEMA = -1
_EMPTY: Lists = (np.zeros(0, np.int32), np.zeros(0, np.int8), np.zeros(0, np.float32))


@dataclass
class _Rows:
    """Compressed sparse rows: the list of node n is ``[indptr[n], indptr[n + 1])``."""

    indptr: NDArray[np.int64]
    far: Ints
    kind: Kinds
    weight: Weights

    @classmethod
    def empty(cls) -> _Rows:
        return cls(np.zeros(1, np.int64), *_EMPTY)

    def get(self, node: int) -> Lists:
        if node + 1 >= len(self.indptr):
            return _EMPTY
        a, b = self.indptr[node], self.indptr[node + 1]
        return self.far[a:b], self.kind[a:b], self.weight[a:b]

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in (self.indptr, self.far, self.kind, self.weight))


@dataclass
class _Interned:
    """Distinct values as small ints (0: the empty set / first value seen)."""

    ids: dict[object, int] = field(default_factory=dict)
    values: list[object] = field(default_factory=list)

    def __call__(self, value: object) -> int:
        found = self.ids.get(value)
        if found is None:
            found = self.ids[value] = len(self.values)
            self.values.append(value)
        return found


class Adjacency:
    """A tenant's records and edges for the walk (see the module docstring)."""

    def __init__(self) -> None:
        self.keys = NodeIds()
        self.present = np.zeros(0, np.bool_)  # attributes loaded: the record is visible
        self.schema = np.zeros(0, np.int32)
        self.sessions = np.zeros(0, np.int32)
        self.domains = np.zeros(0, np.int32)
        self.schemas = _Interned()
        self.session_sets = _Interned()
        self.domain_sets = _Interned()
        self.session_sets(frozenset())
        self.domain_sets(frozenset())
        self._out = _Rows.empty()
        self._in = _Rows.empty()
        self._out_overlay: dict[int, Lists] = {}
        self._in_overlay: dict[int, Lists] = {}

    # -- records -------------------------------------------------------------------------

    def intern(self, record_id: uuid.UUID) -> int:
        node = self.keys.intern(record_id)
        self._fit()
        return node

    def intern_many(self, ids: Sequence[uuid.UUID]) -> NDArray[np.int32]:
        if not ids:
            return np.zeros(0, np.int32)
        nodes = self.keys.intern_keys(*split(ids))
        self._fit()
        return nodes

    def node(self, record_id: uuid.UUID) -> int | None:
        return self.keys.get(record_id)

    def nodes(self, ids: Sequence[uuid.UUID]) -> NDArray[np.int64]:
        """The node of each id, -1 where there is none."""
        return self.keys.nodes(ids)

    def record_ids(self, nodes: Sequence[int] | NDArray[np.integer[Any]]) -> list[uuid.UUID]:
        return self.keys.record_ids(nodes)

    def _fit(self) -> None:
        """The per-record arrays as long as the ids'."""
        size = len(self.keys.hi)
        if size == len(self.present):
            return
        for name in ("present", "schema", "sessions", "domains"):
            old = getattr(self, name)
            new = np.zeros(size, old.dtype)
            kept = min(size, len(old))
            new[:kept] = old[:kept]
            setattr(self, name, new)

    def set_nodes(self, rows: Sequence[NodeRow], gone: Sequence[uuid.UUID] = ()) -> None:
        """Attributes of visible records; ``gone``: records no longer visible."""
        nodes = self.intern_many([row[0] for row in rows]).tolist()
        for node, (_, schema, tags, domains) in zip(nodes, rows, strict=True):
            self.present[node] = True
            self.schema[node] = NO_SCHEMA if schema is None else self.schemas(schema)
            sessions = frozenset(t for t in tags if t.startswith(SESSION_PREFIX))
            self.sessions[node] = self.session_sets(sessions)
            self.domains[node] = self.domain_sets(frozenset(domains))
        if gone:
            found = self.nodes(gone)
            self.present[found[found >= 0]] = False

    @property
    def size(self) -> int:
        return self.keys.size

    def id_order(self, nodes: NDArray[np.int64]) -> tuple[NDArray[np.uint64], NDArray[np.uint64]]:
        """Keys that sort ``nodes`` as PostgreSQL sorts their uuids (low key first)."""
        return self.keys.lo[nodes], self.keys.hi[nodes]

    # -- edges ---------------------------------------------------------------------------

    def outgoing(self, node: int) -> Lists:
        found = self._out_overlay.get(node)
        return self._out.get(node) if found is None else found

    def incoming(self, node: int) -> Lists:
        found = self._in_overlay.get(node)
        return self._in.get(node) if found is None else found

    def gather(
        self, nodes: NDArray[np.int64], outgoing: bool, cap: int | None = None
    ) -> tuple[NDArray[np.int64], Ints, Kinds, Weights]:
        """The lists of many nodes at once, each cut to its first ``cap`` entries: for each
        entry, the position of its node in ``nodes``, then far end, type and weight."""
        rows, overlay = (self._out, self._out_overlay) if outgoing else (self._in, self._in_overlay)
        positions = np.arange(len(nodes), dtype=np.int64)
        parts: list[tuple[NDArray[np.int64], Ints, Kinds, Weights]] = []
        if overlay:
            aside = np.fromiter((int(n) in overlay for n in nodes), np.bool_, len(nodes))
            for position in positions[aside].tolist():
                far, kind, weight = overlay[int(nodes[position])]
                far, kind, weight = far[:cap], kind[:cap], weight[:cap]
                parts.append((np.full(len(far), position, np.int64), far, kind, weight))
            positions = positions[~aside]
        positions = positions[nodes[positions] + 1 < len(rows.indptr)]
        base = nodes[positions]
        starts = rows.indptr[base]
        counts = rows.indptr[base + 1] - starts
        if cap is not None:
            counts = np.minimum(counts, cap)
        shift = np.repeat(starts - (np.cumsum(counts) - counts), counts)
        at = np.arange(int(counts.sum()), dtype=np.int64) + shift
        parts.append((np.repeat(positions, counts), rows.far[at], rows.kind[at], rows.weight[at]))
        if len(parts) == 1:
            return parts[0]
        return (
            np.concatenate([p[0] for p in parts]),
            np.concatenate([p[1] for p in parts]),
            np.concatenate([p[2] for p in parts]),
            np.concatenate([p[3] for p in parts]),
        )

    def build(self, edges: Sequence[EdgeRow]) -> None:
        """Every edge at once (the lists of a fresh adjacency)."""
        self.build_columns(*self.columns(edges))

    def build_columns(self, src: Ints, dst: Ints, kind: Kinds, weight: Weights) -> None:
        """As :meth:`build`, from :meth:`columns` (of all edges, joined)."""
        self._out = self._rows(src, dst, kind, weight)
        self._in = self._rows(dst, src, kind, weight)
        self._out_overlay.clear()
        self._in_overlay.clear()
        self.keys.fold()
        self.keys.resize(self.size)  # loaded: no spare room until a record is added
        self._fit()

    def replace_lists(self, nodes: Iterable[uuid.UUID], edges: Sequence[EdgeRow]) -> None:
        """The outgoing and incoming lists of ``nodes`` are now exactly those of ``edges``
        (every edge touching them, whatever was there before)."""
        src, dst, kind, weight = self.columns(edges)
        touched = set(self.intern_many(list(nodes)).tolist())
        for overlay, near, far in ((self._out_overlay, src, dst), (self._in_overlay, dst, src)):
            for node in touched:
                mine = near == node
                ends, kinds, weights = far[mine], kind[mine], weight[mine]
                order = self._order(np.zeros(len(ends), np.int32), ends, kinds, weights)
                overlay[node] = (ends[order], kinds[order], weights[order])

    def compact(self) -> None:
        """Fold the overlay into fresh arrays (same lists, no overlay)."""
        for name, overlay in (("_out", self._out_overlay), ("_in", self._in_overlay)):
            rows: _Rows = getattr(self, name)
            counts = np.diff(rows.indptr)
            owner = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
            keep = ~np.isin(owner, np.fromiter(overlay, np.int64, len(overlay)))
            owners = [owner[keep]]
            fars, kinds, weights = [rows.far[keep]], [rows.kind[keep]], [rows.weight[keep]]
            for node, (far, kind, weight) in overlay.items():
                owners.append(np.full(len(far), node, np.int64))
                fars.append(far)
                kinds.append(kind)
                weights.append(weight)
            all_owner = np.concatenate(owners)
            order = np.argsort(all_owner, kind="stable")  # each list keeps its own order
            indptr = np.zeros(self.size + 1, np.int64)
            np.cumsum(np.bincount(all_owner, minlength=self.size), out=indptr[1:])
            far_all = np.concatenate(fars)[order]
            kind_all = np.concatenate(kinds)[order]
            weight_all = np.concatenate(weights)[order]
            setattr(self, name, _Rows(indptr, far_all, kind_all, weight_all))
            overlay.clear()

    def cut_ties(self, cap: int) -> tuple[int, int]:
        """Of the lists longer than ``cap``, how many the cap cuts between two entries of
        equal type and weight (where only the id tie-break decides), and how many there are
        (arrays only, overlay not counted)."""
        cut = longer = 0
        for rows in (self._out, self._in):
            starts = rows.indptr[:-1]
            long_ = np.flatnonzero(np.diff(rows.indptr) > cap)
            at = starts[long_] + cap - 1
            same = (rows.kind[at] == rows.kind[at + 1]) & (rows.weight[at] == rows.weight[at + 1])
            cut += int(same.sum())
            longer += len(long_)
        return cut, longer

    @property
    def edge_count(self) -> int:
        """Edges in the arrays (lists in the overlay not counted)."""
        return len(self._out.far)

    @property
    def overlay_size(self) -> int:
        return len(self._out_overlay) + len(self._in_overlay)

    @property
    def nbytes(self) -> int:
        """The arrays' bytes (the dictionary and id objects not counted)."""
        arrays = (self.present, self.schema, self.sessions, self.domains)
        return self._out.nbytes + self._in.nbytes + self.keys.nbytes + sum(a.nbytes for a in arrays)

    def intern_keys(self, packed: bytes) -> Ints:
        """Records by their ids as 16-byte strings one after the other (PostgreSQL's
        ``uuid_send``): loading a large graph costs no Python per record or edge end."""
        keys = np.frombuffer(packed, dtype=">u8").reshape(-1, 2).astype(np.uint64)
        nodes = self.keys.intern_keys(keys[:, 0], keys[:, 1])
        self._fit()
        return nodes

    def columns(self, edges: Sequence[EdgeRow]) -> tuple[Ints, Ints, Kinds, Weights]:
        """Edges as arrays, their ends interned."""
        ends = self.intern_many([e[0] for e in edges] + [e[1] for e in edges])
        src, dst = ends[: len(edges)], ends[len(edges) :]
        kind = np.fromiter((e[2] for e in edges), np.int8, len(edges))
        weight = np.fromiter((e[3] for e in edges), np.float32, len(edges))
        return src, dst, kind, weight

    def _order(self, near: Ints, far: Ints, kind: Kinds, weight: Weights) -> NDArray[np.intp]:
        """The walk's order: per near end, type, weight descending, far end's id."""
        lo, hi = self.keys.lo[far], self.keys.hi[far]
        return np.lexsort((lo, hi, -weight, kind, near))

    def _rows(self, near: Ints, far: Ints, kind: Kinds, weight: Weights) -> _Rows:
        order = self._order(near, far, kind, weight)
        indptr = np.zeros(self.size + 1, np.int64)
        np.cumsum(np.bincount(near, minlength=self.size), out=indptr[1:])
        return _Rows(indptr, far[order], kind[order], weight[order])
