"""The one query transforms make: the newest definition of each of several schemas."""

from __future__ import annotations

import uuid
from collections.abc import Collection
from typing import Any

from sqlalchemy import Integer, Text, text
from sqlalchemy.dialects.postgresql import JSONB, UUID
from sqlalchemy.ext.asyncio import AsyncSession

from cairn.transforms.definitions import DEFINES_PREFIX, SCHEMA_DEFINITION

# One row per wanted schema: the newest live schema.def.v1 carrying its defines: tag
# (GIN index on tags), ties broken by id so every process picks the same one.
_NEWEST = text(
    """
    SELECT DISTINCT ON (wanted.name)
           wanted.name, b.id, b.version, b.llm_hints, b.context -> 'llm_hints' AS context_hints
    FROM unnest(CAST(:names AS text[])) AS wanted(name)
    JOIN breadcrumbs AS b
      ON b.tags @> ARRAY[:prefix || wanted.name]
     AND b.owner_id = :owner_id
     AND b.schema_name = :schema_name
     AND (b.ttl IS NULL OR b.ttl > now())
    ORDER BY wanted.name, b.updated_at DESC, b.id DESC
    """
).columns(name=Text, id=UUID(as_uuid=True), version=Integer, llm_hints=JSONB, context_hints=JSONB)


async def newest_definitions(
    session: AsyncSession, owner_id: uuid.UUID, names: Collection[str]
) -> dict[str, dict[str, Any]]:
    params = {
        "names": sorted(names),
        "prefix": DEFINES_PREFIX,
        "owner_id": owner_id,
        "schema_name": SCHEMA_DEFINITION,
    }
    result = await session.execute(_NEWEST, params)
    return {row["name"]: dict(row) for row in result.mappings()}
