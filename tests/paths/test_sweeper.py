"""The periodic abandon sweep against the real database: idle active paths of every tenant
are abandoned, each in its own tenant, unless a waypoint came after they were found."""

from __future__ import annotations

import uuid
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fastapi import FastAPI
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from cairn.breadcrumbs.generated import GeneratedWriter
from cairn.config import PathSettings
from cairn.db.engine import tenant_session
from cairn.db.tenants import ensure_tenant
from cairn.paths import repository
from cairn.paths.machine import PathState, Status
from cairn.paths.store import StoredPath, write_path
from cairn.paths.sweeper import AbandonSweep
from cairn.principal import Principal

IDLE_AFTER_S = 600.0


@pytest.fixture
def sweep(app: FastAPI) -> AbandonSweep:
    resources = app.state.resources
    return AbandonSweep(
        resources.system_sessions, resources.session_factory, resources.embedder,
        resources.settings.limits, resources.transforms,
        PathSettings(abandon_after_s=IDLE_AFTER_S),
    )  # fmt: skip


def _path(last_at: datetime, sequence: int = 2) -> StoredPath:
    state = PathState(Status.ACTIVE, "KeyError: <s>", 0, frozenset({"pytest"}), sequence, last_at)
    session = f"session:{uuid.uuid4().hex[:8]}"
    return StoredPath(uuid.uuid4(), session, state, last_at, uuid.uuid4())


async def _write(app: FastAPI, path: StoredPath, owner: uuid.UUID | None = None) -> None:
    resources = app.state.resources
    owner = owner or resources.default_tenant
    async with tenant_session(resources.session_factory, owner) as session, session.begin():
        writer = GeneratedWriter(
            session, resources.embedder, resources.settings.limits, Principal(owner, "test"),
            resources.transforms,
        )  # fmt: skip
        await write_path(writer, path)


async def _stored(db: AsyncEngine, path: StoredPath) -> Any:
    query = text("SELECT owner_id, version, context FROM breadcrumbs WHERE id = :id")
    async with db.connect() as connection:
        return (await connection.execute(query, {"id": path.id})).one()


async def test_an_idle_path_is_abandoned_and_a_fresh_one_kept(
    app: FastAPI, db: AsyncEngine, sweep: AbandonSweep
) -> None:
    now = datetime.now(UTC)
    idle, fresh = _path(now - timedelta(hours=1)), _path(now - timedelta(minutes=1))
    for path in (idle, fresh):
        await _write(app, path)
    assert await sweep.run_once(now) >= 1
    abandoned = (await _stored(db, idle)).context
    assert abandoned["status"] == "abandoned"
    assert abandoned["abandoned_at"] == now.isoformat()
    assert abandoned["abandon_reason"] == "no waypoint for 600 s"
    assert abandoned["sequence"] == 2 and abandoned["last_at"] == idle.state.last_at.isoformat()
    kept = await _stored(db, fresh)
    assert kept.context["status"] == "active" and kept.version == 1
    await sweep.run_once(now)  # an abandoned path is not due again
    assert (await _stored(db, idle)).version == 2


async def test_a_path_that_got_a_waypoint_after_the_query_is_kept(
    app: FastAPI, db: AsyncEngine, sweep: AbandonSweep
) -> None:
    now = datetime.now(UTC)
    path = _path(now - timedelta(hours=1))
    await _write(app, path)
    (idle,) = [found for found in await sweep.due(now) if found.path_id == path.id]
    # The worker adds a waypoint (under the session's lock) before the sweep takes it.
    await _write(app, replace(path, state=replace(path.state, sequence=3, last_at=now)))
    assert not await sweep.close(idle, now)
    assert (await _stored(db, path)).context["status"] == "active"


async def test_another_tenants_idle_path_is_abandoned_in_its_own_tenant(
    app: FastAPI, db: AsyncEngine, sweep: AbandonSweep
) -> None:
    resources = app.state.resources
    other = uuid.uuid4()
    await ensure_tenant(resources.engine, other, f"sweep-{other}")
    now = datetime.now(UTC)
    path = _path(now - timedelta(hours=2))
    await _write(app, path, other)
    await sweep.run_once(now)
    stored = await _stored(db, path)
    assert stored.owner_id == other and stored.context["status"] == "abandoned"
    for owner, visible in ((other, True), (resources.default_tenant, False)):
        async with tenant_session(resources.session_factory, owner) as session:
            found = await session.execute(
                text("SELECT id FROM breadcrumbs WHERE id = :id"), {"id": path.id}
            )
            assert (found.one_or_none() is not None) is visible
    query = text(
        "SELECT owner_id FROM breadcrumb_history WHERE breadcrumb_id = :id ORDER BY version"
    )
    async with db.connect() as connection:
        owners = [row.owner_id for row in await connection.execute(query, {"id": path.id})]
    assert owners == [other, other]


async def test_the_idle_query_spans_tenants_only_on_a_system_session(app: FastAPI) -> None:
    """The query names no owner: under row-level security it would see one tenant only."""
    resources = app.state.resources
    other = uuid.uuid4()
    await ensure_tenant(resources.engine, other, f"sweep-{other}")
    now = datetime.now(UTC)
    path = _path(now - timedelta(hours=3))
    await _write(app, path, other)
    later = now + timedelta(seconds=1)
    async with tenant_session(resources.session_factory, resources.default_tenant) as session:
        seen = await repository.idle_paths(session, later, limit=10_000)
    assert path.id not in {row[1] for row in seen}
    async with resources.system_sessions() as session:
        seen = await repository.idle_paths(session, later, limit=10_000)
    assert path.id in {row[1] for row in seen}
