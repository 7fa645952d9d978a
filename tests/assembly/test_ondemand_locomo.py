"""For a stored trigger and a registered agent, ``POST /contexts/query`` answers exactly the
``formatted_context`` the worker wrote: 50 LoCoMo dev questions over one conversation."""

from __future__ import annotations

import sys
import uuid
from pathlib import Path

import httpx
from tests.assembly.test_ondemand import worker_context
from tests.fixtures_path import FIXTURES

# The benchmark's own loaders (they import each other as top-level modules).
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "quality"))
from client import QUESTION_SCHEMA, AgentSpec, CairnClient, agent_body
from dataset import load_conversation

CONVERSATION = FIXTURES / "locomo-dev" / "30.json"
QUESTIONS = 50
BUDGET = 1000


async def test_query_equals_the_worker_context_for_50_locomo_questions(
    client: httpx.AsyncClient, worker: None
) -> None:
    conversation = load_conversation(CONVERSATION)
    run = uuid.uuid4().hex[:8]
    run_tag, session = f"locomo:{run}", f"locomo-{run}"
    cairn = CairnClient(client)
    agent_id = f"locomo-{run}"
    spec = AgentSpec(session_limit=3)  # the session source too
    before = await cairn.worker_messages()
    await cairn.create(agent_body(agent_id, BUDGET, run_tag, spec))
    await cairn.post_turns(conversation.turns, f"session:{session}")
    # Every turn's edges are built before the first question: each question's context is
    # then compared against unchanged data.
    await cairn.wait_for_worker(before + 1 + len(conversation.turns), timeout_s=120)
    compared = 0
    for question in conversation.questions[:QUESTIONS]:
        trigger = await cairn.create(
            {
                "schema_name": QUESTION_SCHEMA, "title": "Question",
                "tags": [f"session:{session}", run_tag], "context": {"question": question.text},
            }
        )  # fmt: skip
        written = await worker_context(client, agent_id, session, trigger)
        body = {"trigger_id": trigger, "agent_id": agent_id}
        response = await client.post("/contexts/query", json=body)
        assert response.status_code == 200, response.text
        assert response.json()["formatted_context"] == written["formatted_context"], question
        compared += 1
        (await client.delete(f"/breadcrumbs/{trigger}")).raise_for_status()
    assert compared == QUESTIONS
