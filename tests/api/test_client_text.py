"""Text PostgreSQL cannot store (lone surrogates, NUL) gets a 422 on every route that takes
a body, naming where it is, and changes nothing."""

from __future__ import annotations

import re
import uuid
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncEngine
from tests.dbcheck import row_counts

SURROGATE = '"a\\ud800b"'  # the JSON escape of a lone surrogate, sent as written
NUL = '"a\\u0000b"'


def _body_routes(app: FastAPI) -> list[tuple[str, str]]:
    routes = []
    for path, operations in app.openapi()["paths"].items():
        for method, operation in operations.items():
            if "requestBody" in operation:
                concrete = path.replace("{agent_id}", "agent-1")
                concrete = re.sub(r"\{[a-z_]+\}", lambda _: str(uuid.uuid4()), concrete)
                routes.append((method.upper(), concrete))
    return routes


async def _send(client: httpx.AsyncClient, method: str, path: str, body: str) -> httpx.Response:
    headers = {"content-type": "application/json"}
    return await client.request(method, path, content=body, headers=headers)


@pytest.mark.parametrize("bad", [SURROGATE, NUL], ids=["lone surrogate", "NUL"])
async def test_every_route_with_a_body_refuses_unstorable_text(
    app: FastAPI, client: httpx.AsyncClient, db: AsyncEngine, bad: str
) -> None:
    routes = _body_routes(app)
    assert len(routes) >= 15  # the whole surface: breadcrumbs, acl, secrets, webhooks, auth
    before = await row_counts(db)
    for method, path in routes:
        body = '{"probe": {"deep": [BAD]}}'.replace("BAD", bad)
        response = await _send(client, method, path, body)
        assert response.status_code == 422, (method, path, response.text)
        assert response.json()["error"] == "invalid_input"
        assert "body.probe.deep[0]" in response.json()["detail"], response.text
    assert await row_counts(db) == before


REALISTIC: dict[str, tuple[str, str, str]] = {
    "webhook url": ("POST", "/agents/a1/webhooks", '{"url": "http://example.com/BAD"}'),
    "webhook selector": (
        "POST",
        "/agents/a1/webhooks",
        '{"url": "http://example.com/", "selector": {"context_match": '
        '[{"path": "$.a", "value": BAD}]}}',
    ),
    "webhook secret": ("POST", "/agents/a1/secret", '{"secret": "12345678BAD"}'),
    "tenant name": ("PUT", f"/tenants/{uuid.uuid4()}", '{"name": BAD}'),
    "minted token's tenant": ("POST", "/auth/token", '{"agent_id": "a1", "tenant_name": BAD}'),
    "context assembly": ("POST", "/contexts/assemble", '{"consumer_id": BAD}'),
    "secret description": ("POST", "/secrets", '{"name": "k", "value": "v", "description": BAD}'),
}


@pytest.mark.parametrize("case", list(REALISTIC))
@pytest.mark.parametrize("bad", [SURROGATE, NUL], ids=["lone surrogate", "NUL"])
async def test_unstorable_text_in_a_real_field_is_named(
    client: httpx.AsyncClient, db: AsyncEngine, case: str, bad: str
) -> None:
    method, path, body = REALISTIC[case]
    before = await row_counts(db)
    response = await _send(client, method, path, body.replace("BAD", bad.strip('"')))
    assert response.status_code == 422, response.text
    assert response.json()["detail"].startswith("body."), response.text
    assert await row_counts(db) == before


def _nested(depth: int) -> Any:
    return "[" * depth + "]" * depth


async def test_a_body_no_route_reads_is_ignored_even_when_hostile(
    client: httpx.AsyncClient,
) -> None:
    for body in (_nested(50_000), '{"a": "\\ud800"', "not json"):
        response = await _send(client, "GET", "/health", body)
        assert response.status_code == 200, (body[:20], response.text)


async def test_a_body_nested_past_any_document_is_refused(client: httpx.AsyncClient) -> None:
    body = '{"url": "http://example.com/", "selector": {"context_match": [{"path": "$.a", '
    body += f'"value": {_nested(500)}' + "}]}}"
    response = await _send(client, "POST", "/agents/a1/webhooks", body)
    assert response.status_code == 422, response.text
    assert "nested deeper" in response.json()["detail"]
