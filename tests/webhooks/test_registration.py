"""Registering, listing and removing webhooks and secrets; bad input writes nothing."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from cairn.db.models import agent_secrets, webhooks

RECEIVER = "http://127.0.0.1:9/cairn"  # nothing listens: stray deliveries fail at once


def agent() -> str:
    return f"agent-{uuid.uuid4().hex[:10]}"


async def counts(db: AsyncEngine) -> tuple[int, int]:
    async with db.connect() as connection:
        hooks = (await connection.execute(select(func.count()).select_from(webhooks))).scalar()
        keys = (await connection.execute(select(func.count()).select_from(agent_secrets))).scalar()
    return int(hooks or 0), int(keys or 0)


async def test_register_generates_the_secret_once(client: httpx.AsyncClient) -> None:
    agent_id = agent()
    selector = {"any_tags": ["deploy"], "schema_name": "note.v1"}

    first = await client.post(
        f"/agents/{agent_id}/webhooks", json={"url": RECEIVER, "selector": selector}
    )
    second = await client.post(f"/agents/{agent_id}/webhooks", json={"url": RECEIVER + "/2"})

    assert first.status_code == 201, first.text
    body = first.json()
    assert uuid.UUID(body["id"]) and body["url"] == RECEIVER
    assert body["selector"]["any_tags"] == ["deploy"]
    assert len(body["secret"]) >= 32
    assert second.status_code == 201 and second.json()["secret"] is None  # never shown again


async def test_list_shows_active_webhooks_without_secrets(client: httpx.AsyncClient) -> None:
    agent_id = agent()
    created = await client.post(
        f"/agents/{agent_id}/webhooks", json={"url": RECEIVER, "secret": "s3cret-enough"}
    )
    assert created.json()["secret"] == "s3cret-enough"

    listed = (await client.get(f"/agents/{agent_id}/webhooks")).json()

    assert [hook["id"] for hook in listed] == [created.json()["id"]]
    assert set(listed[0]) == {"id", "url", "selector", "created_at"}
    assert listed[0]["selector"] is None
    assert (await client.get(f"/agents/{agent()}/webhooks")).json() == []


async def test_delete_deactivates(client: httpx.AsyncClient) -> None:
    agent_id = agent()
    hook_id = (await client.post(f"/agents/{agent_id}/webhooks", json={"url": RECEIVER})).json()[
        "id"
    ]

    deleted = await client.delete(f"/agents/{agent_id}/webhooks/{hook_id}")
    again = await client.delete(f"/agents/{agent_id}/webhooks/{hook_id}")
    elsewhere = await client.delete(f"/agents/{agent()}/webhooks/{hook_id}")

    assert deleted.status_code == 200 and deleted.json() == {"ok": True}
    assert again.status_code == 404 and again.json()["error"] == "not_found"
    assert elsewhere.status_code == 404
    assert (await client.get(f"/agents/{agent_id}/webhooks")).json() == []


async def test_set_secret(client: httpx.AsyncClient, db: AsyncEngine) -> None:
    agent_id = agent()

    response = await client.post(f"/agents/{agent_id}/secret", json={"secret": "a-new-secret"})

    assert response.status_code == 200 and response.json() == {"ok": True}
    async with db.connect() as connection:
        query = select(agent_secrets.c.secret).where(agent_secrets.c.agent_id == agent_id)
        assert (await connection.execute(query)).scalar() == "a-new-secret"
    registered = await client.post(f"/agents/{agent_id}/webhooks", json={"url": RECEIVER})
    assert registered.json()["secret"] is None  # the agent has one already


BAD_REGISTRATIONS: list[tuple[str, dict[str, Any]]] = [
    ("ftp", {"url": "ftp://files.example.com/x"}),
    ("javascript", {"url": "javascript:alert(1)"}),
    ("no host", {"url": "http:///path"}),
    ("not a url", {"url": "hooks.example.com/x"}),
    ("bad port", {"url": "http://hooks.example.com:99999/"}),
    ("bad ipv6", {"url": "http://[::1/"}),
    ("whitespace", {"url": "http://hooks.example.com/a b"}),
    ("nul", {"url": "http://hooks.example.com/\u0000"}),
    ("own address", {"url": "http://127.0.0.1:8081/breadcrumbs"}),
    ("own by name", {"url": "http://LOCALHOST:8081/"}),
    ("own ipv6", {"url": "http://[::1]:8081/x"}),
    ("own any", {"url": "http://0.0.0.0:8081/x"}),
    ("own mapped", {"url": "http://[::ffff:127.0.0.1]:8081/x"}),
    ("short secret", {"url": RECEIVER, "secret": "short"}),
    ("nul in selector", {"url": RECEIVER, "selector": {"schema_name": "a\u0000"}}),
    ("bad selector", {"url": RECEIVER, "selector": {"any_tags": "not-a-list"}}),
    ("misspelt selector key", {"url": RECEIVER, "selector": {"any_tag": ["deploy"]}}),
    ("selector key RCRT ignored", {"url": RECEIVER, "selector": {"visibility_in": ["team"]}}),
    (
        "unknown context_match key",
        {"url": RECEIVER, "selector": {"context_match": [{"path": "$.a", "value": 1, "x": 2}]}},
    ),
    ("missing url", {"selector": {}}),
]


@pytest.mark.parametrize(("case", "body"), BAD_REGISTRATIONS, ids=[c for c, _ in BAD_REGISTRATIONS])
async def test_bad_registration_writes_nothing(
    client: httpx.AsyncClient, db: AsyncEngine, case: str, body: dict[str, Any]
) -> None:
    before = await counts(db)

    response = await client.post(f"/agents/{agent()}/webhooks", json=body)

    assert response.status_code == 422, (case, response.text)
    assert set(response.json()) == {"error", "detail"}
    assert await counts(db) == before


@pytest.mark.parametrize("agent_id", ["a" * 129, "has space", "semi;colon", "slash%2Fslash"])
async def test_bad_agent_id_writes_nothing(
    client: httpx.AsyncClient, db: AsyncEngine, agent_id: str
) -> None:
    before = await counts(db)

    registered = await client.post(f"/agents/{agent_id}/webhooks", json={"url": RECEIVER})
    secret = await client.post(f"/agents/{agent_id}/secret", json={"secret": "long-enough"})

    for response in (registered, secret):
        assert 400 <= response.status_code < 500, response.text
        assert response.json()["error"]
    assert await counts(db) == before


async def test_agent_id_may_use_rcrt_characters(client: httpx.AsyncClient) -> None:
    agent_id = f"agent:{uuid.uuid4().hex[:6]}@team.example-1_x"
    response = await client.post(f"/agents/{agent_id}/webhooks", json={"url": RECEIVER})
    assert response.status_code == 201


async def test_nan_in_a_selector_is_refused(client: httpx.AsyncClient) -> None:
    body = b'{"url": "%s", "selector": {"context_match": [{"path": "$.a", "value": NaN}]}}'
    response = await client.post(
        f"/agents/{agent()}/webhooks",
        content=body % RECEIVER.encode(),
        headers={"Content-Type": "application/json"},
    )
    assert response.status_code == 422


async def test_malformed_webhook_id_is_422(client: httpx.AsyncClient) -> None:
    response = await client.delete(f"/agents/{agent()}/webhooks/not-a-uuid")
    assert response.status_code == 422 and response.json()["error"] == "invalid_input"
