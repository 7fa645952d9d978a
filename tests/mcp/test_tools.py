"""Each tool over each transport (streamable HTTP at /mcp, and stdio through `cairn mcp`),
with the SDK's own client: list, call, and bad calls coming back as tool errors."""

from __future__ import annotations

import uuid

from tests.mcp.conftest import TOOLS, Connect, payload, tool_error


async def test_lists_the_tools_with_descriptions_for_a_model(connect: Connect) -> None:
    async with connect() as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.description and len(tool.description) > 150, tool.name
        assert "Arguments" in tool.description and "Returns" in tool.description
        assert tool.input_schema["type"] == "object"
    assert tools["remember"].input_schema["required"] == ["title", "context"]
    assert tools["get_record"].input_schema["properties"]["id"]["format"] == "uuid"


async def test_remember_then_get_record_reads_it_back(connect: Connect, marker: str) -> None:
    note = {"title": "The launch moved to May", "context": {"text": "decided"}, "tags": [marker]}
    async with connect() as client:
        created = payload(await client.call_tool("remember", note))
        record = payload(await client.call_tool("get_record", {"id": created["id"]}))
    assert created["version"] == 1
    assert record["id"] == created["id"]
    assert record["title"] == "The launch moved to May"
    assert record["context"] == {"text": "decided"}
    assert record["schema_name"] == "note.v1"
    assert marker in record["tags"]


async def test_search_finds_a_remembered_record(connect: Connect, marker: str) -> None:
    title = f"Giraffes in the {marker} enclosure eat acacia leaves at dawn"
    async with connect() as client:
        created = payload(
            await client.call_tool(
                "remember",
                {"title": title, "context": {"zoo": marker}, "schema_name": "knowledge.v1"},
            )
        )
        found = payload(
            await client.call_tool(
                "search",
                {
                    "text": f"what do giraffes in {marker} eat",
                    "schema_name": "knowledge.v1",
                    "limit": 10,
                },
            )
        )
    assert found["mode"] == "hybrid"
    hit = next(hit for hit in found["hits"] if hit["id"] == created["id"])
    assert hit["context"] == {"zoo": marker}
    assert hit["score"] > 0


async def test_recent_lists_a_sessions_records_newest_first(connect: Connect) -> None:
    session = f"s-{uuid.uuid4().hex[:10]}"
    async with connect() as client:
        for n in range(3):
            note = {"title": f"step {n}", "context": {"n": n}, "session": session}
            payload(await client.call_tool("remember", note))
        listed = payload(await client.call_tool("recent", {"session": session, "limit": 2}))
        prefixed = payload(await client.call_tool("recent", {"session": f"session:{session}"}))
    assert [record["title"] for record in listed["records"]] == ["step 2", "step 1"]
    assert len(prefixed["records"]) == 3
    assert all(f"session:{session}" in record["tags"] for record in prefixed["records"])


async def test_get_context_assembles_for_a_query_and_inline_sources(connect: Connect) -> None:
    session = f"s-{uuid.uuid4().hex[:10]}"
    agent = {"context_sources": {"session": {"limit": 5}}, "context_budget": 400}
    async with connect() as client:
        note = {"title": "launch plan", "context": {"plan": "launch on friday"}, "session": session}
        payload(await client.call_tool("remember", note))
        answer = payload(
            await client.call_tool(
                "get_context",
                {"query": "when is the launch", "agent": agent, "session": session},
            )
        )
    assert "launch on friday" in answer["formatted_context"]
    assert 0 < answer["token_count"] <= answer["token_budget"] == 400


async def test_an_unknown_record_is_a_not_found_tool_error(connect: Connect) -> None:
    async with connect() as client:
        result = await client.call_tool("get_record", {"id": str(uuid.uuid4())})
    assert tool_error(result)["error"] == "not_found"


async def test_bad_arguments_come_back_as_tool_errors(connect: Connect) -> None:
    bad_calls = [
        ("get_record", {"id": "not-a-uuid"}),
        ("remember", {"title": "no context"}),
        ("remember", {"title": "", "context": {}}),
        ("remember", {"title": "x", "context": "a string"}),
        ("search", {"text": "x", "limit": 1000}),
        ("search", {"text": "x", "mode": "psychic"}),
        ("recent", {"session": "s", "limit": 0}),
        ("get_context", {"query": "x"}),
        ("no_such_tool", {}),
    ]
    async with connect() as client:
        for name, arguments in bad_calls:
            result = await client.call_tool(name, arguments)
            assert result.is_error, (name, arguments, result.structured_content)
        # Text the database cannot store is refused by name, as the API does (422).
        result = await client.call_tool("remember", {"title": "a\x00b", "context": {}})
        error = tool_error(result)
        still_works = await client.call_tool("recent", {"session": "s"})
    assert error == {"error": "invalid_input", "detail": "title: NUL characters are not allowed"}
    assert not still_works.is_error


async def test_a_record_the_api_would_refuse_is_an_invalid_input_tool_error(
    connect: Connect,
) -> None:
    # The arguments pass the tool's own schema; the record built from them does not.
    async with connect() as client:
        result = await client.call_tool(
            "remember", {"title": "t", "context": {}, "schema_name": ""}
        )
    error = tool_error(result)
    assert error["error"] == "invalid_input"
    assert "schema_name: String should match pattern" in error["detail"]
