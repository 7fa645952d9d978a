"""Each tenant's graph held in memory by the process that walks it, kept current from the
database's change log (revision 0022).

The database stays the truth. A tenant's :class:`Adjacency` is loaded on its first walk
(apart from it, in the worker, which walks by SQL meanwhile),
through that tenant's session (row-level security decides what it holds), together with
the snapshot it was loaded under. Before every walk, one query asks for the records whose
edges or walk attributes changed in transactions that snapshot could not see — committed
since, in whatever order — and their lists are read again. Whenever catching up is not
obviously right it loads the tenant again instead: after a pause longer than the log's
retention allows, or when more changed than a reload costs.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import logging
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from cairn.context.adjacency import Adjacency, Ints, Kinds, NodeRow, Weights
from cairn.context.sources.base import Along
from cairn.db.driver import DriverQuery
from cairn.db.engine import tenant_session

log = logging.getLogger(__name__)

# The log keeps ten minutes (revision 0022); catching up after half of that is safe.
MAX_PAUSE_S = 300.0
PAGE = 50_000
_NIL = uuid.UUID(int=0)

# A transaction that has written (it has an id) may have written edges that are not yet
# committed, and may never be: its walks are the SQL's.
_WRITING = "pg_current_xact_id_if_assigned() IS NOT NULL AS writing"
_SNAPSHOT = text(f"SELECT CAST(pg_current_snapshot() AS text) AS snapshot, {_WRITING}")
# Asked before every walk: along the seed stage's statement (see ``GraphMemory.along``),
# else on its own, through the driver (cairn.db.driver).
_SEEN = "CAST(CAST(:seen AS text) AS pg_snapshot)"
_CHANGED_SQL = (
    f"SELECT CAST(pg_current_snapshot() AS text) AS snapshot, {_WRITING}, ARRAY("
    " SELECT DISTINCT record_id FROM graph_changes"
    f" WHERE owner_id = :owner AND xid >= pg_snapshot_xmin({_SEEN})"
    f" AND NOT pg_visible_in_snapshot(xid, {_SEEN})) AS changed"
)
_CHANGED = DriverQuery(text(_CHANGED_SQL))
# A page of edges as four values: both ends packed 16 bytes each, types, weights.
_KEY = "from_id, to_id, edge_type"
_EDGE_PAGE = text(
    f"SELECT string_agg(uuid_send(from_id), ''::bytea ORDER BY {_KEY}) AS froms,"
    f" string_agg(uuid_send(to_id), ''::bytea ORDER BY {_KEY}) AS tos,"
    f" array_agg(edge_type ORDER BY {_KEY}) AS kinds,"
    f" array_agg(weight ORDER BY {_KEY}) AS weights"
    " FROM (SELECT from_id, to_id, edge_type, weight FROM breadcrumb_edges"
    "  WHERE owner_id = :owner AND (from_id, to_id, edge_type) > (:a, :b, :k)"
    f"  ORDER BY {_KEY} LIMIT :n) AS page"
)
_EDGES_TOUCHING = text(
    "SELECT from_id, to_id, edge_type, weight FROM breadcrumb_edges"
    " WHERE owner_id = :owner AND (from_id = ANY(:ids) OR to_id = ANY(:ids))"
)
_ATTRIBUTES = (
    "SELECT id, schema_name,"
    " ARRAY(SELECT t FROM unnest(tags) AS t WHERE starts_with(t, 'session:')) AS sessions,"
    " domains FROM breadcrumbs"
)
_NODE_PAGE = text(f"{_ATTRIBUTES} WHERE owner_id = :owner AND id > :after ORDER BY id LIMIT :n")
_NODES = text(f"{_ATTRIBUTES} WHERE owner_id = :owner AND id = ANY(:ids)")


def _release_freed_heap() -> None:
    """Hand the memory a graph's load freed back to the system. Loading pages of packed
    ids and joining them into arrays frees as much as it keeps, and glibc's allocator holds
    on to freed heap: a 1M-record tenant left ~120 MB of it in the worker's RSS (measured
    with benchmarks/graph_ids.py). Where the C library has no ``malloc_trim`` (not glibc),
    nothing happens."""
    with contextlib.suppress(AttributeError, OSError):
        ctypes.CDLL(None).malloc_trim(0)


class _Writing(Exception):
    """The transaction has written: the memory neither loads nor catches up in it."""


class _NotReady(Exception):
    """The tenant's graph is still being loaded apart."""


