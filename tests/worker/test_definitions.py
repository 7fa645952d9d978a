"""Every worker sees every definition change, though JetStream hands each event (the
definition's own included) to one worker only."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
from fastapi import FastAPI
from sqlalchemy import text
from tests.assembly.helpers import post
from tests.waiting import eventually

from cairn.config import Settings
from cairn.context.agents import AGENT_SCHEMA
from cairn.context.blacklist import BLACKLIST_SCHEMA
from cairn.context.builder import ContextBuilder
from cairn.context.domains import DOMAINS_SCHEMA
from cairn.events.payloads import STREAM_NAME
from cairn.transforms import Transforms
from cairn.transforms.definitions import SCHEMA_DEFINITION
from cairn.worker.app import NoEmbedder, worker_consumer

TRIGGERS = 16


def _counting(builder: ContextBuilder, written: list[int]) -> None:
    """Count the contexts this worker's builder writes."""
    on_event: Callable[[Any], Awaitable[int]] = builder.on_event

    async def counted(event: Any) -> int:
        count = await on_event(event)
        written.append(count)
        return count

    builder.on_event = counted  # type: ignore[method-assign]


async def test_an_agent_created_after_two_workers_started_reaches_both(
    app: FastAPI, client: httpx.AsyncClient, settings: Settings
) -> None:
    key = uuid.uuid4().hex[:8]
    resources = app.state.resources
    sessions, owner = resources.session_factory, resources.default_tenant
    durable = f"pair-{key}"
    builders, written = [], [[], []]
    for count in written:
        builder = await asyncio.to_thread(
            ContextBuilder.create, settings, sessions, Transforms(settings.transforms), NoEmbedder()
        )
        await builder.directory.agents(owner)  # both started, and know the tenant's agents
        _counting(builder, count)
        builders.append(builder)
    runners = [
        worker_consumer(settings, sessions, resources.nats, b, durable=durable) for b in builders
    ]
    tasks = [asyncio.create_task(runner.run()) for runner in runners]
    js = resources.nats.jetstream()
    try:
        await eventually(lambda: _has_consumer(js, durable))
        await post(
            client, schema_name=AGENT_SCHEMA, title=f"late-{key}", tags=["workspace:agents"],
            context={
                "agent_id": f"late-{key}",
                "context_trigger": {"any_tags": [f"late:{key}"]},
                "context_sources": {"session": {"limit": 2}},
                "context_budget": 400,
            },
        )  # fmt: skip
        for i in range(TRIGGERS):
            await post(client, tags=[f"late:{key}", f"session:{key}-{i}"])
        await eventually(lambda: sum(map(sum, written)) >= TRIGGERS, timeout=60)
        await asyncio.sleep(0.5)
    finally:
        for runner in runners:
            await runner.stop()
        await asyncio.gather(*tasks)
        await js.delete_consumer(STREAM_NAME, durable)
    assert sum(written[0]) + sum(written[1]) == TRIGGERS  # each trigger assembled once
    assert all(sum(count) > 0 for count in written)  # by both workers


async def test_every_definition_schema_counts_as_a_definition_change(app: FastAPI) -> None:
    """The trigger of revisions 0011/0013 names the schemas the caches hold: the code's."""
    query = text(
        "SELECT pg_get_triggerdef(oid) FROM pg_trigger WHERE tgname = 'definitions_written'"
    )
    async with app.state.resources.system_engine.connect() as connection:
        definition = (await connection.execute(query)).scalar_one()
    for schema in (AGENT_SCHEMA, BLACKLIST_SCHEMA, SCHEMA_DEFINITION, DOMAINS_SCHEMA):
        assert f"'{schema}'" in definition


async def _has_consumer(js: Any, durable: str) -> bool:
    try:
        await js.consumer_info(STREAM_NAME, durable)
    except Exception:
        return False
    return True
