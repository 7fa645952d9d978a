"""Retention of the assembly log: a background task deletes entries older than
``context.assembly_log_retention_days``, in batches of short transactions so that a large
backlog never holds locks for long. It spans tenants, so it runs on the system sessions."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from prometheus_client import Counter
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from cairn.assemblies.repository import purge_before

log = logging.getLogger(__name__)

PURGED = Counter("cairn_assembly_log_purged_total", "Assembly log entries deleted by retention")


async def purge_expired(
    sessions: async_sessionmaker[AsyncSession],
    retention_days: float,
    *,
    batch: int,
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> int:
    """Delete every entry older than the retention, batch by batch; returns how many."""
    cutoff = now() - timedelta(days=retention_days)
    purged = 0
    while True:
        async with sessions() as session, session.begin():
            deleted = await purge_before(session, cutoff, batch)
        purged += deleted
        PURGED.inc(deleted)
        if deleted < batch:
            return purged


async def run_retention(
    sessions: async_sessionmaker[AsyncSession],
    retention_days: float,
    interval_s: float,
    *,
    batch: int,
) -> None:
    """Forever: purge, then sleep ``interval_s``. A retention of 0 keeps every entry."""
    if retention_days <= 0:
        return
    while True:
        try:
            purged = await purge_expired(sessions, retention_days, batch=batch)
            if purged:
                log.info("assembly log: purged %d entries past the retention", purged)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.warning("assembly log purge failed; next in %.0f s", interval_s, exc_info=True)
        await asyncio.sleep(interval_s)
