"""A PostgreSQL outage while the worker holds events: every trigger is assembled once the
database is back, none is given up, and waiting does not count as a delivery. Its own
PostgreSQL and NATS, so that stopping the database disturbs no other test."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine
from tests.assembly.helpers import post
from tests.waiting import eventually

from cairn.api.app import create_app
from cairn.config import Settings
from cairn.context.agents import AGENT_SCHEMA
from cairn.context.builder import ContextBuilder
from cairn.db.engine import create_engine, create_session_factory
from cairn.db.roles import DEFAULT_APP_ROLE
from cairn.events.consumer import ConsumerRunner
from cairn.events.consumer_metrics import HELD, MESSAGES
from cairn.events.nats_client import NatsHolder
from cairn.events.payloads import STREAM_NAME
from cairn.runtime import EmbeddedNats, EmbeddedPostgres, free_port
from cairn.transforms import Transforms
from cairn.worker.app import NoEmbedder, worker_consumer

DURABLE = "outage-worker"  # not the session worker's, so that its metrics are this test's
TRIGGERS = 8
OUTAGE_S = 5.0  # with three deliveries allowed, per-second redelivery would give up at ~3 s


@dataclass
class World:
    postgres: EmbeddedPostgres
    settings: Settings
    app: FastAPI
    client: httpx.AsyncClient
    holder: NatsHolder
    engine: AsyncEngine


@pytest.fixture
async def world(settings: Settings) -> AsyncIterator[World]:
    root = Path(tempfile.mkdtemp(prefix="cairn-test-outage-"))
    postgres = EmbeddedPostgres(root / "postgres", port=free_port(), fast=True)
    nats = EmbeddedNats(root / "nats")
    postgres.start()
    nats.start()
    events = settings.events.model_copy(
        update={"consumer_max_deliveries": 3, "consumer_outage_max_backoff_s": 0.5}
    )
    isolated = settings.model_copy(
        update={
            "admin_database_url": postgres.url,
            "database_url": postgres.url_for(DEFAULT_APP_ROLE),
            "nats_url": nats.url,
            "events": events,
        }
    )
    app = create_app(isolated)
    engine = create_engine(postgres.url_for(DEFAULT_APP_ROLE), isolated)
    holder = NatsHolder(nats.url)
    try:
        async with app.router.lifespan_context(app):
            await asyncio.wait_for(app.state.resources.nats.ready.wait(), 10)
            await holder.run()
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://cairn.test") as c:
                yield World(postgres, isolated, app, c, holder, engine)
    finally:
        await holder.close()
        await engine.dispose()
        nats.stop()
        postgres.stop()
        shutil.rmtree(root, ignore_errors=True)


async def test_a_database_outage_loses_no_trigger(world: World) -> None:
    key = uuid.uuid4().hex[:8]
    agent_id = f"outage-{key}"
    sessions = create_session_factory(world.engine)
    builder = await asyncio.to_thread(
        ContextBuilder.create,
        world.settings,
        sessions,
        Transforms(world.settings.transforms),
        NoEmbedder(),
    )

    def worker() -> ConsumerRunner:
        return worker_consumer(world.settings, sessions, world.holder, builder, durable=DURABLE)

    # The worker's consumer exists, then the worker is away while the triggers come in.
    first = worker()
    await _stopped(first, asyncio.create_task(first.run()), world)
    await post(
        world.client, schema_name=AGENT_SCHEMA, title=agent_id, tags=["workspace:agents"],
        context={
            "agent_id": agent_id,
            "context_trigger": {"any_tags": [f"ask:{key}"]},
            "context_sources": {"session": {"limit": 2}},
            "context_budget": 300,
        },
    )  # fmt: skip
    for i in range(TRIGGERS):
        await post(world.client, tags=[f"ask:{key}", f"session:{key}-{i}"])
    js = world.holder.jetstream()
    await eventually(lambda: _pending(js, TRIGGERS + 1))

    errors_before = _count("error") + _count("retry") + _count("dead_lettered")
    world.postgres.stop()
    second = worker()
    consuming = asyncio.create_task(second.run())
    try:
        await eventually(lambda: HELD.labels(DURABLE)._value.get() > 0, timeout=30)
        await asyncio.sleep(OUTAGE_S)
        world.postgres.start()  # the same port: the pools reconnect
        await eventually(
            lambda: _contexts(world.client, agent_id, TRIGGERS), timeout=60, tolerate=(Exception,)
        )
    finally:
        await second.stop()
        await asyncio.wait_for(consuming, 30)
    assert _count("error") + _count("retry") + _count("dead_lettered") == errors_before
    async with world.app.state.resources.system_engine.connect() as connection:
        dead = await connection.execute(text("SELECT count(*) FROM event_dead_letters"))
        assert dead.scalar_one() == 0


async def _stopped(runner: ConsumerRunner, task: asyncio.Task[None], world: World) -> None:
    js = world.holder.jetstream()

    async def bound() -> bool:
        try:
            await js.consumer_info(STREAM_NAME, DURABLE)
        except Exception:
            return False
        return True

    await eventually(bound)
    await runner.stop()
    await asyncio.wait_for(task, 10)


async def _pending(js: Any, count: int) -> bool:
    info = await js.consumer_info(STREAM_NAME, DURABLE)
    return bool(info.num_pending >= count)


async def _contexts(client: httpx.AsyncClient, agent_id: str, count: int) -> bool:
    response = await client.get(
        "/breadcrumbs", params={"schema_name": "agent.context.v1", "tag": f"consumer:{agent_id}"}
    )
    return response.status_code == 200 and len(response.json()) >= count


def _count(outcome: str) -> float:
    return float(MESSAGES.labels(DURABLE, outcome)._value.get())
