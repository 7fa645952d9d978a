"""A long record that would take too much of the budget whole is shown by its best chunks,
marked as a snippet in ``explain``; a record that fits keeps its whole block."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from tests.factories import TAIL, long_note

QUESTION = "When is the technician coming to repair the broken espresso machine at the office?"


@pytest.fixture(autouse=True)
def settled_at_once(app: FastAPI, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(app.state.resources.contexts.answers, "settle_s", 0.0)


def _agent(budget: int) -> dict[str, Any]:
    sources = {"semantic": {"enabled": True, "limit": 5, "min_similarity": 0.1}}
    return {"context_sources": sources | {"session": {"limit": 0}}, "context_budget": budget}


async def _ask(client: httpx.AsyncClient, budget: int) -> dict[str, Any]:
    response = await client.post(
        "/contexts/query", json={"query": QUESTION, "agent": _agent(budget)}
    )
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


async def _post_diary(client: httpx.AsyncClient, note: str) -> str:
    body = {"schema_name": "note.v1", "title": "Garden diary", "tags": ["notes"],
            "context": {"text": note}}  # fmt: skip
    response = await client.post("/breadcrumbs", json=body)
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


async def test_a_long_record_over_its_share_of_the_budget_is_shown_by_its_best_chunk(
    client: httpx.AsyncClient, tenant: uuid.UUID
) -> None:
    record_id = await _post_diary(client, long_note(60))
    answer = await _ask(client, budget=600)
    (item,) = [i for i in answer["explain"]["selected"] if i["record_id"] == record_id]
    snippet = item["snippet"]
    assert snippet["of"] >= 4 and len(snippet["chunks"]) >= 1
    assert snippet["chunks"][-1] == snippet["of"] - 1  # the chunk holding the answer
    text = answer["formatted_context"]
    assert "[excerpt: " in text and f"of {snippet['of']} passages" in text
    assert "technician" in text and "Tomatoes in bed 0 " not in text
    assert answer["token_count"] <= 600


async def test_a_long_record_that_fits_is_shown_whole(
    client: httpx.AsyncClient, tenant: uuid.UUID
) -> None:
    record_id = await _post_diary(client, long_note(60))
    answer = await _ask(client, budget=8000)
    (item,) = [i for i in answer["explain"]["selected"] if i["record_id"] == record_id]
    assert "snippet" not in item
    text = answer["formatted_context"]
    assert "[excerpt: " not in text and "Tomatoes in bed 0 " in text and TAIL[:40] in text
