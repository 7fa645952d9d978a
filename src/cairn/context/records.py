"""Loading ``Record``s for the context builder: one query for any number of ids."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from cairn.context.model import Record

COLUMNS = (
    "id, owner_id, schema_name, title, tags, context, llm_hints, created_at, updated_at, version"
)
LIVE = "(ttl IS NULL OR ttl > now())"


def to_record(row: Mapping[Any, Any]) -> Record:
    return Record(
        id=row["id"],
        owner_id=row["owner_id"],
        schema_name=row["schema_name"],
        title=row["title"],
        tags=tuple(row["tags"]),
        context=row["context"],
        llm_hints=row["llm_hints"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        version=row["version"],
    )


async def load_records(
    session: AsyncSession, owner_id: uuid.UUID, ids: Iterable[uuid.UUID], excluded: frozenset[str]
) -> dict[uuid.UUID, Record]:
    query = text(
        f"SELECT {COLUMNS} FROM breadcrumbs WHERE owner_id = :owner AND id = ANY(:ids)"
        f" AND {LIVE} AND (schema_name IS NULL OR NOT (schema_name = ANY(:excluded)))"
    )
    params = {"owner": owner_id, "ids": list(set(ids)), "excluded": sorted(excluded)}
    rows = (await session.execute(query, params)).mappings().all()
    return {row["id"]: to_record(row) for row in rows}
