"""On-demand context and hybrid search through the client, against the real server.

``POST /contexts/query`` and ``GET /breadcrumbs/search?mode=hybrid`` are the server's side of
issue 15; until they are served these tests fail with the server's 404 / 422."""

from __future__ import annotations

import asyncio
import json

from cairn_client import AsyncClient
from tests.client.world import agent_world
from typer.testing import CliRunner

from cairn.cli import app


async def test_query_context_answers_from_the_agents_sources(live_url: str) -> None:
    async with AsyncClient(live_url) as cairn:
        world = await agent_world(cairn)
        answer = await cairn.query_context(
            "How long can a blue whale grow?", agent_id=world.agent_id, session=world.session
        )
    assert "blue whale" in answer.formatted_context
    assert 0 < answer.token_count <= answer.token_budget
    assert answer.breadcrumb_count >= 1 and answer.explain["selected"]
    assert answer.degraded == []


async def test_hybrid_search_ranks_the_matching_record_first(live_url: str) -> None:
    async with AsyncClient(live_url) as cairn:
        world = await agent_world(cairn)
        hits = await cairn.search(
            "blue whale length", mode="hybrid", schema_name=world.knowledge_schema, nn=2
        )
    assert hits[0].title == "Whale facts"


async def test_the_query_command_prints_the_servers_answer(live_url: str) -> None:
    async with AsyncClient(live_url) as cairn:
        world = await agent_world(cairn)
    command = ["query", "How long can a blue whale grow?", "--agent", world.agent_id]
    asked = await asyncio.to_thread(
        CliRunner().invoke, app, [*command, "--json", "--url", live_url]
    )
    assert asked.exit_code == 0, asked.output
    assert "blue whale" in json.loads(asked.stdout)["formatted_context"]
