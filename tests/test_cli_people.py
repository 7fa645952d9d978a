"""The people commands (post, get, search, tail, context, query) against the live server."""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

import httpx
import pytest
from cairn_client import AsyncClient
from click.testing import Result
from fastapi import FastAPI
from tests.client.world import agent_world
from typer.testing import CliRunner

from cairn.cli import app


def cairn(url: str, *args: str, stdin: str | None = None) -> Result:
    return CliRunner().invoke(app, [*args, "--url", url], input=stdin)


async def run(url: str, *args: str, stdin: str | None = None) -> Result:
    """The command in a thread: the server answers on this test's event loop."""
    return await asyncio.to_thread(cairn, url, *args, stdin=stdin)


async def test_post_then_get_shows_the_record(live_url: str, marker: str) -> None:
    posted = await run(
        live_url, "post", "note.v1", "Harbour log", "--tag", marker, "--context", '{"wind": 4}'
    )
    assert posted.exit_code == 0, posted.output
    record_id, version = posted.stdout.split()[0], posted.stdout.split()[-1]
    assert uuid.UUID(record_id) and version == "1)"
    shown = await run(live_url, "get", record_id)
    assert shown.exit_code == 0, shown.output
    assert shown.stdout.splitlines()[0] == "Harbour log  [note.v1]  v1"
    assert f"tags: {marker}" in shown.stdout and '"wind": 4' in shown.stdout
    as_json = json.loads((await run(live_url, "get", record_id, "--json")).stdout)
    assert as_json["id"] == record_id and as_json["context"] == {"wind": 4}


async def test_post_reads_the_context_from_stdin(live_url: str, marker: str) -> None:
    posted = await run(
        live_url, "post", "note.v1", "piped", "--tag", marker, "--context", "-", "--json",
        stdin='{"from": "stdin"}',
    )  # fmt: skip
    record_id = json.loads(posted.stdout)["id"]
    async with AsyncClient(live_url) as client:
        assert (await client.get_breadcrumb(record_id)).context == {"from": "stdin"}


async def test_errors_print_the_servers_error_and_detail(live_url: str) -> None:
    missing = await run(live_url, "get", str(uuid.uuid4()))
    assert missing.exit_code == 1
    assert missing.stderr.startswith("cairn: not_found (404): ")
    refused = await run(live_url, "post", "bad schema", "t")
    assert refused.exit_code == 1 and "invalid_input (422)" in refused.stderr
    not_json = await run(live_url, "post", "note.v1", "t", "--context", "{nope")
    assert not_json.exit_code == 2 and "not JSON" in not_json.output


async def test_search_lists_hits_in_a_table_or_as_json(live_url: str, marker: str) -> None:
    await run(live_url, "post", "note.v1", "Lighthouse lamp oil", "--tag", marker)
    table = await run(live_url, "search", "lamp oil for the lighthouse", "--limit", "50")
    assert table.exit_code == 0 and "Lighthouse" in table.stdout and " hits" in table.stdout
    hits = json.loads(
        (await run(live_url, "search", "lighthouse", "--json", "--limit", "3")).stdout
    )
    assert len(hits) <= 3 and all("score" in hit for hit in hits)


async def test_tail_prints_one_line_per_live_event(live_url: str, marker: str) -> None:
    tailing = asyncio.ensure_future(
        run(live_url, "tail", "--tag", marker, "--count", "1", "--timeout", "20")
    )
    async with AsyncClient(live_url) as client:
        while not tailing.done():  # until the tail, connected at some point, saw one
            await client.create_breadcrumb("Gull sighted", {}, schema_name="obs.v1", tags=[marker])
            await asyncio.wait([tailing], timeout=0.2)
    result = tailing.result()
    assert result.exit_code == 0, result.output
    (line,) = result.stdout.splitlines()
    assert line.endswith(f'breadcrumb.created  obs.v1  "Gull sighted"  [{marker}]')


async def _assembled(live_url: str) -> dict[str, Any]:
    async with AsyncClient(live_url) as client:
        world = await agent_world(client)
        trigger = await client.create_breadcrumb(
            "question", {"content": "How long can a blue whale grow?"},
            schema_name="user.message.v1", tags=[f"session:{world.session}"],
        )  # fmt: skip
        await client.assemble(trigger.id, world.agent_id)
    return {"agent": world.agent_id, "session": world.session}


