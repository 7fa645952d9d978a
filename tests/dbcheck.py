"""Direct looks at the tables, for "nothing was written" checks."""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

TABLES = ("breadcrumbs", "breadcrumb_history", "outbox", "idempotency_keys")


async def row_counts(engine: AsyncEngine) -> dict[str, int]:
    async with engine.connect() as connection:
        return {
            table: (await connection.execute(text(f"SELECT count(*) FROM {table}"))).scalar_one()
            for table in TABLES
        }
