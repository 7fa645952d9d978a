"""Events stay in their tenant: SSE, webhooks and the context builder see only the
tenant's own records (and, for SSE, records another tenant granted ``subscribe`` on)."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import httpx
from fastapi import FastAPI
from tests.factories import breadcrumb
from tests.security.conftest import Caller, caller_headers
from tests.stream.sse_client import sse
from tests.waiting import eventually
from tests.webhooks.receiver import Receiver


async def _post(client: httpx.AsyncClient, **overrides: Any) -> str:
    response = await client.post("/breadcrumbs", json=breadcrumb(**overrides))
    assert response.status_code == 201, response.text
    record_id: str = response.json()["id"]
    return record_id


async def test_sse_of_tenant_b_carries_none_of_tenant_as_events(
    live_url: str, as_caller: Caller, tenant_a: uuid.UUID, tenant_b: uuid.UUID, marker: str
) -> None:
    headers = caller_headers(tenant_b, "watcher", "subscriber")
    async with (
        as_caller(tenant_a) as a,
        as_caller(tenant_b) as b,
        sse(live_url, {"any_tags": marker}, headers) as stream,
    ):
        for _ in range(3):
            await _post(a, tags=[marker], title="tenant a's news")
        sentinel = await _post(b, tags=[marker], title="tenant b's own")
        _, event = await stream.next_event()
        # Had any of A's three events leaked, it would have come first.
        assert event["breadcrumb_id"] == sentinel
        assert event["owner_id"] == str(tenant_b)


async def test_the_shared_feed_keeps_tenants_apart_on_the_same_selector(
    live_url: str, as_caller: Caller, tenant_a: uuid.UUID, tenant_b: uuid.UUID, marker: str
) -> None:
    """Both tenants' connections sit on the process's one feed with the same filter."""
    a_headers = caller_headers(tenant_a, "watcher", "subscriber")
    b_headers = caller_headers(tenant_b, "watcher", "subscriber")
    async with (
        as_caller(tenant_a) as a,
        as_caller(tenant_b) as b,
        sse(live_url, {"any_tags": marker}, a_headers) as a_stream,
        sse(live_url, {"any_tags": marker}, b_headers) as b_stream,
    ):
        a_ids = [await _post(a, tags=[marker], title=f"a {i}") for i in range(3)]
        b_ids = [await _post(b, tags=[marker], title=f"b {i}") for i in range(2)]
        a_seen = [(await a_stream.next_event())[1] for _ in a_ids]
        b_seen = [(await b_stream.next_event())[1] for _ in b_ids]
    assert [event["breadcrumb_id"] for event in a_seen] == a_ids
    assert [event["breadcrumb_id"] for event in b_seen] == b_ids
    assert {event["owner_id"] for event in b_seen} == {str(tenant_b)}


async def test_sse_delivers_a_record_another_tenant_granted_subscribe_on(
    live_url: str, as_caller: Caller, tenant_a: uuid.UUID, tenant_b: uuid.UUID, marker: str
) -> None:
    async with as_caller(tenant_a) as a, as_caller(tenant_b) as b:
        shared = await _post(a, tags=[marker], title="shared")
        private = await _post(a, tags=[marker], title="private")
        grant = {"grantee_owner_id": str(tenant_b), "action": "subscribe"}
        assert (await a.post(f"/breadcrumbs/{shared}/acl", json=grant)).status_code == 201
        headers = caller_headers(tenant_b, "watcher", "subscriber")
        async with sse(live_url, {"any_tags": marker}, headers) as stream:
            await a.post(f"/breadcrumbs/{private}/tags/add", json={"tags": ["x"]})
            await a.post(f"/breadcrumbs/{shared}/tags/add", json={"tags": ["y"]})
            sentinel = await _post(b, tags=[marker], title="tenant b's own")
            received = [(await stream.next_event())[1]["breadcrumb_id"] for _ in range(2)]
    assert received == [shared, sentinel]


async def test_webhooks_receive_only_their_tenants_events(
    as_caller: Caller, tenant_a: uuid.UUID, tenant_b: uuid.UUID, marker: str
) -> None:
    receiver = await Receiver().start()
    try:
        async with as_caller(tenant_a) as a, as_caller(tenant_b) as b:
            body = {"url": receiver.url, "selector": {"any_tags": [marker]}}
            response = await b.post("/agents/hook-b/webhooks", json=body)
            assert response.status_code == 201, response.text
            await _post(a, tags=[marker], title="tenant a's")
            mine = await _post(b, tags=[marker], title="tenant b's")
            await eventually(lambda: len(receiver.requests) >= 1)
            await asyncio.sleep(1.0)  # time for a leaked event to arrive too
        assert [r.event["breadcrumb_id"] for r in receiver.requests] == [mine]
        assert receiver.requests[0].event["owner_id"] == str(tenant_b)
    finally:
        await receiver.close()


def _agent(key: str, knowledge: str) -> dict[str, Any]:
    return {
        "schema_name": "agent.def.v1",
        "title": f"agent {key}",
        "tags": ["workspace:agents"],
        "context": {
            "agent_id": f"agent-{key}",
            "context_trigger": {"schema_name": "user.message.v1", "any_tags": [f"ask:{key}"]},
            "context_sources": {
                "always": [{"type": "schema", "schema_name": knowledge, "method": "all"}],
            },
        },
    }


async def test_the_context_builder_assembles_within_the_triggers_tenant(
    app: FastAPI, as_caller: Caller, tenant_a: uuid.UUID, tenant_b: uuid.UUID
) -> None:
    key = uuid.uuid4().hex[:8]
    knowledge = f"kb{key}.v1"
    contexts = app.state.resources.contexts
    async with as_caller(tenant_a) as a, as_caller(tenant_b) as b:
        await _post(a, **_agent(key, knowledge))
        await _post(a, schema_name=knowledge, title="Tenant A's confidential roadmap")
        await _post(b, schema_name=knowledge, title="Tenant B's public handbook")
        trigger = {"schema_name": "user.message.v1", "tags": [f"ask:{key}"], "title": "hello"}
        b_trigger = await _post(b, **trigger)
        event = {
            "type": "breadcrumb.created", "event_id": str(uuid.uuid4()),
            "breadcrumb_id": b_trigger, "owner_id": str(tenant_b), **trigger,
        }  # fmt: skip
        assert await contexts.on_event(event) == 0  # A's agent never sees B's trigger
        await _post(b, **_agent(key, knowledge))
        contexts.directory.on_event({"schema_name": "agent.def.v1", "owner_id": str(tenant_b)})
        (agent,) = await contexts.directory.agents(tenant_b)
        row = await contexts.build(agent, uuid.UUID(b_trigger), "evt")
    assert row is not None and row["owner_id"] == tenant_b
    formatted = row["context"]["formatted_context"]
    assert "Tenant B's public handbook" in formatted
    assert "Tenant A's confidential roadmap" not in formatted
