"""Each tenant's active webhooks, cached by the tenant's webhook generation.

Why a generation and not only a time to live: a webhook registered while the cache held
its tenant's targets used to miss every event until the entry expired. Every change to a
tenant's webhooks or agent secrets now bumps ``tenants.webhook_generation`` in the change's
own transaction (``repository.bump_generation``; the row lock orders concurrent changes).
Before using cached targets for an event, delivery reads the generation in a query that
*starts after the event reached it*. The event reached delivery after its commit (outbox,
relay, JetStream), so if the event was committed after a registration, that query sees the
registration's bump and the targets are reloaded: a registration takes effect for every
event committed after its own commit.

One generation read serves every event of a tenant that arrives while the previous read
is in flight (``GenerationReads``), so a burst costs two small queries, not one per event;
an event never joins a read that started before it arrived. ``ttl_s`` stays as a bound on
how long unchanged targets are reused (a change made behind the application's back).
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError
from sqlalchemy import RowMapping
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from cairn.db.engine import tenant_session
from cairn.events.selectors import Selector
from cairn.webhooks import repository
from cairn.webhooks.delivery import Target

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Loaded:
    """A tenant's targets and the generation read *before* them (so a change committed
    between the two reads is noticed by the next comparison, never missed)."""

    generation: int
    targets: list[Target]


Loader = Callable[[uuid.UUID], Awaitable[Loaded]]
GenerationReader = Callable[[uuid.UUID], Coroutine[Any, Any, int]]
# Past this many cached tenants, expired entries are dropped when a new one is stored.
_PRUNE_ABOVE = 10_000


class GenerationReads:
    """Coalesces generation reads per tenant: a caller waits for the next read that starts
    after it asked, and every caller waiting at that moment shares it."""

    def __init__(self, read: GenerationReader) -> None:
        self.read = read
        self._running: dict[uuid.UUID, asyncio.Task[int]] = {}
        self._next: dict[uuid.UUID, asyncio.Future[int]] = {}

    async def current(self, owner_id: uuid.UUID) -> int:
        waiting = self._next.get(owner_id)
        if waiting is None:
            waiting = self._next[owner_id] = asyncio.get_running_loop().create_future()
            if owner_id not in self._running:
                self._start(owner_id)
        return await asyncio.shield(waiting)

    def _start(self, owner_id: uuid.UUID) -> None:
        """The pending read begins now: callers from here on wait for the one after it."""
        waiting = self._next.pop(owner_id)
        task = asyncio.create_task(self.read(owner_id), name="webhook-generation")
        self._running[owner_id] = task
        task.add_done_callback(lambda done: self._finished(owner_id, done, waiting))

    def _finished(
        self, owner_id: uuid.UUID, done: asyncio.Task[int], waiting: asyncio.Future[int]
    ) -> None:
        del self._running[owner_id]
        if not waiting.done():
            if done.cancelled():
                waiting.cancel()
            elif (error := done.exception()) is not None:
                waiting.set_exception(error)
            else:
                waiting.set_result(done.result())
        if owner_id in self._next:
            self._start(owner_id)


class TargetCache:
    """Targets are reloaded when the tenant's generation moved, or after ``ttl_s``."""

    def __init__(
        self,
        load: Loader,
        ttl_s: float,
        generation: GenerationReader,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.load = load
        self.ttl_s = ttl_s
        self.generations = GenerationReads(generation)
        self.clock = clock
        self._entries: dict[uuid.UUID, tuple[float, Loaded]] = {}
        self._loading: dict[uuid.UUID, asyncio.Task[Loaded]] = {}

    async def for_owner(self, owner_id: uuid.UUID) -> list[Target]:
        generation = await self.generations.current(owner_id)
        now = self.clock()
        stored_at, cached = self._entries.get(owner_id, (0.0, None))
        if cached is not None and now - stored_at < self.ttl_s and cached.generation == generation:
            return cached.targets
        loaded = await self._load_once(owner_id, generation)
        if len(self._entries) > _PRUNE_ABOVE:
            self._entries = {
                owner: kept for owner, kept in self._entries.items() if now - kept[0] < self.ttl_s
            }
        self._entries[owner_id] = (now, loaded)
        return loaded.targets

    async def _load_once(self, owner_id: uuid.UUID, generation: int) -> Loaded:
        """One load per tenant at a time: when the TTL runs out, every event in flight
        misses at once, and each would otherwise load the same targets. A caller joins a
        running load if what it loads is at least the generation the caller saw; else it
        waits for a load of its own, begun after its read."""
        for _ in range(2):
            task = self._loading.get(owner_id)
            fresh = task is None or task.done()
            if task is None or task.done():
                task = self._loading[owner_id] = asyncio.ensure_future(self.load(owner_id))
                task.add_done_callback(lambda done: self._forget(owner_id, done))
            loaded = await asyncio.shield(task)  # a cancelled caller leaves it to the others
            if fresh or loaded.generation >= generation:
                return loaded
        return loaded

    def _forget(self, owner_id: uuid.UUID, done: asyncio.Task[Loaded]) -> None:
        if self._loading.get(owner_id) is done:
            del self._loading[owner_id]
        if not done.cancelled():
            done.exception()  # retrieved: its callers raise it, asyncio need not log it


def database_generation(
    sessions: async_sessionmaker[AsyncSession],
    system_sessions: async_sessionmaker[AsyncSession] | None = None,
) -> GenerationReader:
    """Reads a tenant's generation. With ``system_sessions`` (the schema owner, whom the
    policy does not restrict) as one statement outside a transaction: a read per event
    burst, where the tenant's own scoped transaction costs four round trips (begin, scope,
    read, commit). It reads one counter of the tenant the event names, nothing else."""
    if system_sessions is not None:
        engine = system_sessions.kw["bind"]

        async def read_alone(owner_id: uuid.UUID) -> int:
            async with engine.connect() as connection:
                alone = await connection.execution_options(isolation_level="AUTOCOMMIT")
                return await repository.webhook_generation(alone, owner_id)

        return read_alone

    async def read(owner_id: uuid.UUID) -> int:
        async with tenant_session(sessions, owner_id) as session, session.begin():
            return await repository.webhook_generation(session, owner_id)

    return read


def database_loader(sessions: async_sessionmaker[AsyncSession]) -> Loader:
    async def load(owner_id: uuid.UUID) -> Loaded:
        async with tenant_session(sessions, owner_id) as session, session.begin():
            generation = await repository.webhook_generation(session, owner_id)
            rows = await repository.delivery_targets(session, owner_id)
        targets = [target for row in rows if (target := target_from_row(row)) is not None]
        return Loaded(generation, targets)

    return load


def target_from_row(row: RowMapping) -> Target | None:
    try:
        selector = None if row["selector"] is None else Selector.model_validate(row["selector"])
    except ValidationError:  # written by an older version, perhaps: skip it, say so
        log.warning("webhook %s has an unreadable selector; not delivering to it", row["id"])
        return None
    return Target(
        webhook_id=row["id"],
        owner_id=row["owner_id"],
        agent_id=row["agent_id"],
        url=row["url"],
        secret=row["secret"],
        selector=selector,
    )
