"""Retention: entries older than the retention go, in batches, counted by a metric; newer
ones and other tenants' newer ones stay."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime, timedelta

from fastapi import FastAPI
from prometheus_client import REGISTRY
from sqlalchemy import func, select
from tests.assemblies.helpers import entry, insert_entries

from cairn.assemblies.retention import purge_expired, run_retention
from cairn.db.models import assemblies
from cairn.db.tenants import ensure_tenant


async def _left(app: FastAPI, owner: uuid.UUID) -> int:
    query = select(func.count()).where(assemblies.c.owner_id == owner)
    async with app.state.resources.system_engine.connect() as connection:
        return int((await connection.execute(query)).scalar_one())


def _purged() -> float:
    return REGISTRY.get_sample_value("cairn_assembly_log_purged_total") or 0.0


async def test_entries_past_the_retention_are_purged_in_batches(app: FastAPI) -> None:
    owner, other, now = app.state.resources.default_tenant, uuid.uuid4(), datetime.now(UTC)
    mine = [entry(owner, f"old-{i}") for i in range(5)]
    await insert_entries(app, mine, created_at=now - timedelta(days=31))
    await insert_entries(app, [entry(owner, "recent")], created_at=now - timedelta(days=29))
    await ensure_tenant(app.state.resources.engine, other, f"test-{other}")
    await insert_entries(app, [entry(other, "theirs")], created_at=now - timedelta(days=1))
    before = _purged()
    sessions = app.state.resources.system_sessions
    purged = await purge_expired(sessions, 30, batch=2, now=lambda: now)
    assert purged >= 5  # and any old entries of other tests (tests/assemblies/test_routes.py)
    assert _purged() - before == purged
    assert await _left(app, other) == 1
    query = select(assemblies.c.agent_id).where(assemblies.c.owner_id == owner)
    async with app.state.resources.system_engine.connect() as connection:
        agents = set((await connection.execute(query)).scalars())
    assert "recent" in agents and not any(agent.startswith("old-") for agent in agents)
    assert await purge_expired(sessions, 30, batch=2, now=lambda: now) == 0


async def test_a_retention_of_zero_keeps_everything(app: FastAPI) -> None:
    # Returns at once instead of looping: nothing is ever purged.
    sessions = app.state.resources.system_sessions
    await asyncio.wait_for(run_retention(sessions, 0, 0.01, batch=10), timeout=1)
