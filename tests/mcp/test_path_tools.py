"""The debug path tools over each transport (streamable HTTP at /mcp, and stdio through
`cairn mcp`), with the SDK's own client, against the real server."""

from __future__ import annotations

import uuid

from tests.mcp.conftest import Connect, payload, tool_error


async def test_a_path_is_started_shown_listed_and_resolved(connect: Connect) -> None:
    session = f"s-{uuid.uuid4().hex[:10]}"
    start = {"session": session, "summary": "export job hangs", "signature": "Timeout: <n>s"}
    fix = {"what_fixed_it": "stream the rows", "root_cause": "all rows loaded at once"}
    async with connect() as client:
        started = payload(await client.call_tool("path_start", start))
        path_id = started["path"]["id"]
        second = await client.call_tool("path_start", start)
        active = payload(await client.call_tool("path_show", {"session": f"session:{session}"}))
        listed = payload(await client.call_tool("path_list", {"session": session}))
        resolved = payload(await client.call_tool("path_resolve", {"path_id": path_id, **fix}))
        again = await client.call_tool("path_resolve", {"path_id": path_id})
        shown = payload(await client.call_tool("path_show", {"path_id": path_id}))
        none_active = await client.call_tool("path_show", {"session": session})
        still_open = {"session": session, "status": "active"}
        open_ones = payload(await client.call_tool("path_list", still_open))
    assert started["path"]["session"] == f"session:{session}"
    assert [w["type"] for w in started["waypoints"]] == ["error"]
    assert tool_error(second)["error"] == "conflict"
    assert active == started
    assert [path["id"] for path in listed["paths"]] == [path_id]
    assert resolved["path"]["kiss_summary"] == "When all rows loaded at once: stream the rows."
    assert tool_error(again)["error"] == "conflict"
    assert shown == resolved and [w["type"] for w in shown["waypoints"]] == ["error", "resolution"]
    assert tool_error(none_active)["error"] == "not_found"
    assert open_ones == {"paths": []}


async def test_bad_path_calls_come_back_as_tool_errors(connect: Connect) -> None:
    bad_calls = [
        ("path_start", {"session": "s", "summary": ""}),
        ("path_start", {"session": "two words", "summary": "x"}),
        ("path_start", {"summary": "no session"}),
        ("path_resolve", {"path_id": "not-a-uuid"}),
        ("path_resolve", {"path_id": str(uuid.uuid4()), "what_fixed_it": "x" * 1001}),
        ("path_show", {}),
        ("path_list", {"limit": 0}),
        ("path_list", {"status": "maybe"}),
        ("path_list", {"session": "two words"}),
    ]
    async with connect() as client:
        for name, arguments in bad_calls:
            result = await client.call_tool(name, arguments)
            assert result.is_error, (name, arguments, result.structured_content)
        unknown = await client.call_tool("path_resolve", {"path_id": str(uuid.uuid4())})
        nul = await client.call_tool("path_start", {"session": "s", "summary": "a\x00b"})
    assert tool_error(unknown)["error"] == "not_found"
    assert tool_error(nul) == {
        "error": "invalid_input", "detail": "summary: NUL characters are not allowed",
    }  # fmt: skip
