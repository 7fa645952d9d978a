"""Delivery through the real outbox → JetStream → durable consumer → local receiver."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine
from tests.factories import breadcrumb
from tests.waiting import eventually
from tests.webhooks.receiver import Receiver

from cairn.db.models import webhook_dlq

SECRET = "a-test-signing-secret"


async def register(
    client: httpx.AsyncClient, url: str, selector: dict[str, Any] | None, secret: str = SECRET
) -> str:
    agent_id = f"agent-{uuid.uuid4().hex[:10]}"
    body = {"url": url, "selector": selector, "secret": secret}
    response = await client.post(f"/agents/{agent_id}/webhooks", json=body)
    assert response.status_code == 201, response.text
    webhook_id: str = response.json()["id"]
    return webhook_id


async def post(client: httpx.AsyncClient, *tags: str, **fields: Any) -> str:
    response = await client.post("/breadcrumbs", json=breadcrumb(tags=list(tags), **fields))
    assert response.status_code == 201, response.text
    breadcrumb_id: str = response.json()["id"]
    return breadcrumb_id


async def dead_letters(db: AsyncEngine, webhook_id: str) -> list[Any]:
    query = select(webhook_dlq).where(webhook_dlq.c.webhook_id == uuid.UUID(webhook_id))
    async with db.connect() as connection:
        return list((await connection.execute(query)).mappings().all())


async def test_matching_event_is_delivered_signed(
    client: httpx.AsyncClient, receiver: Receiver, marker: str
) -> None:
    hook_id = await register(client, receiver.url, {"any_tags": [marker]})

    breadcrumb_id = await post(client, marker, "deploy")

    await eventually(lambda: len(receiver.requests) == 1)
    [request] = receiver.requests
    assert request.path == "/hook"
    assert request.signed_with(SECRET)
    assert request.headers["x-rcrt-signature"] == request.headers["x-cairn-signature"]
    assert request.headers["content-type"] == "application/json"
    assert request.headers["x-cairn-delivery-attempt"] == "1"
    assert request.headers["x-cairn-webhook-id"] == hook_id
    event = request.event
    assert event["type"] == "breadcrumb.created" and event["breadcrumb_id"] == breadcrumb_id
    assert request.headers["x-cairn-event-id"] == event["event_id"]
    assert event["context"] == breadcrumb()["context"]


async def test_only_matching_events_are_delivered(
    client: httpx.AsyncClient, receiver: Receiver, marker: str
) -> None:
    picky = await Receiver().start()
    try:
        await register(client, picky.url, {"all_tags": [marker, "wanted"]})
        await register(client, receiver.url, {"any_tags": [marker]})  # sees both: a clock

        await post(client, marker, "unwanted")
        await post(client, marker, "wanted")

        await eventually(lambda: len(receiver.requests) == 2)
        assert [r.event["tags"] for r in picky.requests] == [[marker, "wanted"]]
    finally:
        await picky.close()


async def test_selector_on_schema_and_context(
    client: httpx.AsyncClient, receiver: Receiver, marker: str
) -> None:
    selector = {
        "any_tags": [marker],
        "schema_name": "task.v1",
        "context_match": [{"path": "$.status", "op": "eq", "value": "done"}],
    }
    await register(client, receiver.url, selector)
    await register(client, receiver.url, {"any_tags": [marker], "schema_name": "note.v1"})

    await post(client, marker, schema_name="task.v1", context={"status": "open"})
    await post(client, marker, schema_name="task.v1", context={"status": "done"})
    await post(client, marker)  # note.v1: only the second webhook

    await eventually(lambda: len(receiver.requests) == 2)
    assert sorted(r.event["schema_name"] for r in receiver.requests) == ["note.v1", "task.v1"]


async def test_updates_and_deletes_are_delivered(
    client: httpx.AsyncClient, receiver: Receiver, marker: str
) -> None:
    await register(client, receiver.url, {"any_tags": [marker]})
    breadcrumb_id = await post(client, marker)
    await client.patch(f"/breadcrumbs/{breadcrumb_id}", json={"title": "Changed"})
    await client.delete(f"/breadcrumbs/{breadcrumb_id}")

    await eventually(lambda: len(receiver.requests) == 3)
    types = sorted(r.event["type"] for r in receiver.requests)
    assert types == ["breadcrumb.created", "breadcrumb.deleted", "breadcrumb.updated"]


async def test_failing_twice_then_succeeding_takes_three_attempts(
    client: httpx.AsyncClient, receiver: Receiver, marker: str, db: AsyncEngine
) -> None:
    receiver.failures_left = 2
    hook_id = await register(client, receiver.url, {"any_tags": [marker]})

    await post(client, marker)

    await eventually(lambda: len(receiver.requests) == 3)
    attempts = [r.headers["x-cairn-delivery-attempt"] for r in receiver.requests]
    assert attempts == ["1", "2", "3"]
    assert len({r.headers["x-cairn-event-id"] for r in receiver.requests}) == 1
    assert all(r.signed_with(SECRET) for r in receiver.requests)
    assert await dead_letters(db, hook_id) == []


async def test_always_failing_ends_in_the_dlq(
    client: httpx.AsyncClient, receiver: Receiver, marker: str, db: AsyncEngine
) -> None:
    receiver.always_fail = True
    hook_id = await register(client, receiver.url, {"any_tags": [marker]})

    breadcrumb_id = await post(client, marker)

    async def dead_lettered() -> bool:
        return len(await dead_letters(db, hook_id)) == 1

    await eventually(dead_lettered)
    [entry] = await dead_letters(db, hook_id)
    assert len(receiver.requests) == 3
    assert entry["attempts"] == 3 and entry["last_error"] == "HTTP 500: no thanks"
    assert entry["payload"]["breadcrumb_id"] == breadcrumb_id
    assert entry["event_id"] == receiver.requests[0].headers["x-cairn-event-id"]
    assert entry["url"] == receiver.url


async def test_unreachable_receiver_ends_in_the_dlq(
    client: httpx.AsyncClient, marker: str, db: AsyncEngine
) -> None:
    gone = await Receiver().start()
    url = gone.url
    await gone.close()  # nothing listens there any more
    hook_id = await register(client, url, {"any_tags": [marker]})

    await post(client, marker)

    async def dead_lettered() -> bool:
        return len(await dead_letters(db, hook_id)) == 1

    await eventually(dead_lettered)
    [entry] = await dead_letters(db, hook_id)
    assert entry["attempts"] == 3 and "ConnectError" in entry["last_error"]


async def test_deleted_webhook_gets_nothing(
    client: httpx.AsyncClient, receiver: Receiver, marker: str
) -> None:
    clock = await Receiver().start()
    try:
        agent_id = f"agent-{uuid.uuid4().hex[:10]}"
        created = await client.post(
            f"/agents/{agent_id}/webhooks",
            json={"url": receiver.url, "selector": {"any_tags": [marker]}},
        )
        await client.delete(f"/agents/{agent_id}/webhooks/{created.json()['id']}")
        await register(client, clock.url, {"any_tags": [marker]})

        await post(client, marker)

        await eventually(lambda: len(clock.requests) == 1)
        assert receiver.requests == []
    finally:
        await clock.close()
