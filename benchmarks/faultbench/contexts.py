"""Counting assembled contexts: lost and duplicated assemblies per trigger.

Every trigger carries a session tag of its own, so each must produce exactly one
``agent.context.v1`` record, whose id is derived from (owner, agent, session) exactly as the
worker derives it. A missing record is a lost assembly. The record is updated in place and
each write bumps its version, so a version above 1 means the trigger was assembled more than
once (a redelivered event): those are the duplicates.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import httpx

from cairn.config import Settings
from cairn.context.write import context_record_id

from .common import Result, Run
from .load import TRIGGER_SCHEMA, Tally, Trigger

OWNER = uuid.UUID(Settings.model_fields["default_tenant_id"].default)
POLL_S = 0.5


def agent_definition(agent_id: str, trigger_tag: str) -> dict[str, Any]:
    """An agent whose trigger matches the suite's trigger records; small sources, so an
    assembly is cheap and the measurement is about delivery, not assembly speed."""
    return {
        "schema_name": "agent.def.v1",
        "title": f"Fault suite agent {agent_id}",
        "tags": ["agent:def", "workspace:agents"],
        "context": {
            "agent_id": agent_id,
            "context_trigger": {"schema_name": TRIGGER_SCHEMA, "any_tags": [trigger_tag]},
            "context_sources": {"session": {"limit": 5}},
            "context_budget": 2000,
        },
    }


async def create_agent(http: httpx.AsyncClient, agent_id: str, trigger_tag: str) -> None:
    response = await http.post("/breadcrumbs", json=agent_definition(agent_id, trigger_tag))
    response.raise_for_status()


@dataclass
class ContextCount:
    lost: list[Trigger] = field(default_factory=list)
    duplicated: int = 0
    last_seen: float | None = None  # monotonic time the last missing context appeared
    versions: dict[int, int] = field(default_factory=dict)


async def _version(http: httpx.AsyncClient, tally: Tally, record: uuid.UUID) -> int | None:
    response = await tally.request(http, "GET", f"/breadcrumbs/{record}", timeout=10)
    if response is None or response.status_code != 200:
        return None
    return int(response.json()["version"])


async def count_contexts(
    http: httpx.AsyncClient,
    tally: Tally,
    agent_id: str,
    triggers: list[Trigger],
    deadline_s: float,
) -> ContextCount:
    """Wait (up to ``deadline_s``) until every acknowledged trigger has its context; then
    read each context's version once more, for redeliveries that landed meanwhile."""
    records = {
        t.number: context_record_id(OWNER, agent_id, t.session_tag)
        for t in triggers
        if t.id is not None
    }
    pending = dict(records)
    result = ContextCount()
    slots = asyncio.Semaphore(8)

    async def check(number: int, record: uuid.UUID) -> tuple[int, int | None]:
        async with slots:
            return number, await _version(http, tally, record)

    deadline = time.monotonic() + deadline_s
    while pending and time.monotonic() < deadline:
        found = await asyncio.gather(*(check(n, r) for n, r in pending.items()))
        for number, version in found:
            if version is not None:
                del pending[number]
                result.last_seen = time.monotonic()
        if pending:
            await asyncio.sleep(POLL_S)
    final = await asyncio.gather(*(check(n, r) for n, r in records.items()))
    by_number = {t.number: t for t in triggers}
    for number, version in final:
        if version is None:
            result.lost.append(by_number[number])
        else:
            result.versions[version] = result.versions.get(version, 0) + 1
            result.duplicated += version - 1
    return result


async def contexts_into(
    result: Result, run: Run, agent_id: str, triggers: list[Trigger], wait_s: float
) -> float | None:
    """Count ``triggers``' contexts into ``result``; when the last missing one appeared."""
    checks = Tally()
    counted = await count_contexts(run.http, checks, agent_id, triggers, wait_s)
    result.count(checks, operations=False)
    result.lost += len(counted.lost)
    result.duplicated += counted.duplicated
    result.details["context_versions"] = counted.versions
    if counted.lost:
        result.notes.append(f"{len(counted.lost)} triggers never got a context")
    return counted.last_seen
