"""``cairn reindex``: the operator's reindex, run in the command's own process.

It connects as the schema owner (``CAIRN_ADMIN_DATABASE_URL``, else ``DATABASE_URL``) and
embeds with the local ONNX model, like ``cairn migrate``: no server needs to run. Every
tenant unless ``--tenant`` names one; one job per tenant holding selected records, all
created in one transaction. Run again after a crash with the same filters, it resumes the
unfinished jobs instead of creating new ones; a job whose lease is held by a process of this
host that no longer exists is taken over at once, one held elsewhere once its lease expires.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

from cairn.breadcrumbs.chunks import ChunkWindow
from cairn.config import Settings
from cairn.db.engine import create_engine, create_session_factory
from cairn.embedding.factory import load_embedder
from cairn.reindex import jobs
from cairn.reindex.jobs import CLI, DONE, Job, Selection
from cairn.reindex.runner import LeaseLost, Reindexer

log = logging.getLogger(__name__)

WAIT_S = 1.0


@dataclass
class Summary:
    jobs: list[Job] = field(default_factory=list)
    resumed: bool = False
    others_unfinished: int = 0
    seconds: float = 0.0

    def count(self, name: str) -> int:
        return sum(int(job[name]) for job in self.jobs)

    def text(self) -> str:
        tenants = len({job["owner_id"] for job in self.jobs})
        lines = [
            f"reindexed {self.count('done')} records of {tenants} tenant(s)"
            + (" (resumed)" if self.resumed else "")
            + f": {self.count('changed')} with a changed llm_text,"
            f" {self.count('embedded')} re-embedded, {self.count('edges')} edges,"
            f" {self.count('failed')} failures, {self.seconds:.1f} s"
        ]
        lines += [
            f"  failed: {failure['record_id']}: {failure['error']}"
            for job in self.jobs
            for failure in job["failures"]
        ]
        if self.others_unfinished:
            lines.append(
                f"note: {self.others_unfinished} unfinished reindex job(s) with other filters"
                " remain; run `cairn reindex` with their filters to finish them"
            )
        return "\n".join(lines)


def parse_since(value: str | None) -> datetime | None:
    """An ISO 8601 date or time; without a zone, UTC. Raises ValueError."""
    if value is None:
        return None
    parsed = datetime.fromisoformat(value)
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


async def reindex(
    settings: Settings,
    selection: Selection,
    owners: Sequence[uuid.UUID] | None,
    *,
    show_progress: bool,
) -> Summary:
    url = settings.system_database_url
    if not url:
        raise ValueError("set DATABASE_URL (or CAIRN_ADMIN_DATABASE_URL)")
    engine = create_engine(url, settings, pool_size=2, max_overflow=2)
    embedder = await asyncio.to_thread(load_embedder, settings)
    started = time.monotonic()
    try:
        sessions = create_session_factory(engine)
        runner = Reindexer(
            sessions, embedder, settings.reindex, transforms=settings.transforms,
            chunk_window=ChunkWindow.of(settings.embedding),
        )  # fmt: skip
        summary = await _prepare(runner, selection, owners)
        ids = [job["id"] for job in summary.jobs]
        with _Bar(summary.jobs, show_progress) as bar:
            summary.jobs = await _run_all(runner, ids, bar.update)
    finally:
        await embedder.aclose()
        await engine.dispose()
    summary.seconds = time.monotonic() - started
    return summary


async def _prepare(
    runner: Reindexer, selection: Selection, owners: Sequence[uuid.UUID] | None
) -> Summary:
    """The unfinished jobs of the same filters (a resumed run), else new ones."""
    async with runner.sessions() as session, session.begin():
        unfinished = await jobs.unfinished_cli_jobs(session, owners)
        same = [job for job in unfinished if jobs.same_selection(job, selection)]
        others = len(unfinished) - len(same)
        if same:
            return Summary(list(same), resumed=True, others_unfinished=others)
        ids = await jobs.create_cli_jobs(session, selection, owners)
        return Summary(list(await jobs.by_ids(session, ids)), others_unfinished=others)


async def _run_all(
    runner: Reindexer, ids: list[uuid.UUID], progress: Callable[[Job], None]
) -> list[Job]:
    """Claim and run each job; wait for those another live runner holds."""
    remaining, waited = list(ids), False
    while remaining:
        async with runner.sessions() as session:
            current = await jobs.by_ids(session, remaining)
        remaining = [job["id"] for job in current if job["state"] != DONE]
        dead = [job["lease_owner"] for job in current if _holder_gone(job["lease_owner"])]
        job = await runner.claim(CLI, among=remaining, dead_holders=dead) if remaining else None
        if job is not None:
            progress(job)
            await _run_one(runner, job, progress)
        elif remaining:
            if not waited:
                log.warning("waiting for reindex jobs another runner holds: %s", _holders(current))
                waited = True
            await asyncio.sleep(WAIT_S)
    async with runner.sessions() as session:
        return list(await jobs.by_ids(session, ids))


async def _run_one(runner: Reindexer, job: Job, progress: Callable[[Job], None]) -> None:
    try:
        await runner.run(job, progress)
    except LeaseLost:  # another runner took it over: the loop waits for it
        return
    except BaseException:  # Ctrl-C, an embedder failure: the next run need not wait
        await asyncio.shield(runner.release(job))
        raise


def _holders(current: Sequence[Job]) -> str:
    held = {job["lease_owner"] for job in current if job["lease_owner"] and job["state"] != DONE}
    return ", ".join(sorted(held)) or "(none)"


def _holder_gone(holder: str | None) -> bool:
    """Whether a lease is held by a process of this host that has exited."""
    if holder is None:
        return False
    host, _, rest = holder.partition(":")
    pid = rest.partition(":")[0]
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


class _Bar:
    """A rich progress bar on stderr over every job's records (nothing when not shown)."""

    def __init__(self, started: Sequence[Job], shown: bool) -> None:
        self.done = {job["id"]: int(job["done"]) for job in started}
        self.totals = {job["id"]: int(job["total"]) for job in started}
        self.progress = Progress(
            "[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(),
            TimeRemainingColumn(), console=Console(stderr=True), disable=not shown,
        )  # fmt: skip
        self.task = self.progress.add_task("reindex", total=sum(self.totals.values()))

    def update(self, job: Job) -> None:
        self.done[job["id"]], self.totals[job["id"]] = int(job["done"]), int(job["total"])
        total = max(sum(self.totals.values()), sum(self.done.values()))
        self.progress.update(self.task, completed=sum(self.done.values()), total=total)

    def __enter__(self) -> _Bar:
        self.progress.start()
        self.progress.update(self.task, completed=sum(self.done.values()))
        return self

    def __exit__(self, *_: object) -> None:
        self.progress.stop()
