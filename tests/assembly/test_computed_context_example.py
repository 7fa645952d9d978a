"""Seed 003 end to end: the computed-context example loaded as it is into a tenant of its
own, a task with two dependencies (one handoff completed, one not) gets the seed's
"Context (Computed)" layout: its patterns, warnings and code references within the easy
tier's caps, the completed handoff as prior work and not the unfinished one, the empty-state
sentences where nothing matched, and a debug view that names the dependency.

Needs agent ``sections`` / ``complexity_limits`` / ``layout`` (with ``match.where``) and the
signals stage's complexity tier: until those are merged this file is named so that pytest
does not collect it; at the merge it becomes ``test_computed_context_example.py``."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from cairn import bootstrap as bs
from cairn.api.app import create_app
from cairn.bootstrap import bootstrap, load_records
from cairn.config import Settings

EXAMPLE = bs.default_bootstrap_dir() / "examples" / "computed-context"
AGENT = "computed-context"
HEADINGS = ("Patterns to Follow", "Warnings", "Relevant Decisions", "Prior Work",
            "Code References", "Open Questions (Blocking)")  # fmt: skip


@pytest.fixture
async def tenant_client(app: FastAPI, settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    """An API process whose caller is a fresh tenant, so the shared test data stays out."""
    tenant_id = uuid.uuid4()
    tenant = settings.model_copy(
        update={"default_tenant_id": str(tenant_id), "default_tenant_name": f"seed3-{tenant_id}"}
    )
    isolated = create_app(tenant, embedder=app.state.resources.embedder, migrate=False)
    async with isolated.router.lifespan_context(isolated):
        transport = httpx.ASGITransport(app=isolated)
        async with httpx.AsyncClient(transport=transport, base_url="http://seed3.test") as client:
            yield client


async def _post(client: httpx.AsyncClient, schema: str, title: str, **context: Any) -> str:
    body = {"schema_name": schema, "title": title, "tags": ["auth"], "context": context}
    response = await client.post("/breadcrumbs", json=body)
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


async def _context_for(client: httpx.AsyncClient, trigger: str) -> dict[str, Any]:
    for _ in range(500):
        response = await client.get(f"/contexts/{AGENT}")
        if response.status_code == 200 and response.json()["context"]["trigger_id"] == trigger:
            return dict(response.json()["context"])
        await asyncio.sleep(0.02)
    raise AssertionError("no context assembled for the task")


def _section(text: str, title: str) -> str:
    """The lines under ``### title`` up to the next heading."""
    start = text.index(f"### {title}\n") + len(f"### {title}\n")
    ends = [text.find(f"### {other}\n", start) for other in HEADINGS]
    end = min([e for e in ends if e != -1], default=len(text))
    return text[start:end].strip()


async def test_a_task_gets_seed_003s_computed_context(
    worker: None, tenant_client: httpx.AsyncClient
) -> None:
    client = tenant_client
    assert (await bootstrap(client, load_records(EXAMPLE))).failed == []
    patterns = [
        ("JWT tokens are minted by one function", "src/cairn/auth/tokens.py"),
        ("Token refresh reuses the signing key rotation", "src/cairn/auth/keys.py"),
        ("Login handlers return 401 with WWW-Authenticate", "src/cairn/auth/deps.py"),
        ("Session tokens expire after one hour", "src/cairn/auth/settings.py"),
        ("Auth errors are AuthError subclasses", "src/cairn/errors.py"),
    ]
    for pattern, location in patterns:
        await _post(client, "pattern.v1", pattern, pattern=pattern, location=location,
                    applies_to=["auth", "token"])  # fmt: skip
    await _post(client, "decision.v1", "HS256 tokens",
                decision="Tokens are signed with HS256 and a per-tenant key",
                rationale="one secret per deployment")  # fmt: skip
    await _post(client, "code.reference.v1", "token minting", file="src/cairn/auth/tokens.py",
                component="Token minting", notes="mint() and verify() of login tokens")  # fmt: skip
    done = await _post(
        client, "task.handoff.v1", "Login endpoint", task="Login endpoint",
        summary="POST /auth/token exchanges a login for a JWT token.", status="completed",
        files_created=[{"file": "src/cairn/auth/endpoints.py", "reason": "the token route"}],
    )  # fmt: skip
    running = await _post(
        client, "task.handoff.v1", "Token revocation list", task="Token revocation list",
        summary="Half-done token revocation for login sessions.", status="in_progress",
    )  # fmt: skip
    task = await client.post("/breadcrumbs", json={
        "schema_name": "task.v1", "title": "Refresh tokens", "tags": ["complexity:easy"],
        "context": {"objective": "Add refresh of login JWT tokens to the auth token route",
                    "acceptance_criteria": ["expired tokens can be refreshed"],
                    "dependencies": [done, running]},
    })  # fmt: skip
    assert task.status_code == 201, task.text
    trigger = task.json()["id"]
    context = await _context_for(client, trigger)
    text = context["formatted_context"]

    assert "## Context (Computed)" in text
    positions = [text.index(f"### {title}\n") for title in HEADINGS]
    assert positions == sorted(positions)
    found = _section(text, "Patterns to Follow").splitlines()
    pattern_lines = [line for line in found if line.startswith("- **")]
    assert 1 <= len(pattern_lines) <= 3  # the easy tier's cap
    expected = {f"- **{p}** (see: {loc})" for p, loc in patterns}
    assert set(pattern_lines) <= expected
    assert _section(text, "Warnings") == "No known gotchas for this task area."
    assert "- Tokens are signed with HS256 and a per-tenant key" in _section(
        text, "Relevant Decisions"
    )
    prior = _section(text, "Prior Work")
    assert "#### Login endpoint\nPOST /auth/token exchanges a login for a JWT token." in prior
    assert "- `src/cairn/auth/endpoints.py`: the token route" in prior
    assert "Token revocation list" not in text  # not completed: not prior work
    assert _section(text, "Code References") == (
        "| Location | Component | Notes |\n|----------|-----------|-------|\n"
        "| `src/cairn/auth/tokens.py` | Token minting | mint() and verify() of login tokens |"
    )
    assert _section(text, "Open Questions (Blocking)") == ""  # no intro above no question
    assert context["token_count"] <= context["token_budget"]

    explain = context["explain"]
    assert explain["signals"]["complexity"]["tier"] == "easy"
    selected = {item["record_id"] for item in explain["selected"]}
    assert done in selected and running not in selected
    debug = await client.get(f"/contexts/{AGENT}/debug")
    assert debug.status_code == 200, debug.text
    assert f"Login endpoint (`{done}`)" in debug.text
    assert "| Patterns to Follow |" in debug.text
