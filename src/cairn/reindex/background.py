"""The API's background reindex: the jobs a change of a schema's hints enqueued.

Each API process polls for a ``hints`` job nobody holds (or whose holder's lease expired:
a process that died mid-job), runs it to the end and looks again. ``cli`` jobs are the
operator's (``cairn reindex`` resumes them) and are left alone here.
"""

from __future__ import annotations

import asyncio
import logging

from prometheus_client import Counter

from cairn.reindex.jobs import HINTS
from cairn.reindex.runner import LeaseLost, Reindexer

log = logging.getLogger(__name__)

REINDEXED = Counter(
    "cairn_reindexed_records_total", "Records whose derived fields a background reindex rewrote"
)


async def run_pending(reindexer: Reindexer) -> int:
    """Run every claimable hints job to its end; returns how many ran."""
    ran = 0
    while (job := await reindexer.claim(HINTS)) is not None:
        try:
            finished = await reindexer.run(job)
        except LeaseLost:
            log.warning("reindex job %s was taken over by another runner", job["id"])
            continue
        except BaseException:
            await asyncio.shield(reindexer.release(job))
            raise
        REINDEXED.inc(finished["done"] - job["done"])
        ran += 1
    return ran


async def run_reindexing(reindexer: Reindexer, interval_s: float) -> None:
    """Forever: run pending reindex jobs, then look again after ``interval_s``."""
    while True:
        try:
            await run_pending(reindexer)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.warning("reindex failed; next attempt in %.0f s", interval_s, exc_info=True)
        await asyncio.sleep(interval_s)
