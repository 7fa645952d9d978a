"""Answers of ``POST /contexts/query`` kept in memory until the tenant's data changes.

What an answer depends on (the tenant's records, edges, agents, hints, blacklist) changes
only through writes of that tenant, and every record write publishes a change event. So
each tenant has a generation here; an answer is stored under the generation it was computed
at and served only while that is still the tenant's generation. The generation moves:

- on every change event of the tenant (the API process's core NATS subscription, so every
  API process hears of every write, typically within milliseconds of its commit);
- at once, when this process commits a write of the tenant (read-your-writes for a client
  that writes and then asks the same server);
- and NATS being at-most-once, every tenant's answers are dropped when the connection to
  NATS is re-established (events may have been missed while it was down).

Edges are written by the worker *after* a record's event, without an event of their own.
So after any change of a tenant, answers computed within ``settle_s`` are not stored (they
may miss edges still being built), and no answer is served after ``ttl_s`` in any case: a
ceiling for an event lost without a reconnection, or edges built later than ``settle_s``.
An answer computed while a change committed is never stored: it is stored only if the
generation it started at is still current when it is done.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from prometheus_client import Counter
from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm import ORMExecuteState, Session

from cairn.db.engine import session_tenant
from cairn.transforms.cache import LRU

_WROTE = "cairn.answers.wrote"

LOOKUPS = Counter("cairn_context_query_cache_total", "On-demand context cache lookups", ["result"])


@dataclass(frozen=True, slots=True)
class Ticket:
    """The state an answer is computed at: stored only if nothing changed since."""

    owner_id: uuid.UUID
    generation: int
    epoch: int


class AnswerCache:
    def __init__(
        self,
        size: int,
        ttl_s: float,
        settle_s: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._answers: LRU[tuple[uuid.UUID, str], tuple[Ticket, float, dict[str, Any]]] = LRU(
            max(1, size)
        )
        self._enabled = size > 0 and ttl_s > 0
        self._ttl = ttl_s
        self.settle_s = settle_s
        self._clock = clock
        self._generations: dict[uuid.UUID, int] = {}
        self._unsettled_until: dict[uuid.UUID, float] = {}
        self._epoch = 0

    def ticket(self, owner_id: uuid.UUID) -> Ticket:
        return Ticket(owner_id, self._generations.get(owner_id, 0), self._epoch)

    def get(self, owner_id: uuid.UUID, key: str) -> dict[str, Any] | None:
        found = self._answers.get((owner_id, key)) if self._enabled else None
        fresh = found is not None and found[0] == self.ticket(owner_id) and found[1] > self._clock()
        LOOKUPS.labels("hit" if fresh else "miss").inc()
        return found[2] if fresh and found is not None else None

    def put(self, key: str, ticket: Ticket, answer: dict[str, Any]) -> bool:
        """Store ``answer`` if nothing of the tenant changed since ``ticket`` and the last
        change has settled; returns whether it was stored."""
        now = self._clock()
        settled = self._unsettled_until.get(ticket.owner_id, 0.0) <= now
        if not self._enabled or ticket != self.ticket(ticket.owner_id) or not settled:
            return False
        self._answers.put((ticket.owner_id, key), (ticket, now + self._ttl, answer))
        return True

    def changed(self, owner_id: uuid.UUID) -> None:
        """Something of the tenant changed: its stored answers are no longer served."""
        self._generations[owner_id] = self._generations.get(owner_id, 0) + 1
        self._unsettled_until[owner_id] = self._clock() + self.settle_s

    def on_event(self, event: Mapping[str, Any]) -> bool:
        """A change event's listener (events.runtime): any event of a tenant changes it."""
        try:
            owner = uuid.UUID(str(event.get("owner_id")))
        except ValueError:
            return False
        self.changed(owner)
        return True

    def clear(self) -> None:
        """Forget every answer (NATS reconnected: change events may have been missed)."""
        self._epoch += 1

    async def forget_on_commit(self, factory: async_sessionmaker[AsyncSession]) -> None:
        """Until cancelled: every commit of a write through ``factory``'s sessions changes
        its tenant here at once, before the write's response is sent. (SQLAlchemy's
        session events attach to a session class, shared by every factory using it; the
        listeners act only for sessions bound to this factory's engine.)"""
        session_class: type[Session] = factory.kw.get("sync_session_class", Session)
        bind = factory.kw["bind"].sync_engine

        def on_execute(state: ORMExecuteState) -> None:
            if state.session.bind is bind and (
                state.is_insert or state.is_update or state.is_delete
            ):
                state.session.info[_WROTE] = True

        def on_commit(session: Session) -> None:
            if session.info.pop(_WROTE, False) and (owner := session_tenant(cast(Any, session))):
                self.changed(owner)

        def on_rollback(session: Session) -> None:
            session.info.pop(_WROTE, None)

        event.listen(session_class, "do_orm_execute", on_execute)
        event.listen(session_class, "after_commit", on_commit)
        event.listen(session_class, "after_rollback", on_rollback)
        try:
            await asyncio.Event().wait()
        finally:
            event.remove(session_class, "do_orm_execute", on_execute)
            event.remove(session_class, "after_commit", on_commit)
            event.remove(session_class, "after_rollback", on_rollback)
