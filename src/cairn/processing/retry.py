"""The retry job: stages that failed, or that are pending past their due time, are run
again with exponential backoff until they succeed or run out of attempts.

It generalises the former embedding back-fill: it looks across every tenant, so it claims
due rows on the system sessions (exempt from row-level security), and it runs in the API
process, where the embedder is. A claimed row is leased (``next_attempt_at`` moved ahead),
so several API processes share the queue and a crashed attempt is taken up again once its
lease runs out. Each stage's redo lives in ``redo``; the result is recorded in the same
transaction as the stage's own write, unless a write of the record settled it meanwhile.
"""

from __future__ import annotations

import asyncio
import logging
from collections import defaultdict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field

from prometheus_client import Counter
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from cairn.breadcrumbs.chunks import ChunkWindow
from cairn.config import ProcessingSettings
from cairn.embedding import Embedder
from cairn.processing import repository
from cairn.processing.repository import Due
from cairn.processing.stages import FAILED, Outcome

log = logging.getLogger(__name__)

RETRIES = Counter(
    "cairn_processing_retries_total",
    "Stages the retry job ran again, by stage and outcome (done, failed, not_needed, "
    "superseded: a write settled it meanwhile)",
    ["stage", "outcome"],
)


@dataclass
class RetryJob:
    """What a stage's redo needs, and how its results are recorded."""

    system: async_sessionmaker[AsyncSession]
    tenants: async_sessionmaker[AsyncSession]  # row-level security on: the edge queries
    embedder: Embedder
    settings: ProcessingSettings = field(default_factory=ProcessingSettings)
    chunk_window: ChunkWindow = field(default_factory=ChunkWindow)

    def next_in_s(self, attempts: int) -> float | None:
        """Seconds before the next try after ``attempts`` failed ones (None: give up)."""
        if attempts >= self.settings.retry_max_attempts:
            return None
        delay = self.settings.retry_backoff_s * 2 ** max(attempts - 1, 0)
        return float(min(delay, self.settings.retry_max_backoff_s))

    async def finish(self, session: AsyncSession, due: Due, outcome: Outcome) -> bool:
        """Record ``outcome`` for ``due`` in the caller's transaction."""
        tried = due.attempts + (outcome.state == FAILED)
        next_in_s = self.next_in_s(tried) if outcome.state == FAILED else None
        recorded = await repository.record_retry(session, due, outcome, next_in_s=next_in_s)
        RETRIES.labels(due.stage, outcome.state if recorded else "superseded").inc()
        return recorded

    async def run_once(self) -> int:
        """Claim one batch of due stages and run each again; returns how many were claimed."""
        from cairn.processing.redo import REDO  # the stages' own modules, loaded when used

        async with self.system() as session, session.begin():
            claimed = await repository.claim_due(
                session, limit=self.settings.retry_batch, lease_s=self.settings.retry_lease_s
            )
        for stage, items in _by_stage(claimed).items():
            redo = REDO.get(stage)
            if redo is None:  # a stage whose redo this process lacks: its lease runs out
                log.warning("no retry for processing stage %s (%d due)", stage, len(items))
                continue
            await redo(self, items)
        if claimed:
            log.info("retried %d processing stages", len(claimed))
        return len(claimed)


Redo = Callable[[RetryJob, Sequence[Due]], Awaitable[None]]


def _by_stage(claimed: Sequence[Due]) -> Mapping[str, list[Due]]:
    grouped: dict[str, list[Due]] = defaultdict(list)
    for due in claimed:
        grouped[due.stage].append(due)
    return grouped


async def run_retries(job: RetryJob) -> None:
    """Forever, from one interval after start: drain the due stages, then wait."""
    interval = job.settings.retry_interval_s
    while True:
        await asyncio.sleep(interval)
        try:
            while await job.run_once():
                pass
        except asyncio.CancelledError:
            raise
        except Exception:
            log.warning("processing retry failed; next attempt in %.0f s", interval, exc_info=True)
