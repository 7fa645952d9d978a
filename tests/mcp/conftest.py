"""MCP clients (the SDK's own) for the session's app: over streamable HTTP at ``/mcp``, and
over stdio to a ``cairn mcp`` process acting on the app through its HTTP API."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

import httpx2
import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult
from tests.processes import REPO

TOOLS = {"remember", "search", "get_context", "get_record", "recent"}
TOOLS |= {"path_start", "path_resolve", "path_show", "path_list"}

Connect = Callable[[], Client]


def over_http(base_url: str, token: str | None = None) -> Client:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    http = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=60))
    return Client(streamable_http_client(f"{base_url}/mcp", http_client=http))


def over_stdio(base_url: str, token: str | None = None) -> Client:
    """``cairn mcp`` as MCP clients start it, with this worktree's code first on the path."""
    env = {k: v for k, v in os.environ.items() if k not in {"CAIRN_URL", "CAIRN_TOKEN"}}
    env["CAIRN_URL"] = base_url
    if token:
        env["CAIRN_TOKEN"] = token
    command = str(REPO / ".venv/bin/cairn")
    return Client(StdioServerParameters(command=command, args=["mcp"], env=env))


@pytest.fixture(params=["http", "stdio"])
def connect(request: pytest.FixtureRequest, live_url: str) -> Callable[[], Client]:
    """A client of the session app (CAIRN_AUTH=disabled) over each transport, to enter with
    ``async with`` in the test itself (the SDK's task groups must be left by the task that
    entered them, which a fixture's teardown is not)."""
    transport = over_http if request.param == "http" else over_stdio
    return lambda: transport(live_url)


def payload(result: CallToolResult) -> Any:
    """A successful call's structured result."""
    assert not result.is_error, result.content
    return result.structured_content


def tool_error(result: CallToolResult) -> dict[str, Any]:
    """A tool error's Cairn ``{error, detail}`` (after the SDK's "Error executing tool x: ")."""
    assert result.is_error, result.structured_content
    text = result.content[0].text  # type: ignore[union-attr]
    error: dict[str, Any] = json.loads(text[text.index("{") :])
    assert set(error) == {"error", "detail"}, error
    return error
