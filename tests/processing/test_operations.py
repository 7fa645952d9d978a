"""Coverage for operators: the gauges, ``cairn coverage``, the standalone worker's own
``/metrics``, and the retry job's backoff."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from tests.factories import breadcrumb
from tests.processes import REPO
from tests.test_cli_people import run
from tests.waiting import eventually

from cairn.config import ProcessingSettings, Settings
from cairn.embedding import HashEmbedder
from cairn.processing.metrics import STAGE_RECORDS, refresh_gauges
from cairn.processing.retry import RetryJob
from cairn.runtime import free_port


def test_backoff_doubles_up_to_its_cap_then_gives_up() -> None:
    settings = ProcessingSettings(retry_backoff_s=10, retry_max_backoff_s=50, retry_max_attempts=5)
    job = RetryJob(None, None, HashEmbedder(), settings)  # type: ignore[arg-type]
    assert [job.next_in_s(n) for n in range(1, 6)] == [10.0, 20.0, 40.0, 50.0, None]


def _gauge(stage: str, state: str) -> float:
    return float(STAGE_RECORDS.labels(stage, state)._value.get())


async def test_gauges_count_every_tenant_stage_and_state(
    app: FastAPI, client: httpx.AsyncClient
) -> None:
    sessions = app.state.resources.system_sessions
    await refresh_gauges(sessions)
    before = _gauge("keyed", "done")
    assert (await client.post("/breadcrumbs", json=breadcrumb())).status_code == 201
    await refresh_gauges(sessions)
    assert _gauge("keyed", "done") == before + 1
    scraped = (await client.get("/metrics")).text
    assert f'cairn_processing_records{{stage="keyed",state="done"}} {before + 1}' in scraped
    assert "cairn_processing_islands" in scraped and "cairn_processing_done_percent" in scraped


async def test_cairn_coverage_prints_the_stages_and_the_json(
    live_url: str, client: httpx.AsyncClient, marker: str
) -> None:
    body = breadcrumb(tags=[f"session:{marker}-a"])
    assert (await client.post("/breadcrumbs", json=body)).status_code == 201
    shown = await run(live_url, "coverage")
    assert shown.exit_code == 0, shown.output
    for word in ("embedded", "keyed", "chunked", "edged", "labelled", "done by schema"):
        assert word in shown.stdout
    as_json: dict[str, Any] = json.loads((await run(live_url, "coverage", "--json")).stdout)
    # The shared tenant of the test session has many sessions: only the 50 largest show.
    assert body["schema_name"] in as_json["by_schema"] and len(as_json["by_session"]) <= 50
    assert as_json["records"] >= 1 and set(as_json["stages"]) == {
        "embedded", "keyed", "chunked", "edged", "labelled",
    }  # fmt: skip


@pytest.mark.usefixtures("app")
async def test_a_standalone_worker_serves_its_own_metrics(settings: Settings) -> None:
    port = free_port()
    env = {
        **os.environ,
        "DATABASE_URL": settings.database_url or "",
        "NATS_URL": settings.nats_url or "",
    }
    command = [sys.executable, "-m", "cairn.cli", "worker", "--metrics-port", str(port)]
    worker = await asyncio.create_subprocess_exec(
        *command, env=env, cwd=REPO, stderr=subprocess.DEVNULL
    )
    try:

        async def scraped() -> bool:
            try:
                async with httpx.AsyncClient() as http:
                    answer = await http.get(f"http://127.0.0.1:{port}/metrics")
            except httpx.TransportError:
                return False
            return answer.status_code == 200 and "cairn_consumer" in answer.text

        await eventually(scraped, timeout=30)
    finally:
        worker.terminate()
        await asyncio.wait_for(worker.wait(), 30)
