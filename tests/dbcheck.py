"""Direct looks at the tables, for "nothing was written" checks."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from cairn.events.outbox import published_body

TABLES = ("breadcrumbs", "breadcrumb_history", "outbox", "idempotency_keys")


async def row_counts(engine: AsyncEngine) -> dict[str, int]:
    async with engine.connect() as connection:
        return {
            table: (await connection.execute(text(f"SELECT count(*) FROM {table}"))).scalar_one()
            for table in TABLES
        }


async def outbox_events(
    engine: AsyncEngine, breadcrumb_id: str
) -> list[tuple[str, dict[str, Any]]]:
    """(subject, event) of every outbox row about one breadcrumb, oldest first."""
    return [(row.subject, event) for row, event in await published_events(engine, breadcrumb_id)]


async def published_events(
    engine: AsyncEngine, breadcrumb_id: str
) -> list[tuple[Any, dict[str, Any]]]:
    """Every outbox row about one breadcrumb, oldest first, with its event as the relay
    publishes it."""
    query = text(
        "SELECT owner_id, subject, msg_id, payload::text AS payload, context::text AS context"
        " FROM outbox WHERE payload->>'breadcrumb_id' = :id ORDER BY id"
    )
    async with engine.connect() as connection:
        rows = (await connection.execute(query, {"id": breadcrumb_id})).all()
    return [(row, json.loads(published_body(row.payload, row.context))) for row in rows]


def plan_nodes(
    plan: dict[str, Any], parent: dict[str, Any] | None = None
) -> Iterator[tuple[dict[str, Any] | None, dict[str, Any]]]:
    """Every node of an ``EXPLAIN (FORMAT JSON)`` plan with the node above it (None for
    the root), depth first."""
    yield parent, plan
    for child in plan.get("Plans", []):
        yield from plan_nodes(child, plan)
