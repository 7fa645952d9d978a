"""A real ``cairn worker`` killed with SIGKILL halfway through a session's records, then
another one finishing: the session still has one path per debugging episode, one waypoint
per record and type (its events redelivered or handled twice), numbered without gaps."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import uuid
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from nats.js.client import JetStreamContext
from nats.js.errors import NotFoundError
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine
from tests.paths.test_arrival_order import SCRIPT, TRACKED
from tests.paths.test_tracking import FAILING, _paths_of, _record
from tests.processes import REPO
from tests.waiting import eventually

from cairn.config import Settings
from cairn.events.payloads import STREAM_NAME

pytestmark = pytest.mark.slow

WAYPOINTS = sum(len(types) for _, types in TRACKED)
HALF = TRACKED[0][1][:7]  # what SCRIPT's first half makes (an active path)
HALF_WAYPOINTS = len(HALF)
STALL_S = 3.0


async def _start(settings: Settings, durable: str) -> asyncio.subprocess.Process:
    """A ``cairn worker`` on a durable consumer of its own, which the worker started after
    it takes over (unacked events included). The test session's in-process worker, when one
    runs, gets the same events on its own durable: then two workers track the session at
    once, and the end state must be the same."""
    env = {
        **os.environ,
        "CAIRN_WORKER_DURABLE": durable,
        "DATABASE_URL": settings.database_url or "",
        "NATS_URL": settings.nats_url or "",
        "CAIRN_EVENTS__WORKER_ACK_WAIT_S": "5",  # the killed worker's events come back soon
    }
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "cairn.cli", "worker", "--metrics-port", "0",
        env=env, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip


async def _waypoints(db: AsyncEngine, session: str) -> list[Any]:
    query = text(
        "SELECT w.id, w.context FROM breadcrumbs w JOIN breadcrumbs p"
        " ON p.id = (w.context->>'path_id')::uuid"
        " WHERE w.schema_name = 'debug.waypoint.v1' AND p.context->>'session' = :session"
    )
    async with db.connect() as connection:
        return list(await connection.execute(query, {"session": session}))


async def _tracked(db: AsyncEngine, session: str) -> list[tuple[str, list[str]]]:
    """The session's paths, earliest first: each one's status and waypoint types in order."""
    waypoints = await _waypoints(db, session)
    shape = []
    for path in sorted(await _paths_of(db, session), key=lambda p: p.context["started_at"]):
        own = [w.context for w in waypoints if w.context["path_id"] == str(path.id)]
        types = [c["type"] for c in sorted(own, key=lambda c: int(c["sequence"]))]
        shape.append((path.context["status"], types))
    return shape


async def _until_tracked(
    db: AsyncEngine, session: str, want: list[Any], *, timeout: float, interval: float
) -> None:
    """Until the session's paths are ``want``; if they never are, the failure shows what
    they became."""

    async def done() -> bool:
        return await _tracked(db, session) == want

    try:
        await eventually(done, timeout=timeout, interval=interval)
    except AssertionError:
        assert await _tracked(db, session) == want


@asynccontextmanager
async def _stalled(db: AsyncEngine) -> AsyncIterator[None]:
    """Every waypoint insert sleeps ``STALL_S`` inside its transaction meanwhile: a worker
    is caught in the middle of a record. Dropping the trigger waits for the transaction
    the killed worker left open (its backend aborts once the sleep ends)."""
    suffix = uuid.uuid4().hex[:10]
    async with db.begin() as connection:
        await connection.execute(text(
            f"CREATE FUNCTION stall_{suffix}() RETURNS trigger LANGUAGE plpgsql AS"
            f" $$ BEGIN PERFORM pg_sleep({STALL_S}); RETURN NULL; END $$"
        ))  # fmt: skip
        await connection.execute(text(
            f"CREATE TRIGGER stall_{suffix} AFTER INSERT ON breadcrumbs FOR EACH ROW"
            f" WHEN (NEW.schema_name = 'debug.waypoint.v1') EXECUTE FUNCTION stall_{suffix}()"
        ))  # fmt: skip
    try:
        yield
    finally:
        async with db.begin() as connection:
            await connection.execute(text(f"DROP TRIGGER IF EXISTS stall_{suffix} ON breadcrumbs"))
            await connection.execute(text(f"DROP FUNCTION IF EXISTS stall_{suffix}()"))


async def _sleeping(db: AsyncEngine) -> bool:
    """Whether a transaction waits in the stall (the worker is inside a record)."""
    query = text("SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'PgSleep'")
    async with db.connect() as connection:
        return bool((await connection.execute(query)).scalar_one())


async def _batch(
    client: httpx.AsyncClient, session: str, script: list[dict[str, Any]]
) -> list[str]:
    """The records at once, in one request (the worker may take them in any order)."""
    records = []
    for context in map(dict, script):
        title = context.pop("title", "Run pytest")
        records.append({"schema_name": "tool.response.v1", "title": title, "tags": [session],
                        "context": context})  # fmt: skip
    answer = await client.post("/breadcrumbs/batch", json={"records": records})
    assert answer.status_code == 200, answer.text
    return [str(result["id"]) for result in answer.json()["results"]]


async def _consuming(client: httpx.AsyncClient, js: JetStreamContext, durable: str) -> None:
    """Until the worker on ``durable`` has handled a probe. Its consumer, made when it
    binds, gets only what is published after, and another worker handling the probes (the
    session's in-process one, when it runs) says nothing of this one."""
    probes = f"session:{uuid.uuid4().hex[:8]}"

    async def handled() -> bool:
        try:
            acked = (await js.consumer_info(STREAM_NAME, durable)).ack_floor
        except NotFoundError:
            acked = None
        if acked is not None and acked.consumer_seq > 0:
            return True
        await _record(client, probes, dict(FAILING))
        return False

    await eventually(handled, timeout=120, interval=1.0)


async def test_a_worker_killed_mid_session_leaves_one_path_and_no_duplicate(
    settings: Settings, app: FastAPI, client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    session, half = f"session:{uuid.uuid4().hex[:8]}", len(SCRIPT) // 2
    durable = f"killed-worker-{uuid.uuid4().hex[:8]}"
    first = await _start(settings, durable)
    try:
        await _consuming(client, app.state.resources.nats.jetstream(), durable)
        sources = await _batch(client, session, SCRIPT[:half])

        await _until_tracked(db, session, [("active", HALF)], timeout=120, interval=0.05)
        async with _stalled(db):
            sources += await _batch(client, session, SCRIPT[half:])
            try:
                await eventually(lambda: _sleeping(db), timeout=60, interval=0.01)
            finally:
                first.send_signal(signal.SIGKILL)
                assert await asyncio.wait_for(first.wait(), 30) == -signal.SIGKILL
    finally:
        if first.returncode is None:
            first.kill()
            await first.wait()
    killed_at = len(await _waypoints(db, session))
    assert HALF_WAYPOINTS <= killed_at < WAYPOINTS, killed_at
    second = await _start(settings, durable)
    try:
        await _until_tracked(db, session, TRACKED, timeout=180, interval=0.5)
    finally:
        second.terminate()
        await asyncio.wait_for(second.wait(), 30)
    paths = sorted(await _paths_of(db, session), key=lambda p: p.context["started_at"])
    waypoints = await _waypoints(db, session)
    assert len(waypoints) == WAYPOINTS
    per_record = Counter((w.context["source_record_id"], w.context["type"]) for w in waypoints)
    assert set(per_record.values()) == {1}
    assert {w.context["source_record_id"] for w in waypoints} <= set(sources)
    for path in paths:
        numbers = sorted(w.context["sequence"] for w in waypoints
                         if w.context["path_id"] == str(path.id))  # fmt: skip
        assert numbers == list(range(1, path.context["sequence"] + 1))
    assert paths[0].context["trigger_record_id"] == sources[0]
