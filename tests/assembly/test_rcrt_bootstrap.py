"""RCRT's own bootstrap data, loaded as it is into a tenant of its own: a user message in a
session gets default-chat-assistant a context with the tools (without their code), relevant
knowledge and the session's history, within budget and fully explained, in under 2 s."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from tests.fixtures_path import FIXTURES

from cairn.api.app import create_app
from cairn.bootstrap import bootstrap, load_records
from cairn.config import Settings

RCRT = FIXTURES / "rcrt-bootstrap"


@pytest.fixture
async def rcrt_client(app: FastAPI, settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    """An API process whose caller is a fresh tenant, so the shared test data stays out."""
    tenant_id = uuid.uuid4()
    tenant = settings.model_copy(
        update={"default_tenant_id": str(tenant_id), "default_tenant_name": f"rcrt-{tenant_id}"}
    )
    isolated = create_app(tenant, embedder=app.state.resources.embedder, migrate=False)
    async with isolated.router.lifespan_context(isolated):
        transport = httpx.ASGITransport(app=isolated)
        async with httpx.AsyncClient(transport=transport, base_url="http://rcrt.test") as client:
            yield client


async def _message(client: httpx.AsyncClient, session: str, content: str) -> str:
    body = {"schema_name": "user.message.v1", "title": "User Message",
            "tags": ["user:message", session], "context": {"content": content}}  # fmt: skip
    response = await client.post("/breadcrumbs", json=body)
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


async def _context_for(client: httpx.AsyncClient, session: str, trigger: str) -> dict[str, Any]:
    url = "/contexts/default-chat-assistant"
    for _ in range(200):
        response = await client.get(url, params={"session": session})
        if response.status_code == 200 and response.json()["context"]["trigger_id"] == trigger:
            return dict(response.json()["context"])
        await asyncio.sleep(0.02)
    raise AssertionError("no context assembled for the trigger")


async def test_default_chat_assistant_gets_its_context(
    worker: None, rcrt_client: httpx.AsyncClient
) -> None:
    assert (await bootstrap(rcrt_client, load_records(RCRT))).failed == []
    session = f"session:rcrt-{uuid.uuid4().hex[:8]}"
    await _message(rcrt_client, session, "Hi, I want to automate something.")
    await _message(rcrt_client, session, "I need a tool that adds numbers.")
    started = time.monotonic()
    trigger = await _message(rcrt_client, session, "How do I create a new tool for the agents?")
    context = await _context_for(rcrt_client, session.removeprefix("session:"), trigger)
    elapsed = time.monotonic() - started
    text = context["formatted_context"]
    assert elapsed < 2.0, f"took {elapsed:.2f} s"
    assert context["token_count"] <= context["token_budget"]
    assert "⟦section tools⟧" in text and "⟦item · tool.code.v1" in text
    calculator = json.loads((RCRT / "tools-self-contained" / "calculator.json").read_text())
    source = calculator["context"]["code"]["source"]
    assert not [line for line in source.splitlines() if len(line) > 30 and line in text]
    assert "⟦section knowledge⟧" in text and "Tool Creation" in text
    assert text.index("automate something") < text.index("adds numbers")  # history in order
    assert text.rstrip().endswith("How do I create a new tool for the agents?")
    explain = context["explain"]
    assert {seed["source"] for seed in explain["seeds"]} == {
        "trigger",
        "always",
        "semantic",
        "session",
    }
    assert all(
        {"source", "path_cost", "tokens", "section"} <= set(item) for item in explain["selected"]
    )
    assert {item["reason"] for item in explain["dropped"]} <= {
        "over_budget",
        "below_threshold",
        "duplicate",
        "max_nodes",
    }
