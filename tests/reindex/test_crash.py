"""Crash safety: ``cairn reindex`` killed with SIGKILL halfway and run again finishes with
every record reindexed exactly once.

A test-only trigger counts, per record, the committed updates of its embedding (which a
reindex always writes) and sleeps a little in each, so the kill lands mid-job: a batch
committed apart from the job's cursor, or redone after the restart, shows as a count of 2.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine
from tests.factories import breadcrumb
from tests.waiting import eventually

from cairn.config import Settings

REPO = Path(__file__).resolve().parents[2]
RECORDS = 30

pytestmark = pytest.mark.slow


def _command(settings: Settings, tenant: uuid.UUID) -> tuple[list[str], dict[str, str]]:
    env = {
        **os.environ,
        "CAIRN_ADMIN_DATABASE_URL": str(settings.admin_database_url),
        "DATABASE_URL": str(settings.database_url),
        "CAIRN_EMBEDDING__MODEL_DIR": str(settings.model_dir),
    }
    command = [str(REPO / ".venv/bin/cairn"), "reindex", "--tenant", str(tenant), "--batch", "1"]
    return command, env


async def _counting_trigger(db: AsyncEngine, tenant: uuid.UUID, suffix: str) -> None:
    statements = [
        f"CREATE TABLE reindexed_{suffix} (record_id uuid PRIMARY KEY, n int NOT NULL)",
        f"CREATE FUNCTION count_{suffix}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
        f" INSERT INTO reindexed_{suffix} VALUES (NEW.id, 1)"
        f" ON CONFLICT (record_id) DO UPDATE SET n = reindexed_{suffix}.n + 1;"
        " PERFORM pg_sleep(0.1); RETURN NULL; END $$",
        f"CREATE TRIGGER count_{suffix} AFTER UPDATE OF embedding ON breadcrumbs FOR EACH ROW"
        f" WHEN (NEW.owner_id = '{tenant}') EXECUTE FUNCTION count_{suffix}()",
    ]
    async with db.begin() as connection:
        for statement in statements:
            await connection.execute(text(statement))


async def _drop(db: AsyncEngine, suffix: str) -> None:
    async with db.begin() as connection:
        await connection.execute(text(f"DROP TRIGGER IF EXISTS count_{suffix} ON breadcrumbs"))
        await connection.execute(text(f"DROP FUNCTION IF EXISTS count_{suffix}()"))
        await connection.execute(text(f"DROP TABLE IF EXISTS reindexed_{suffix}"))


async def _job(db: AsyncEngine, tenant: uuid.UUID) -> dict[str, Any] | None:
    query = text("SELECT * FROM reindex_jobs WHERE owner_id = :owner AND origin = 'cli'")
    async with db.connect() as connection:
        rows = (await connection.execute(query, {"owner": tenant})).mappings().all()
    assert len(rows) <= 1, "a restart must resume the job, not start another"
    return dict(rows[0]) if rows else None


async def test_a_killed_reindex_resumes_and_reindexes_every_record_once(
    client: httpx.AsyncClient, db: AsyncEngine, tenant: uuid.UUID, settings: Settings
) -> None:
    for n in range(RECORDS):
        body = breadcrumb(title=f"Note {n}", context={"text": f"observation number {n}"})
        assert (await client.post("/breadcrumbs", json=body)).status_code == 201
    suffix = uuid.uuid4().hex[:10]
    await _counting_trigger(db, tenant, suffix)
    command, env = _command(settings, tenant)
    try:
        process = await asyncio.create_subprocess_exec(
            *command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )

        async def some_batches_done() -> bool:
            job = await _job(db, tenant)
            return job is not None and job["done"] >= 5

        await eventually(some_batches_done, timeout=90, interval=0.01)
        process.send_signal(signal.SIGKILL)
        assert await asyncio.wait_for(process.wait(), 30) == -signal.SIGKILL
        killed = await _job(db, tenant)
        assert killed is not None and killed["state"] != "done" and killed["done"] < RECORDS

        done = await asyncio.to_thread(
            subprocess.run, command, env=env, capture_output=True, text=True, timeout=180
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert f"reindexed {RECORDS} records" in done.stdout and "(resumed)" in done.stdout

        job = await _job(db, tenant)
        assert job is not None
        assert (job["state"], job["done"], job["total"]) == ("done", RECORDS, RECORDS)
        async with db.connect() as connection:
            counts = (await connection.execute(text(f"SELECT n FROM reindexed_{suffix}"))).all()
        assert len(counts) == RECORDS and {n for (n,) in counts} == {1}
    finally:
        await _drop(db, suffix)
