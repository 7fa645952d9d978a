"""``/mcp`` behind the API's auth (CAIRN_AUTH=jwt): no token 401 as on any route, and a
tool call acts as its token's caller: its tenant (row-level security) and its roles. Also
``cairn mcp`` (stdio) passing CAIRN_TOKEN on."""

from __future__ import annotations

import uuid

import httpx
import pytest
from tests.auth.conftest import Mint, bearer
from tests.mcp.conftest import over_http, over_stdio, payload, tool_error

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "probe", "version": "1"},
    },
}
ACCEPT = {"Accept": "application/json, text/event-stream"}


@pytest.mark.parametrize("token", [None, "not-a-jwt"])
@pytest.mark.parametrize("method", ["GET", "POST", "DELETE"])
async def test_mcp_without_a_valid_token_is_401(
    jwt_live_url: str, method: str, token: str | None
) -> None:
    headers = ACCEPT | (bearer(token) if token else {})
    async with httpx.AsyncClient() as http:
        response = await http.request(
            method, f"{jwt_live_url}/mcp", json=INITIALIZE, headers=headers
        )
    assert response.status_code == 401, response.text
    assert response.headers["WWW-Authenticate"] == "Bearer"
    assert response.json()["error"] == "unauthorized"


async def test_a_token_answers_initialize(jwt_live_url: str, mint: Mint) -> None:
    headers = ACCEPT | bearer(mint(roles=["subscriber"]))
    async with httpx.AsyncClient() as http:
        response = await http.post(f"{jwt_live_url}/mcp", json=INITIALIZE, headers=headers)
    assert response.status_code == 200, response.text
    assert response.json()["result"]["serverInfo"]["name"] == "cairn"


async def test_another_tenant_sees_none_of_the_records(
    jwt_live_url: str, mint: Mint, marker: str
) -> None:
    session = f"s-{uuid.uuid4().hex[:10]}"
    author = mint(owner_id=uuid.uuid4(), roles=["emitter"])
    stranger = mint(owner_id=uuid.uuid4(), roles=["curator"])
    note = {"title": f"Secret plan {marker}", "context": {"plan": marker}, "session": session}
    search = {"text": f"secret plan {marker}", "mode": "vector", "limit": 50}
    async with over_http(jwt_live_url, author) as client:
        created = payload(await client.call_tool("remember", note))
        own_hits = payload(await client.call_tool("search", search))["hits"]
        own_recent = payload(await client.call_tool("recent", {"session": session}))
    async with over_http(jwt_live_url, stranger) as client:
        read = await client.call_tool("get_record", {"id": created["id"]})
        hits = payload(await client.call_tool("search", search))["hits"]
        recent = payload(await client.call_tool("recent", {"session": session}))
    assert created["id"] in [hit["id"] for hit in own_hits]
    assert [record["id"] for record in own_recent["records"]] == [created["id"]]
    assert tool_error(read)["error"] == "not_found"
    assert created["id"] not in [hit["id"] for hit in hits]
    assert all(hit["context"] != {"plan": marker} for hit in hits)
    assert recent["records"] == []


async def test_a_subscriber_reads_but_cannot_remember(jwt_live_url: str, mint: Mint) -> None:
    async with over_http(jwt_live_url, mint(roles=["subscriber"])) as client:
        refused = await client.call_tool("remember", {"title": "x", "context": {}})
        listed = await client.call_tool("recent", {"session": "anything"})
    assert tool_error(refused)["error"] == "forbidden"
    assert not listed.is_error


async def test_cairn_mcp_acts_with_cairn_token(jwt_live_url: str, mint: Mint) -> None:
    agent = f"agent-{uuid.uuid4().hex[:8]}"
    token = mint(owner_id=uuid.uuid4(), sub=agent, roles=["emitter"])
    async with over_stdio(jwt_live_url, token) as client:
        created = payload(await client.call_tool("remember", {"title": "hi", "context": {}}))
        record = payload(await client.call_tool("get_record", {"id": created["id"]}))
    async with over_stdio(jwt_live_url) as client:
        refused = await client.call_tool("get_record", {"id": created["id"]})
    assert record["title"] == "hi"
    assert tool_error(refused)["error"] == "unauthorized"


async def test_another_tenant_sees_and_resolves_none_of_the_paths(
    jwt_live_url: str, mint: Mint
) -> None:
    session = f"s-{uuid.uuid4().hex[:10]}"
    author = mint(owner_id=uuid.uuid4(), roles=["emitter"])
    stranger = mint(owner_id=uuid.uuid4(), roles=["curator"])
    async with over_http(jwt_live_url, author) as client:
        start = {"session": session, "summary": "build breaks"}
        started = payload(await client.call_tool("path_start", start))
    path_id = started["path"]["id"]
    async with over_http(jwt_live_url, stranger) as client:
        shown = await client.call_tool("path_show", {"path_id": path_id})
        active = await client.call_tool("path_show", {"session": session})
        listed = payload(await client.call_tool("path_list", {}))
        resolved = await client.call_tool("path_resolve", {"path_id": path_id})
    async with over_http(jwt_live_url, author) as client:
        mine = payload(await client.call_tool("path_show", {"path_id": path_id}))
    assert tool_error(shown)["error"] == "not_found"
    assert tool_error(active)["error"] == "not_found"
    assert listed == {"paths": []}
    assert tool_error(resolved)["error"] == "not_found"
    assert mine == started


async def test_a_subscriber_reads_paths_but_cannot_start_one(jwt_live_url: str, mint: Mint) -> None:
    async with over_http(jwt_live_url, mint(roles=["subscriber"])) as client:
        refused = await client.call_tool("path_start", {"session": "s", "summary": "x"})
        listed = await client.call_tool("path_list", {})
    assert tool_error(refused)["error"] == "forbidden"
    assert not listed.is_error