@dataclass(frozen=True, slots=True)
class _Changes:
    """The change log's answer since the snapshot ``seen``."""

    seen: str
    snapshot: str
    writing: bool
    changed: list[uuid.UUID]


@dataclass
class _Tenant:
    adjacency: Adjacency
    snapshot: str
    synced: float
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


@dataclass
class GraphMemory:
    """Tenants' adjacencies, loaded on first use and caught up before each walk."""

    max_pause_s: float = MAX_PAUSE_S
    tenants: dict[uuid.UUID, _Tenant] = field(default_factory=dict)
    _loading: dict[uuid.UUID, asyncio.Lock] = field(default_factory=dict)
    loads: int = 0  # full loads so far (tests and metrics look)
    # With a session factory, a tenant's first load runs apart, and its walks go by SQL until
    # it is done: a large graph takes seconds to load, and no assembly should wait for it.
    sessions: async_sessionmaker[AsyncSession] | None = None
    _apart: dict[uuid.UUID, asyncio.Task[None]] = field(default_factory=dict)
    # Each tenant's latest answer asked along another statement, until its walk takes it.
    _answered: dict[uuid.UUID, _Changes] = field(default_factory=dict)
    caught_up_along: int = 0  # catch-ups from an answer asked along (tests look)

    def along(self, owner: uuid.UUID) -> Along | None:
        """The change-log query of ``owner``'s next walk, to send along the seed stage's
        statement (one round trip less: ~0.4 ms of an assembly at 100k); None when the
        walk will load the tenant instead, or the memory does not hold it yet."""
        tenant = self.tenants.get(owner)
        if tenant is None or time.monotonic() - tenant.synced > self.max_pause_s:
            return None
        seen = tenant.snapshot

        def read(rows: list[dict[str, Any]]) -> None:
            (row,) = rows
            changed = [uuid.UUID(record_id) for record_id in row["changed"]]
            self._answered[owner] = _Changes(seen, row["snapshot"], row["writing"], changed)

        return Along(_CHANGED_SQL, {"owner": owner, "seen": seen}, read)

    async def current(self, session: AsyncSession, owner: uuid.UUID) -> Adjacency | None:
        """``owner``'s adjacency as of this moment, in ``session`` (scoped to ``owner``);
        None when the session's transaction has already written (walk by SQL then)."""
        try:
            return await self._current(session, owner)
        except (_Writing, _NotReady):
            return None

    async def loaded(self, owner: uuid.UUID) -> None:
        """Until a load started apart for ``owner`` is over."""
        task = self._apart.get(owner)
        if task is not None:
            await asyncio.wait({task})

    async def _current(self, session: AsyncSession, owner: uuid.UUID) -> Adjacency:
        self._forget_idle()
        tenant = self.tenants.get(owner)
        if tenant is None and self.sessions is not None:
            if owner not in self._apart:
                task = asyncio.create_task(self._load_apart(owner), name=f"graph-load-{owner}")
                self._apart[owner] = task
            raise _NotReady
        if tenant is None:
            async with self._loading.setdefault(owner, asyncio.Lock()):
                tenant = self.tenants.get(owner)
                if tenant is None:
                    tenant = self.tenants[owner] = await self._load(session, owner)
                    return tenant.adjacency
        async with tenant.lock:
            if time.monotonic() - tenant.synced > self.max_pause_s:
                fresh = await self._load(session, owner)
                tenant.adjacency, tenant.snapshot = fresh.adjacency, fresh.snapshot
            else:
                await self._catch_up(session, owner, tenant)
            tenant.synced = time.monotonic()
            return tenant.adjacency

    async def _load_apart(self, owner: uuid.UUID) -> None:
        assert self.sessions is not None
        try:
            async with tenant_session(self.sessions, owner) as session, session.begin():
                self.tenants[owner] = await self._load(session, owner)
        except Exception:
            log.warning("loading the graph of tenant %s failed; walks by SQL", owner, exc_info=True)
        finally:
            self._apart.pop(owner, None)

    def forget(self, owner: uuid.UUID) -> None:
        self.tenants.pop(owner, None)
        self._answered.pop(owner, None)

    def _forget_idle(self) -> None:
        now = time.monotonic()
        for owner in [o for o, t in self.tenants.items() if now - t.synced > self.max_pause_s]:
            if not self.tenants[owner].lock.locked():
                self.forget(owner)

    async def _catch_up(self, session: AsyncSession, owner: uuid.UUID, tenant: _Tenant) -> None:
        """From the answer asked along the seed statement when it was asked since the
        snapshot the memory still holds (another walk may have caught up meanwhile), else
        from the change log now. Either is a whole answer since that snapshot."""
        answer = self._answered.pop(owner, None)
        if answer is not None and answer.seen == tenant.snapshot:
            self.caught_up_along += 1
        else:
            params = {"owner": owner, "seen": tenant.snapshot}
            (row,) = await _CHANGED.fetch(session, params)
            answer = _Changes(
                tenant.snapshot, row["snapshot"], row["writing"], list(row["changed"])
            )
        if answer.writing:
            raise _Writing
        changed = answer.changed
        adjacency = tenant.adjacency
        if changed and len(changed) > max(1000, adjacency.size // 4):
            fresh = await self._load(session, owner)
            tenant.adjacency, tenant.snapshot = fresh.adjacency, fresh.snapshot
            return
        if changed:
            params = {"owner": owner, "ids": changed}
            edges = [tuple(r) for r in await session.execute(_EDGES_TOUCHING, params)]
            adjacency.replace_lists(changed, edges)
            ends = list({end for edge in edges for end in edge[:2]})
            at = adjacency.nodes(ends)
            absent = (at < 0) | ~adjacency.present[np.maximum(at, 0)]
            unknown = [e for e, a in zip(ends, absent.tolist(), strict=True) if a]
            wanted = list(set(changed) | set(unknown))
            nodes = [tuple(r) for r in await session.execute(_NODES, params | {"ids": wanted})]
            seen = {node[0] for node in nodes}
            adjacency.set_nodes(nodes, gone=[w for w in wanted if w not in seen])
            if adjacency.overlay_size > adjacency.size // 2 + 2000:
                adjacency.compact()
        tenant.snapshot = answer.snapshot

    async def _load(self, session: AsyncSession, owner: uuid.UUID) -> _Tenant:
        """The tenant's whole graph, in pages; the snapshot is taken first, so whatever
        commits while the pages are read is caught up by the next look."""
        started = time.perf_counter()
        found = (await session.execute(_SNAPSHOT)).one()
        if found.writing:
            raise _Writing
        snapshot = str(found.snapshot)
        adjacency = Adjacency()
        parts: list[tuple[Ints, Ints, Kinds, Weights]] = []
        last: tuple[uuid.UUID, uuid.UUID, int] = (_NIL, _NIL, -32768)
        while True:
            params = {"owner": owner, "a": last[0], "b": last[1], "k": last[2], "n": PAGE}
            page = (await session.execute(_EDGE_PAGE, params)).one()
            if page.kinds is None:
                break
            froms, tos = bytes(page.froms), bytes(page.tos)
            parts.append((
                adjacency.intern_keys(froms), adjacency.intern_keys(tos),
                np.array(page.kinds, np.int8), np.array(page.weights, np.float32),
            ))  # fmt: skip
            if len(page.kinds) < PAGE:
                break
            last = (uuid.UUID(bytes=froms[-16:]), uuid.UUID(bytes=tos[-16:]), page.kinds[-1])
        after = _NIL
        while True:
            params = {"owner": owner, "after": after, "n": PAGE}
            nodes: list[NodeRow] = [tuple(r) for r in await session.execute(_NODE_PAGE, params)]
            adjacency.set_nodes(nodes)
            if len(nodes) < PAGE:
                break
            after = nodes[-1][0]
        if parts:
            adjacency.build_columns(*(np.concatenate(c) for c in zip(*parts, strict=True)))
        else:
            adjacency.build([])
        del parts
        _release_freed_heap()
        self.loads += 1
        log.info(
            "graph of tenant %s in memory: %d records, %d edges, %.1f MB of arrays, %.0f ms",
            owner, adjacency.size, adjacency.edge_count, adjacency.nbytes / 1e6,
            (time.perf_counter() - started) * 1000,
        )  # fmt: skip
        return _Tenant(adjacency, snapshot, time.monotonic())
