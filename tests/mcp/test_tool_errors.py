"""The tools against an in-memory backend (the SDK's in-process client, no server): what a
backend raises comes back as a tool error carrying Cairn's {error, detail}, never a crash."""

from __future__ import annotations

import uuid
from typing import Any

import asyncpg
import pytest
from mcp.client import Client
from mcp.server.mcpserver.exceptions import ToolError
from tests.mcp.conftest import payload, tool_error

from cairn.errors import CairnError, Conflict, NotFound
from cairn.mcp.backend import ContextQuery, Record, Records, Remembered, SearchMode, SearchResults
from cairn.mcp.server import build_server
from cairn.mcp.tools import check_storable


class Twin:
    """A backend holding records in a dict; ``failure`` is raised by every call."""

    def __init__(self, failure: BaseException | None = None) -> None:
        self.records: dict[uuid.UUID, Record] = {}
        self.failure = failure
        self.queries: list[ContextQuery] = []

    async def remember(self, **fields: Any) -> Remembered:
        self._fail()
        record_id = uuid.uuid4()
        self.records[record_id] = {"id": str(record_id), **fields}
        return Remembered(id=record_id, version=1)

    async def search(
        self, text: str, *, mode: SearchMode, schema_name: str | None, limit: int
    ) -> SearchResults:
        self._fail()
        hits = [r for r in self.records.values() if text in r["title"]][:limit]
        return SearchResults(mode=mode, hits=hits)

    async def get_context(self, request: ContextQuery) -> dict[str, Any]:
        self._fail()
        self.queries.append(request)
        return {"formatted_context": f"about {request.query}", "token_count": 2}

    async def get_record(self, record_id: uuid.UUID) -> Record:
        self._fail()
        if record_id not in self.records:
            raise NotFound(f"breadcrumb {record_id} not found")
        return self.records[record_id]

    async def recent(self, session: str, *, limit: int) -> Records:
        self._fail()
        return Records(records=[r for r in self.records.values() if r["session"] == session])

    def _fail(self) -> None:
        if self.failure is not None:
            raise self.failure


async def test_calls_reach_the_backend_with_their_arguments() -> None:
    twin = Twin()
    async with Client(build_server(lambda _: twin)) as client:
        note = {"title": "alpha beta", "context": {"k": 1}, "session": "s1", "tags": ["t"]}
        created = payload(await client.call_tool("remember", note))
        found = payload(await client.call_tool("search", {"text": "beta", "mode": "vector"}))
        recent = payload(await client.call_tool("recent", {"session": "s1"}))
        context = payload(
            await client.call_tool(
                "get_context", {"query": "q", "agent": {"context_sources": {}}, "budget": 50}
            )
        )
    stored = twin.records[uuid.UUID(created["id"])]
    assert stored["schema_name"] == "note.v1" and stored["tags"] == ["t"]
    assert found == {"mode": "vector", "hits": [stored]}
    assert recent == {"records": [stored]}
    assert context["formatted_context"] == "about q"
    assert twin.queries == [ContextQuery("q", None, {"context_sources": {}}, None, 50)]


@pytest.mark.parametrize(
    ("failure", "expected"),
    [
        (
            NotFound("breadcrumb x not found"),
            {"error": "not_found", "detail": "breadcrumb x not found"},
        ),
        (Conflict("taken"), {"error": "conflict", "detail": "taken"}),
        (CairnError("odd"), {"error": "internal_error", "detail": "odd"}),
        (asyncpg.CannotConnectNowError("starting"), {"error": "unavailable"}),
        (RuntimeError("a bug with a secret in it"), {"error": "internal_error"}),
    ],
)
async def test_backend_errors_come_back_as_cairn_errors(
    failure: BaseException, expected: dict[str, str]
) -> None:
    async with Client(build_server(lambda _: Twin(failure))) as client:
        result = await client.call_tool("get_record", {"id": str(uuid.uuid4())})
    error = tool_error(result)
    assert error.items() >= expected.items()
    assert "secret" not in error["detail"]


async def test_get_context_needs_an_agent_id_or_inline_sources() -> None:
    twin = Twin()
    async with Client(build_server(lambda _: twin)) as client:
        result = await client.call_tool("get_context", {"query": "q"})
    assert tool_error(result)["error"] == "invalid_input"
    assert twin.queries == []


@pytest.mark.parametrize("arguments", [{}, {"path_id": str(uuid.uuid4()), "session": "s"}])
async def test_path_show_needs_a_path_id_or_a_session(arguments: dict[str, str]) -> None:
    async with Client(build_server(lambda _: Twin())) as client:
        result = await client.call_tool("path_show", arguments)
    assert tool_error(result) == {
        "error": "invalid_input", "detail": "give path_id or session (one of them)",
    }  # fmt: skip


async def test_text_the_database_cannot_store_is_refused_by_name() -> None:
    twin = Twin()
    async with Client(build_server(lambda _: twin)) as client:
        nested = await client.call_tool(
            "remember", {"title": "t", "context": {"a": [{"b": "x\x00"}]}}
        )
    assert tool_error(nested)["detail"] == "context.a[0].b: NUL characters are not allowed"
    assert twin.records == {}


def test_a_lone_surrogate_in_a_key_is_refused() -> None:
    # The SDK's client cannot send one (tests/auth/test_mcp_fuzz.py sends them over HTTP).
    with pytest.raises(ToolError, match=r"context\.<key>: text that is not valid Unicode"):
        check_storable({"context": {"a\ud800": 1}})
