"""Coverage as Prometheus gauges, across every tenant: recomputed periodically by the API
on a system session, so a scrape reads numbers and never queries the database."""

from __future__ import annotations

import asyncio
import logging

from prometheus_client import Gauge
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from cairn.processing import queries
from cairn.processing.coverage import figures
from cairn.processing.stages import STATES

log = logging.getLogger(__name__)

RECORDS = Gauge("cairn_records", "Live records, every tenant")
STAGE_RECORDS = Gauge(
    "cairn_processing_records",
    "Live records per processing stage and state (untracked: no state recorded)",
    ["stage", "state"],
)
DONE_PERCENT = Gauge(
    "cairn_processing_done_percent",
    "Share of the records that need a stage for which it is done (0-100)",
    ["stage"],
)
ISLANDS = Gauge("cairn_processing_islands", "Live records with no edge at all")


async def refresh_gauges(sessions: async_sessionmaker[AsyncSession]) -> None:
    """The figures of ``GET /coverage``'s top level, summed over every tenant."""
    async with sessions() as session:
        totals = await queries.records_by_schema(session, None)
        states = await queries.states_by_schema(session, None)
        islands, _ = await queries.islands(session, None, sample=0)
    records = sum(int(count) for _, count in totals)
    counts: dict[tuple[str, str], int] = {}
    for _, stage, state, count in states:
        counts[(stage, state)] = counts.get((stage, state), 0) + int(count)
    RECORDS.set(records)
    ISLANDS.set(islands)
    for stage, figure in figures(records, counts).items():
        for state in (*STATES, "untracked"):
            STAGE_RECORDS.labels(stage, state).set(getattr(figure, state))
        DONE_PERCENT.labels(stage).set(figure.percent)


async def run_gauges(sessions: async_sessionmaker[AsyncSession], interval_s: float) -> None:
    """Forever: recompute the gauges every ``interval_s``."""
    while True:
        try:
            await refresh_gauges(sessions)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.warning("coverage gauges not refreshed", exc_info=True)
        await asyncio.sleep(interval_s)
