"""Cairn over HTTP, as the benchmark uses it: turns in, agents defined, questions asked and
their assembled contexts read back."""

from __future__ import annotations

import asyncio
import re
import time
from dataclasses import dataclass
from typing import Any

import httpx
from dataset import Turn

TURN_SCHEMA = "user.message.v1"  # bootstrap hints render it as "Speaker (date): text"
PLAIN_TURN_SCHEMA = "locomo.turn.v1"  # no definition, no hints: rendered compactly
QUESTION_SCHEMA = "locomo.question.v1"
WORKER_METRIC = re.compile(
    r"^cairn_consumer_messages_total\{consumer=\"cairn-worker\",[^}]*\} ([0-9.e+]+)$", re.M
)
POLL_S = 0.01
CONTEXT_TIMEOUT_S = 30.0


@dataclass(frozen=True, slots=True)
class AgentSpec:
    """The benchmark agent's sources (the same for every budget). No session seeds: the
    questions are about the whole conversation, not its last exchange, and recency is
    measured on its own as a baseline. Semantic seeds enough to fill the largest budget."""

    semantic_limit: int = 100
    min_similarity: float = 0.2
    session_limit: int = 0
    turn_schema: str = TURN_SCHEMA  # PLAIN_TURN_SCHEMA: the turns have no hints
    # The agent's `ranking` option; None leaves it out (the server's defaults).
    ranking: dict[str, float | None] | None = None


@dataclass(frozen=True, slots=True)
class Answered:
    """One question's assemblies, by budget, and the wall time until all were readable."""

    trigger_id: str
    contexts: dict[int, dict[str, Any]]
    wall_ms: float
    embedding: list[float]  # the question's, as the server computed it


def turn_body(turn: Turn, session_tag: str, schema: str = TURN_SCHEMA) -> dict[str, Any]:
    """A turn as a record: the hinted schema's fields, or plain speaker, date and text."""
    when = "timestamp" if schema == TURN_SCHEMA else "date"
    return {
        "schema_name": schema,
        "title": turn.speaker,
        "tags": [session_tag, f"speaker:{turn.speaker.lower()}"],
        "context": {"speaker": turn.speaker, when: turn.date, "text": turn.content},
    }


def agent_body(agent_id: str, budget: int, run_tag: str, spec: AgentSpec) -> dict[str, Any]:
    semantic = {
        "enabled": True,
        "schemas": [spec.turn_schema],
        "limit": spec.semantic_limit,
        "min_similarity": spec.min_similarity,
        "scope": "session",
    }
    context: dict[str, Any] = {
        "agent_id": agent_id,
        "context_trigger": {"schema_name": QUESTION_SCHEMA, "all_tags": [run_tag]},
        "context_sources": {"semantic": semantic, "session": {"limit": spec.session_limit}},
        "context_budget": budget,
    }
    if spec.ranking is not None:
        context["ranking"] = spec.ranking
    return {
        "schema_name": "agent.def.v1",
        "title": f"LoCoMo reader, {budget} tokens",
        "tags": ["workspace:agents", run_tag],
        "context": context,
    }


class CairnClient:
    def __init__(self, http: httpx.AsyncClient) -> None:
        self.http = http

    async def create(self, body: dict[str, Any]) -> str:
        response = await self.http.post("/breadcrumbs", json=body)
        response.raise_for_status()
        return str(response.json()["id"])

    async def post_turns(
        self, turns: tuple[Turn, ...], session_tag: str, schema: str = TURN_SCHEMA
    ) -> dict[str, str]:
        """dia_id → record id. One at a time, so creation order is conversation order (the
        temporal edges follow it); conversations are posted concurrently with each other."""
        bodies = {turn.dia_id: turn_body(turn, session_tag, schema) for turn in turns}
        return {dia_id: await self.create(body) for dia_id, body in bodies.items()}

    async def worker_messages(self) -> float:
        response = await self.http.get("/metrics")
        response.raise_for_status()
        return sum(float(value) for value in WORKER_METRIC.findall(response.text))

    async def wait_for_worker(self, target: float, timeout_s: float = 600.0) -> None:
        """Until the worker has handled ``target`` messages in all (edges are built)."""
        deadline = time.monotonic() + timeout_s
        while await self.worker_messages() < target:
            if time.monotonic() > deadline:
                raise TimeoutError("the worker did not catch up")
            await asyncio.sleep(0.2)

    async def ask(
        self, question: str, session_tag: str, run_tag: str, agents: dict[int, str]
    ) -> Answered:
        """Post the question as a trigger, read every agent's context for it, delete it."""
        body = {
            "schema_name": QUESTION_SCHEMA,
            "title": "Question",
            "tags": [session_tag, run_tag],
            "context": {"question": question},
        }
        started = time.perf_counter()
        trigger_id = await self.create(body)
        contexts = {
            budget: await self.context_for(agent_id, session_tag, trigger_id)
            for budget, agent_id in agents.items()
        }
        wall_ms = (time.perf_counter() - started) * 1000.0
        embedding = (await self.full(trigger_id))["embedding"]
        (await self.http.delete(f"/breadcrumbs/{trigger_id}")).raise_for_status()
        return Answered(trigger_id, contexts, wall_ms, embedding)

    async def context_for(self, agent_id: str, session_tag: str, trigger_id: str) -> dict[str, Any]:
        deadline = time.monotonic() + CONTEXT_TIMEOUT_S
        session = session_tag.removeprefix("session:")
        while time.monotonic() < deadline:
            response = await self.http.get(f"/contexts/{agent_id}", params={"session": session})
            if response.status_code == 200:
                context: dict[str, Any] = response.json()["context"]
                if context.get("trigger_id") == trigger_id:
                    return context
            await asyncio.sleep(POLL_S)
        raise TimeoutError(f"no context of {agent_id} for {trigger_id}")

    async def full(self, record_id: str) -> dict[str, Any]:
        response = await self.http.get(f"/breadcrumbs/{record_id}/full")
        response.raise_for_status()
        full: dict[str, Any] = response.json()
        return full

    async def views(self, record_ids: list[str], chunk: int = 100) -> list[dict[str, Any]]:
        """The LLM views (after hints) of many records, with how the hints applied."""
        views: list[dict[str, Any]] = []
        for start in range(0, len(record_ids), chunk):
            body = {"ids": record_ids[start : start + chunk], "explain": True}
            response = await self.http.post("/breadcrumbs/render", json=body)
            response.raise_for_status()
            views += response.json()["items"]
        return views