async def test_context_prints_the_text_and_why_each_record_is_in_or_out(
    live_url: str, worker: None
) -> None:
    world = await _assembled(live_url)
    shown = await run(live_url, "context", world["agent"], "--session", world["session"])
    assert shown.exit_code == 0, shown.output
    assert "blue whale" in shown.stdout
    assert "included" in shown.stdout and "Whale facts" in shown.stdout
    assert "near misses" in shown.stdout and "tokens" in shown.stdout.splitlines()[-1]


async def test_context_debug_prints_how_the_context_was_computed(
    live_url: str, worker: None
) -> None:
    world = await _assembled(live_url)
    args = ("context", world["agent"], "--session", world["session"], "--debug")
    shown = await run(live_url, *args)
    assert shown.exit_code == 0, shown.output
    assert shown.stdout.startswith("## Context Debug\n")
    assert f"- Agent: `{world['agent']}`" in shown.stdout and "### Filtering" in shown.stdout
    missing = await run(live_url, "context", "nobody-here", "--debug")
    assert missing.exit_code == 1 and "not_found (404)" in missing.stderr


QUERIED = {
    "formatted_context": "## Knowledge\nThe blue whale grows to 30 metres.",
    "token_count": 12,
    "token_budget": 600,
    "breadcrumb_count": 1,
    "explain": {
        "selected": [{"record_id": str(uuid.UUID(int=1)), "title": "Whale facts",
                      "schema_name": "kb.v1", "source": "semantic", "path_cost": 0.41,
                      "tokens": 12, "section": "knowledge"}],
        "dropped": [{"record_id": str(uuid.UUID(int=2)), "reason": "below_threshold",
                     "stage": "seeds", "tokens": None, "path_cost": None}],
    },
    "timings_ms": {"total": 4.0},
    "cache_hit": True,
    "degraded": ["embedding"],
}  # fmt: skip


def test_query_prints_the_context_its_explanation_and_how_it_was_made(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The rendering of ``POST /contexts/query``'s answer, from a scripted server (the live
    test is in tests/client/test_query_live.py)."""
    import cairn_client

    sent: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(200, json=QUERIED)

    class Scripted(cairn_client.Client):
        def __init__(self, url: str | None = None, *, token: str | None = None) -> None:
            super().__init__(url, token=token, transport=httpx.MockTransport(answer))

    monkeypatch.setattr(cairn_client, "Client", Scripted)
    shown = cairn("http://cairn.test", "query", "whale size?", "--agent", "chat", "--budget", "600")
    assert shown.exit_code == 0, shown.output
    assert json.loads(sent[0].content) == {
        "query": "whale size?",
        "agent_id": "chat",
        "budget": 600,
    }
    assert shown.stdout.startswith("## Knowledge\nThe blue whale grows to 30 metres.\n")
    assert "Whale facts" in shown.stdout and "0.410" in shown.stdout
    assert "below_threshold" in shown.stdout and "near misses (1 of 1)" in shown.stdout
    assert shown.stdout.splitlines()[-1] == "12 of 600 tokens, from cache, degraded: embedding"


async def test_assemblies_lists_the_log_and_sums_it_up(live_url: str, app: FastAPI) -> None:
    agent_id = f"cli-log-{uuid.uuid4().hex[:8]}"
    inline = {"context_sources": {"session": {"limit": 0}}, "context_budget": 300}
    async with AsyncClient(live_url) as client:
        for n in range(2):
            await client.query_context(f"cli question {n}", agent_id=agent_id, agent=inline)
    await app.state.resources.contexts.assembly_log.flush()  # written after the answers
    listed = await run(live_url, "assemblies", "--agent", agent_id, "--json")
    assert listed.exit_code == 0, listed.output
    entries = json.loads(listed.stdout)
    assert [e["query_text"] for e in entries] == ["cli question 1", "cli question 0"]
    table = await run(live_url, "assemblies", "--agent", agent_id, "--limit", "1")
    assert table.exit_code == 0 and "1 assemblies" in table.stdout and "query" in table.stdout
    stats = await run(live_url, "assemblies", "--stats", "--json")
    (mine,) = [row for row in json.loads(stats.stdout)["agents"] if row["agent_id"] == agent_id]
    assert mine["count"] == 2 and mine["mean_budget_use"] is not None
