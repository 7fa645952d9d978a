"""The test session's real services: one PostgreSQL+pgvector and one NATS JetStream, started
from the PyPI packages in a temporary directory, and one app (with the real ONNX embedder)
served in-process over httpx."""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import sys
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from nats.js.errors import NotFoundError
from pydantic import SecretStr
from tests.processes import served
from tests.waiting import eventually

from cairn.api.app import create_app
from cairn.config import (
    EmbeddingSettings,
    EventSettings,
    PathSettings,
    ProcessingSettings,
    ReindexSettings,
    SecretSettings,
    Settings,
)
from cairn.db.roles import DEFAULT_APP_ROLE
from cairn.events.payloads import STREAM_NAME
from cairn.logging import StderrHandler
from cairn.runtime import EmbeddedNats, EmbeddedPostgres
from cairn.secrets.crypto import new_kek
from cairn.tasks import stop_tasks

REPO = Path(__file__).resolve().parents[1]
# Fast webhook retries, and no webhook cache, so that a webhook registered by a test is used
# for the very next event.
TEST_EVENTS = EventSettings(
    webhook_timeout_s=2.0,
    webhook_max_attempts=3,
    webhook_backoff_s=0.05,
    webhook_cache_ttl_s=0.0,
    webhook_requeue_poll_s=0.1,
)


@dataclass(frozen=True)
class Services:
    postgres: EmbeddedPostgres
    nats: EmbeddedNats


@pytest.fixture(scope="session", autouse=True)
async def _leftover_tasks() -> AsyncIterator[None]:
    """Torn down after every other session fixture: the tasks the session left on its loop
    are stopped here, within a bound, and any that will not stop is named with its stack
    (closing the loop would wait for it without end, silently)."""
    yield
    current = asyncio.current_task()
    leftover = [task for task in asyncio.all_tasks() if task is not current]
    for task in await stop_tasks(leftover):
        print(f"task {task.get_name()} ignores its cancellation:", file=sys.stderr)
        task.print_stack(file=sys.stderr)


@pytest.fixture(autouse=True)
def _root_logger_back() -> Iterator[None]:
    """A command run in process (CliRunner) configures the root logger for the process; after
    the test the session's server must not go on logging into whatever stderr is current."""
    root = logging.getLogger()
    level = root.level
    yield
    for handler in [h for h in root.handlers if isinstance(h, StderrHandler)]:
        root.removeHandler(handler)
    root.setLevel(level)


@pytest.fixture(scope="session")
def services() -> Iterator[Services]:
    # Not under pytest's tmp_path: pytest makes that 0700 at session start, and PostgreSQL
    # runs as the unprivileged `pgserver` user when the tests run as root.
    root = Path(tempfile.mkdtemp(prefix="cairn-test-"))
    postgres = EmbeddedPostgres(root / "postgres", fast=True)
    nats = EmbeddedNats(root / "nats")
    postgres.start()
    nats.start()
    try:
        yield Services(postgres, nats)
    finally:
        nats.stop()
        postgres.stop()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def model_dir() -> Path:
    """The model `make install` built; built here on first use otherwise."""
    return Path(os.environ.get("CAIRN_TEST_MODEL_DIR", REPO / ".cairn" / "models"))


@pytest.fixture(scope="session")
def settings(
    services: Services, model_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Settings:
    return Settings(
        data_dir=tmp_path_factory.mktemp("data"),
        # As `cairn up`: the superuser migrates and runs the cross-tenant jobs, everything
        # else logs in as the application role, under row-level security.
        admin_database_url=services.postgres.url,
        database_url=services.postgres.url_for(DEFAULT_APP_ROLE),
        nats_url=services.nats.url,
        embedding=EmbeddingSettings(model_dir=model_dir),
        # The retry job, the gauges and the path sweep run when a test runs them.
        processing=ProcessingSettings(retry_interval_s=3600, gauge_interval_s=3600),
        paths=PathSettings(sweep_interval_s=3600),
        events=TEST_EVENTS,
        secrets=SecretSettings(kek=SecretStr(new_kek())),
        reindex=ReindexSettings(poll_interval_s=0.2),  # a hint change is reindexed at once
    )


@pytest.fixture(scope="session")
async def app(settings: Settings) -> AsyncIterator[FastAPI]:
    import asyncio

    application = create_app(settings)
    async with application.router.lifespan_context(application):
        await asyncio.wait_for(application.state.resources.nats.ready.wait(), 10)
        yield application


@pytest.fixture
async def client(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://cairn.test") as http:
        yield http


@pytest.fixture
def marker() -> str:
    """A tag unique to one test, so tests sharing the database never see each other's rows."""
    return f"test:{uuid.uuid4().hex[:12]}"


@pytest.fixture
def db(app: FastAPI) -> Any:
    """The schema owner's engine, for checks that look at the tables directly (exempt from
    row-level security: it sees every tenant's rows)."""
    return app.state.resources.system_engine


@pytest.fixture(scope="session")
async def live_url(app: FastAPI) -> AsyncIterator[str]:
    """The session app served over real HTTP (for SSE), sharing its lifespan and resources."""
    async with served(app) as url:
        yield url


@pytest.fixture(scope="session")
async def worker(app: FastAPI, settings: Settings) -> AsyncIterator[None]:
    """One worker (edge and context builder) consuming the session's stream."""
    import asyncio

    from cairn.worker.app import run_worker

    stop = asyncio.Event()
    task = asyncio.create_task(run_worker(settings, stop))
    js = app.state.resources.nats.jetstream()

    async def consuming() -> bool:
        """Its durable consumer exists (what the tests post from then on reaches it)."""
        if task.done():
            task.result()  # a worker that died starting says why
        try:
            await js.consumer_info(STREAM_NAME, settings.worker_durable)
        except NotFoundError:
            return False
        return True

    await eventually(consuming, timeout=30)
    yield
    stop.set()
    await asyncio.wait_for(task, 30)


@pytest.fixture
async def tenant(app: FastAPI) -> AsyncIterator[uuid.UUID]:
    """Requests of this test act as a fresh tenant of their own (everything after the caller
    is real): what the test defines — domains, say — affects nobody else's records."""
    from cairn.api import deps
    from cairn.db.tenants import ensure_tenant
    from cairn.principal import Principal

    owner = uuid.uuid4()
    await ensure_tenant(app.state.resources.engine, owner, f"test-{owner}")
    app.dependency_overrides[deps.get_principal] = lambda: Principal(owner, "fresh-tenant")
    try:
        yield owner
    finally:
        app.dependency_overrides.pop(deps.get_principal, None)
