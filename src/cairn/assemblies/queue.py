"""On-demand entries, written after the answer is sent.

An answer from the cache takes about a millisecond; a transaction of its own for its log
entry would take several. So ``POST /contexts/query`` puts its entry here and returns; one
task of the API process writes what has gathered within a quarter of a second, a multi-row
INSERT per tenant in one transaction each. The queue is bounded: beyond it an entry is
dropped and counted (the answers are never held up by their log). At shutdown the API
waits briefly for what is queued (``flush``); after a crash it is lost. The worker's and
``POST /contexts/assemble``'s entries do not come here: they are written in the transaction
of the context they log.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections import defaultdict

from prometheus_client import Counter
from sqlalchemy import insert
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from cairn.assemblies.entry import ASYNCHRONOUS_COMMIT, AssemblyEntry
from cairn.db.engine import tenant_session
from cairn.db.models import assemblies

log = logging.getLogger(__name__)

DROPPED = Counter(
    "cairn_assembly_log_dropped_total",
    "On-demand assembly log entries not written: queue full, or the write failed",
    ["reason"],
)


class EntryQueue:
    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        *,
        size: int = 10_000,
        batch: int = 500,
        linger_s: float = 0.25,
    ) -> None:
        self.sessions = sessions
        self.batch = batch
        self.linger_s = linger_s
        self._queue: asyncio.Queue[AssemblyEntry] = asyncio.Queue(size)

    def put(self, entry: AssemblyEntry) -> None:
        try:
            self._queue.put_nowait(entry)
        except asyncio.QueueFull:
            DROPPED.labels("queue_full").inc()

    async def flush(self) -> None:
        """Until every entry put so far is written (or failed to be)."""
        await self._queue.join()

    async def run(self) -> None:
        """Forever: once there is an entry, let others gather for ``linger_s``, then write
        them all (one transaction per tenant per batch, not one per answer)."""
        while True:
            entries = [await self._queue.get()]
            await asyncio.sleep(self.linger_s)
            while len(entries) < self.batch and not self._queue.empty():
                entries.append(self._queue.get_nowait())
            try:
                await self._write(entries)
            finally:
                for _ in entries:
                    self._queue.task_done()

    async def _write(self, entries: list[AssemblyEntry]) -> None:
        by_owner: defaultdict[uuid.UUID, list[AssemblyEntry]] = defaultdict(list)
        for entry in entries:
            by_owner[entry.owner_id].append(entry)
        for owner, theirs in by_owner.items():
            try:
                await self._write_tenant(owner, theirs)
            except Exception:  # the database may be down: these are lost, not retried
                DROPPED.labels("write_failed").inc(len(theirs))
                log.warning("could not write %d assembly log entries", len(theirs), exc_info=True)

    async def _write_tenant(self, owner: uuid.UUID, entries: list[AssemblyEntry]) -> None:
        async with tenant_session(self.sessions, owner) as session, session.begin():
            connection = await session.connection()
            await connection.execute(ASYNCHRONOUS_COMMIT)
            await connection.execute(insert(assemblies), [e.values() for e in entries])
