"""An agent with sections, through the real stack: definitions checked on write, records
rendered by their schemas' hints into the section layout, the agent.context.v1 the worker
writes read back with its per-section explanation; and the same on demand."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from tests.assembly.helpers import post
from tests.factories import schema_definition
from tests.waiting import eventually

BUDGET = 600
GOTCHAS_EMPTY = "No known gotchas for this task area."


def sections(key: str) -> list[dict[str, Any]]:
    return [
        {
            "name": "patterns", "title": "Patterns to Follow",
            "match": {"schemas": [f"pattern{key}.*"]}, "share": 0.5, "max_items": 5,
            "empty_text": "No specific patterns identified for this task.",
        },
        {
            "name": "warnings", "title": "Warnings", "match": {"schemas": [f"gotcha{key}.v1"]},
            "empty_text": GOTCHAS_EMPTY,
        },
        {"name": "decisions", "title": "Relevant Decisions", "match": {"tags": [f"dec:{key}"]}},
    ]  # fmt: skip


async def _world(client: httpx.AsyncClient) -> dict[str, str]:
    key = uuid.uuid4().hex[:8]
    pattern = f"pattern{key}.v1"
    line = {"type": "format", "format": "- **{pattern}** (see: {location})"}
    hints = {"transform": {"line": line}, "mode": "replace"}
    response = await client.post("/breadcrumbs", json=schema_definition(pattern, hints))
    assert response.status_code == 201, response.text
    for text, location in (
        ("Write every database migration as a reversible Alembic revision", "migrations/"),
        ("Run the database migration inside one transaction per revision", "db/engine.py"),
        ("Name each database migration after the table it changes", "migrations/versions"),
    ):
        await post(client, schema_name=pattern, title=text[:30], tags=[f"k:{key}"],
                   context={"pattern": text, "location": location})  # fmt: skip
    await post(
        client, schema_name="note.v1", title="Lunch", tags=[f"k:{key}"],
        context={"text": "The database migration team meets for lunch on Fridays"},
    )  # fmt: skip
    return {"key": key, "pattern": pattern}


def _agent(world: dict[str, str], agent_id: str) -> dict[str, Any]:
    return {
        "agent_id": agent_id,
        "context_trigger": {"schema_name": "user.message.v1", "any_tags": [f"ask:{world['key']}"]},
        "context_sources": {
            "semantic": {"enabled": True, "limit": 10, "min_similarity": 0.05},
            "session": {"limit": 0},
        },
        "context_budget": BUDGET,
        "sections": sections(world["key"]),
        "complexity_limits": {"normal": {"patterns": 2}, "easy": {"patterns": 1}},
    }


def _check_layout(context: dict[str, Any], app: FastAPI, patterns_shown: int = 2) -> None:
    text = context["formatted_context"]
    assert text.startswith("## Context (Computed)\n\n### Patterns to Follow\n- **")
    patterns = text.split("### Patterns to Follow\n")[1].split("\n\n")[0].splitlines()
    assert len(patterns) == patterns_shown
    assert all("database migration" in line for line in patterns)
    assert all(line.startswith("- **") and "(see: " in line for line in patterns)
    assert f"\n\n### Warnings\n{GOTCHAS_EMPTY}\n\n### Relevant Decisions\n" in text
    assert text.endswith("### Relevant Decisions\n")
    assert "⟦" not in text and "Fridays" not in text and "How should I" not in text
    counter = app.state.resources.contexts.counter
    assert counter.count(text) == context["token_count"] <= BUDGET
    report = {entry["name"]: entry for entry in context["explain"]["sections"]}
    assert list(report) == ["patterns", "warnings", "decisions"]
    assert report["patterns"]["items"] == report["patterns"]["max_items"] == patterns_shown
    assert report["patterns"]["candidates"] == 3 and report["patterns"]["used"] > 0
    assert report["warnings"]["empty"] is True and report["warnings"]["items"] == 0
    dropped = {item["record_id"]: item["reason"] for item in context["explain"]["dropped"]}
    assert dropped[context["trigger_id"]] == "no_section"
    assert list(dropped.values()).count("sections_full") == 3 - patterns_shown
    selected = context["explain"]["selected"]
    assert {item["section"] for item in selected} == {"patterns"}
    assert len(selected) == patterns_shown


@pytest.mark.parametrize(("tier", "patterns_shown"), [("normal", 2), ("easy", 1)])
async def test_the_worker_writes_the_section_layout_with_the_tiers_limits(
    worker: None, client: httpx.AsyncClient, app: FastAPI, tier: str, patterns_shown: int
) -> None:
    world = await _world(client)
    agent_id = f"computed-{world['key']}"
    await post(client, schema_name="agent.def.v1", title=agent_id, tags=["workspace:agents"],
               context=_agent(world, agent_id))  # fmt: skip
    session = f"s{world['key']}"
    trigger = await post(
        client, schema_name="user.message.v1", title="Task",
        tags=[f"ask:{world['key']}", f"session:{session}", f"complexity:{tier}"],
        context={"content": "How should I write the database migration?"},
    )  # fmt: skip
    written: dict[str, Any] = {}

    async def context_written() -> bool:
        response = await client.get(f"/contexts/{agent_id}", params={"session": session})
        if response.status_code == 200:
            written.update(response.json()["context"])
        return written.get("trigger_id") == str(trigger)

    await eventually(context_written, timeout=30)
    _check_layout(written, app, patterns_shown)
    assert written["explain"]["signals"]["complexity"]["tier"] == tier


async def test_an_inline_agent_with_sections_on_demand(
    client: httpx.AsyncClient, app: FastAPI
) -> None:
    world = await _world(client)
    agent = _agent(world, "inline")
    response = await client.post(
        "/contexts/query",
        json={"query": "How should I write the database migration?", "agent": agent},
    )
    assert response.status_code == 200, response.text
    answer = response.json()
    answer["trigger_id"] = next(
        seed["record_id"] for seed in answer["explain"]["seeds"] if seed["source"] == "trigger"
    )
    # A short task with no file named is an easy one (context.signals): its limits apply.
    assert answer["explain"]["signals"]["complexity"]["tier"] == "easy"
    _check_layout(answer, app, patterns_shown=1)


async def test_bad_sections_are_refused_on_write_and_inline(client: httpx.AsyncClient) -> None:
    world = {"key": uuid.uuid4().hex[:8]}
    agent = _agent(world, f"bad-{world['key']}")
    agent["sections"][1]["name"] = "patterns"
    body = {"schema_name": "agent.def.v1", "title": "bad", "context": agent}
    response = await client.post("/breadcrumbs", json=body)
    assert response.status_code == 422, response.text
    assert response.json()["path"] == "context.sections[1].name"
    listed = await client.get("/breadcrumbs", params={"schema_name": "agent.def.v1"})
    assert listed.status_code == 200
    assert all(item["title"] != "bad" for item in listed.json())
    agent = _agent(world, "inline")
    agent["complexity_limits"] = {"easy": {"ghost": 1}}
    inline = await client.post("/contexts/query", json={"query": "x", "agent": agent})
    assert inline.status_code == 422
    assert "context.complexity_limits.easy.ghost" in inline.json()["detail"]
