"""Entries of the assembly log with known figures, written straight to the table."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from fastapi import FastAPI
from sqlalchemy import insert, select

from cairn.assemblies.entry import QUERY, AssemblyEntry
from cairn.db.models import assemblies


def entry(owner: uuid.UUID, agent: str = "agent-a", **overrides: Any) -> AssemblyEntry:
    fields: dict[str, Any] = {
        "owner_id": owner, "agent_id": agent, "origin": QUERY, "session_tag": None,
        "trigger_id": None, "query_text": "what now?", "domain": None,
        "seed_counts": {"semantic": 2}, "selected_ids": [uuid.uuid4()], "token_count": 100,
        "token_budget": 1000, "timings_ms": {"seeds": 1.0, "total": 10.0},
    }  # fmt: skip
    return AssemblyEntry(**(fields | overrides))


async def insert_entries(
    app: FastAPI, entries: list[AssemblyEntry], created_at: datetime | None = None
) -> list[int]:
    """The entries' ids, in the order given (as the schema owner: ``created_at`` may be set)."""
    when = {} if created_at is None else {"created_at": created_at}
    async with app.state.resources.system_engine.begin() as connection:
        rows = [e.values() | when for e in entries]
        result = await connection.execute(insert(assemblies).returning(assemblies.c.id), rows)
        return list(result.scalars())


async def rows_of(app: FastAPI, agent_id: str) -> list[dict[str, Any]]:
    query = select(assemblies).where(assemblies.c.agent_id == agent_id).order_by(assemblies.c.id)
    async with app.state.resources.system_engine.connect() as connection:
        return [dict(row) for row in (await connection.execute(query)).mappings()]
