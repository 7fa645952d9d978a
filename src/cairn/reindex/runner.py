"""The reindex runner: a job's records, batch by batch, each batch committed with the cursor.

A batch is read and its texts rendered and embedded (one embedder call) outside any write
transaction; then one transaction locks the job row — only while this runner holds the
lease and the cursor is where the batch began — writes every record (each in a savepoint:
a failing record is counted and listed, the others go on), rebuilds their edges and moves
the cursor. A crash loses at most the batch in flight, which the next runner does again:
every record is reindexed once. An embedder that fails aborts the batch (nothing written);
the job stays where it was.

Runs on the schema owner's sessions (every tenant): every query names the job's tenant.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from cairn.breadcrumbs.chunks import ChunkWindow, embed_chunks
from cairn.breadcrumbs.derived import is_embedded, render_llm_texts
from cairn.config import ReindexSettings, TransformSettings
from cairn.context.domain_store import load_domains
from cairn.edges.builder import EdgeOptions
from cairn.embedding import Embedder
from cairn.reindex import jobs
from cairn.reindex.jobs import Job, Tally
from cairn.reindex.record import Outcome, Prepared, Recompute, reindex_record
from cairn.tasks import stop_task
from cairn.transforms import Transforms

log = logging.getLogger(__name__)

Progress = Callable[[Job], None]


class LeaseLost(Exception):
    """Another runner took the job over (this one was silent past its lease)."""


def runner_name() -> str:
    """Who holds a lease: host and process, so a restart on the same host can tell that
    the holder is gone (see ``cairn.reindex.command``)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


class Reindexer:
    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        embedder: Embedder,
        settings: ReindexSettings | None = None,
        *,
        transforms: TransformSettings | None = None,
        edges: EdgeOptions | None = None,
        chunk_window: ChunkWindow | None = None,
        name: str | None = None,
    ) -> None:
        self.sessions = sessions
        self.embedder = embedder
        self.settings = settings or ReindexSettings()
        # Its own: the cached definitions are forgotten before every batch, so each renders
        # with the hints current then, whichever process changed them.
        self.transforms = Transforms(transforms)
        self.edges = edges or EdgeOptions()
        self.chunk_window = chunk_window or ChunkWindow()
        self.name = name or runner_name()

    async def claim(self, origin: str, **kw: Any) -> Job | None:
        async with self.sessions() as session, session.begin():
            return await jobs.claim(session, self.name, self.settings.lease_s, origin=origin, **kw)

    async def run(self, job: Job, progress: Progress | None = None) -> Job:
        """Reindex the rest of a claimed job; returns it finished. Raises :class:`LeaseLost`
        when another runner took it over."""
        async with self._heartbeat(job["id"]):
            while (advanced := await self.run_batch(job)) is not None:
                job = advanced
                if progress is not None:
                    progress(job)
        async with self.sessions() as session, session.begin():
            finished = await jobs.finish(session, job["id"], self.name)
        if finished is None:
            raise LeaseLost(f"reindex job {job['id']} was taken over")
        log.info("reindex job %s done: %d records", job["id"], finished["done"])
        return finished

    async def release(self, job: Job) -> None:
        async with self.sessions() as session, session.begin():
            await jobs.release(session, job["id"], self.name)

    async def run_batch(self, job: Job) -> Job | None:
        """One batch after the job's cursor, committed; None when no record is left."""
        async with self.sessions() as session:
            rows = await jobs.next_records(session, job, self.settings.batch)
            if not rows:
                return None
            self.transforms.invalidate()
            embedded = [row for row in rows if is_embedded(row)]
            texts = await render_llm_texts(self.transforms, session, job["owner_id"], embedded)
        by_id = {row["id"]: text for row, text in zip(embedded, texts, strict=True)}
        prepared = await self._embedded(rows, by_id)
        async with self.sessions() as session, session.begin():
            held = await jobs.lock_held(session, job["id"], self.name, job["cursor"])
            if held is None:
                raise LeaseLost(f"reindex job {job['id']} was taken over")
            domains = await load_domains(session, job["owner_id"], self.embedder)
            tally = await self._write(
                session, prepared, Recompute(domains, self.edges, self.embedder)
            )
            return await jobs.advance(
                session, held, rows[-1]["id"], tally,
                lease_s=self.settings.lease_s, failures_kept=self.settings.failures_kept,
            )  # fmt: skip

    async def _embedded(self, rows: Sequence[Any], texts: dict[uuid.UUID, str]) -> list[Prepared]:
        """One embedder call for the batch; an embedder that fails aborts the batch."""
        vectors = dict(zip(texts, await self.embedder.embed(list(texts.values())), strict=True))
        chunks = {
            record_id: await embed_chunks(text, self.embedder, self.chunk_window)
            for record_id, text in texts.items()
        }
        return [
            Prepared(row, texts.get(row["id"]), vectors.get(row["id"]), chunks.get(row["id"], []))
            for row in rows
        ]

    async def _write(
        self, session: AsyncSession, prepared: Sequence[Prepared], using: Recompute
    ) -> Tally:
        tally = Tally()
        for item in prepared:
            try:
                async with session.begin_nested():
                    outcome = await reindex_record(session, item, using)
            except Exception as error:  # this record only: its savepoint is rolled back
                log.warning("reindex of %s failed", item.row["id"], exc_info=True)
                _count_failure(tally, item.row["id"], error)
                continue
            _count(tally, outcome)
        return tally

    @contextlib.asynccontextmanager
    async def _heartbeat(self, job_id: uuid.UUID) -> AsyncIterator[None]:
        """Renew the lease while the job runs, so a slow batch does not lose it."""

        async def beat() -> None:
            while True:
                await asyncio.sleep(self.settings.lease_s / 3)
                with contextlib.suppress(Exception):  # the batch's commit notices a lost lease
                    async with self.sessions() as session, session.begin():
                        await jobs.heartbeat(session, job_id, self.name, self.settings.lease_s)

        task = asyncio.create_task(beat(), name=f"reindex-lease-{job_id}")
        try:
            yield
        finally:
            await stop_task(task)


def _count(tally: Tally, outcome: Outcome) -> None:
    tally.done += 1
    tally.changed += outcome.changed
    tally.embedded += outcome.embedded
    tally.edges += outcome.edges


def _count_failure(tally: Tally, record_id: uuid.UUID, error: Exception) -> None:
    tally.done += 1
    tally.failed += 1
    message = f"{type(error).__name__}: {error}"
    tally.failures.append({"record_id": str(record_id), "error": message})
