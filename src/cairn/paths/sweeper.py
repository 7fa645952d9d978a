"""The periodic abandon sweep: an active path with no waypoint for ``abandon_after_s``
becomes ``abandoned``.

Like the processing retry job it runs in the API process and looks across every tenant, so
it finds the idle paths on a system session (exempt from row-level security); each one is
then closed in its own tenant's session, under the session's lock that the worker takes
too, and only if it is still the session's active path and got no waypoint since it was
found. Several API processes may sweep at once: the lock and that check make the second
one a no-op.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from prometheus_client import Counter
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from cairn.breadcrumbs.generated import GeneratedWriter
from cairn.config import Limits, PathSettings
from cairn.db.engine import tenant_session
from cairn.embedding import Embedder
from cairn.paths import repository
from cairn.paths.closing import abandon_path
from cairn.paths.machine import Status, sweep
from cairn.paths.store import path_from_context
from cairn.principal import Principal
from cairn.transforms import Transforms

log = logging.getLogger(__name__)

ABANDONED = Counter(
    "cairn_debug_paths_abandoned_total", "Active debug paths the sweep abandoned as idle"
)


@dataclass(frozen=True, slots=True)
class IdlePath:
    """An active path the sweep's cross-tenant query found idle, as it was then."""

    owner_id: uuid.UUID
    path_id: uuid.UUID
    session: str
    sequence: int


@dataclass
class AbandonSweep:
    system: async_sessionmaker[AsyncSession]
    tenants: async_sessionmaker[AsyncSession]  # row-level security on: the writes
    embedder: Embedder
    limits: Limits
    transforms: Transforms
    settings: PathSettings
    batch: int = 200

    @property
    def idle_after(self) -> timedelta:
        return timedelta(seconds=self.settings.abandon_after_s)

    async def due(self, now: datetime) -> list[IdlePath]:
        """Up to one batch of every tenant's active paths idle at ``now``."""
        async with self.system() as session, session.begin():
            rows = await repository.idle_paths(session, now - self.idle_after, limit=self.batch)
        return [IdlePath(*row) for row in rows]

    async def close(self, idle: IdlePath, now: datetime) -> bool:
        """Abandon ``idle`` in its tenant if, under its session's lock, it is still active
        and still idle; whether it was abandoned."""
        owner = idle.owner_id
        async with tenant_session(self.tenants, owner) as session, session.begin():
            await repository.lock_session(session, owner, idle.session)
            found = await repository.active_path(session, owner, idle.session)
            if found is None or found[0] != idle.path_id:
                return False  # closed meanwhile (resolved, abandoned by hand)
            stored = path_from_context(*found)
            if stored.state.sequence != idle.sequence:
                return False  # a waypoint came after the query
            if sweep(stored.state, now, self.idle_after).state.status is not Status.ABANDONED:
                return False
            writer = GeneratedWriter(
                session, self.embedder, self.limits, Principal(owner, "path-sweep"),
                self.transforms,
            )  # fmt: skip
            reason = f"no waypoint for {self.settings.abandon_after_s:g} s"
            await abandon_path(writer, stored, now, reason)
        ABANDONED.inc()
        return True

    async def run_once(self, now: datetime | None = None) -> int:
        """Abandon one batch of idle paths; returns how many were abandoned."""
        now = now or datetime.now(UTC)
        due = await self.due(now)
        abandoned = [await self.close(idle, now) for idle in due]
        if any(abandoned):
            log.info("abandoned %d idle debug paths", sum(abandoned))
        return sum(abandoned)


async def run_sweeps(job: AbandonSweep) -> None:
    """Forever, from one interval after start: abandon the idle paths, then wait (a batch
    with a path kept ends the round: it is not due again, and nothing loops on it)."""
    interval = job.settings.sweep_interval_s
    while True:
        await asyncio.sleep(interval)
        try:
            while await job.run_once() >= job.batch:
                pass
        except asyncio.CancelledError:
            raise
        except Exception:
            log.warning("debug path sweep failed; next attempt in %.0f s", interval, exc_info=True)
