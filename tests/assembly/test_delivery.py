"""Assembly under redelivery and competing workers: each trigger is assembled once, a
redelivered event rewrites the same record, a worker that dies mid-assembly loses nothing."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import httpx
from fastapi import FastAPI
from sqlalchemy import text
from tests.assembly.helpers import insert_quietly, post, session_agent

from cairn.context.agents import Agent
from cairn.events.consumer import ConsumerRunner, database_runner
from cairn.events.messages import ConsumerSpec, Delivery


def _agent(app: FastAPI, key: str) -> Agent:
    return session_agent(app, f"mem-{key}", key, budget=300)


def _runner(
    app: FastAPI, handler: Any, durable: str, *, concurrency: int = 1, ack_wait_s: float = 30.0
) -> ConsumerRunner:
    resources = app.state.resources

    async def on_delivery(delivery: Delivery) -> None:
        await handler(delivery.event())

    spec = ConsumerSpec(durable, concurrency, ack_wait_s, max_deliveries=20)
    return database_runner(
        resources.nats, on_delivery, spec, resources.session_factory, resources.settings.events
    )


async def _context_events(app: FastAPI, consumer: str) -> list[str]:
    query = text(
        "SELECT payload->>'type' FROM outbox WHERE payload->>'schema_name' = 'agent.context.v1'"
        " AND payload->'tags' ? :tag ORDER BY id"
    )
    async with app.state.resources.system_engine.connect() as connection:
        return list((await connection.execute(query, {"tag": f"consumer:{consumer}"})).scalars())


async def test_redelivered_event_rewrites_the_same_record(
    client: httpx.AsyncClient, app: FastAPI
) -> None:
    key = uuid.uuid4().hex[:8]
    agent = _agent(app, key)
    # Written without an event: a worker running meanwhile must not build edges for it
    # between the two assemblies (the text is compared).
    trigger = await insert_quietly(app, "first", tags=[f"session:{key}"], context={"text": "first"})
    builder = app.state.resources.contexts
    first = await builder.build(agent, trigger, "event-1")
    again = await builder.build(agent, trigger, "event-1")  # the same event, delivered twice
    assert first is not None and again is not None
    assert again["id"] == first["id"] and again["version"] == first["version"] + 1
    assert again["context"]["formatted_context"] == first["context"]["formatted_context"]
    assert await _context_events(app, agent.agent_id) == [
        "breadcrumb.created",
        "breadcrumb.updated",
    ]


async def test_worker_killed_mid_assembly_is_redelivered_and_assembled_once(
    client: httpx.AsyncClient, app: FastAPI
) -> None:
    key = uuid.uuid4().hex[:8]
    agent, durable = _agent(app, key), f"crash-{key}"
    js = app.state.resources.nats.jetstream()
    builder = app.state.resources.contexts
    seen: list[str] = []
    hang = asyncio.Event()

    def is_trigger(event: dict[str, Any]) -> bool:  # not the context it produces
        tags = event.get("tags", [])
        return f"session:{key}" in tags and event.get("schema_name") != "agent.context.v1"

    async def dies_mid_assembly(event: dict[str, Any]) -> None:
        if is_trigger(event):
            seen.append("first worker")
            await hang.wait()  # never finishes: the process is about to die

    async def assembles(event: dict[str, Any]) -> None:
        if is_trigger(event):
            seen.append("second worker")
            await builder.build(agent, uuid.UUID(event["breadcrumb_id"]), event["event_id"])

    first = _runner(app, dies_mid_assembly, durable, ack_wait_s=1.5)
    dying = asyncio.create_task(first.run())
    await asyncio.sleep(0.3)  # the durable exists before the trigger is posted
    await post(client, tags=[f"session:{key}"], context={"text": "trigger"})
    for _ in range(50):
        if seen:
            break
        await asyncio.sleep(0.1)
    dying.cancel()  # killed without ack or nak
    await asyncio.gather(dying, return_exceptions=True)
    second = _runner(app, assembles, durable, ack_wait_s=1.5)
    surviving = asyncio.create_task(second.run())
    try:
        for _ in range(100):
            if await _context_events(app, agent.agent_id):
                break
            await asyncio.sleep(0.1)
        await asyncio.sleep(2.0)  # long enough for any second redelivery to show up
    finally:
        await second.stop()
        await surviving
        await js.delete_consumer("BREADCRUMBS", durable)
    assert seen == ["first worker", "second worker"]
    assert await _context_events(app, agent.agent_id) == ["breadcrumb.created"]


async def test_two_workers_share_the_stream_without_double_assembly(
    client: httpx.AsyncClient, app: FastAPI
) -> None:
    key = uuid.uuid4().hex[:8]
    agent, durable = _agent(app, key), f"pair-{key}"
    js = app.state.resources.nats.jetstream()
    builder = app.state.resources.contexts
    handled: dict[str, list[str]] = {"a": [], "b": []}

    def handler(name: str) -> Any:
        async def handle(event: dict[str, Any]) -> None:
            if f"pair:{key}" in event.get("tags", []):
                handled[name].append(event["breadcrumb_id"])
                await builder.build(agent, uuid.UUID(event["breadcrumb_id"]), event["event_id"])

        return handle

    consumers = [_runner(app, handler(n), durable, concurrency=2) for n in "ab"]
    tasks = [asyncio.create_task(c.run()) for c in consumers]
    await asyncio.sleep(0.3)
    triggers = [
        str(await post(client, tags=[f"pair:{key}", f"session:{key}-{i}"])) for i in range(12)
    ]
    try:
        for _ in range(100):
            if len(handled["a"]) + len(handled["b"]) >= len(triggers):
                break
            await asyncio.sleep(0.1)
        await asyncio.sleep(0.5)
    finally:
        for consumer in consumers:
            await consumer.stop()
        await asyncio.gather(*tasks)
        await js.delete_consumer("BREADCRUMBS", durable)
    assert sorted(handled["a"] + handled["b"]) == sorted(triggers)  # each exactly once
    assert await _context_events(app, agent.agent_id) == ["breadcrumb.created"] * len(triggers)
