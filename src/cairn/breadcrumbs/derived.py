"""What a record's stored text is, as its hints render it: one definition for the write path
and the reindex, so that a reindexed record reads exactly as if it had just been written."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from cairn.breadcrumbs.text import build_llm_text
from cairn.transforms import Transforms

# Outputs, not knowledge: assembled contexts are never searched, so never embedded.
NOT_EMBEDDED_SCHEMAS = frozenset({"agent.context.v1"})


def is_embedded(record: Mapping[str, Any]) -> bool:
    return record.get("schema_name") not in NOT_EMBEDDED_SCHEMAS


async def render_llm_texts(
    transforms: Transforms,
    session: AsyncSession,
    owner_id: uuid.UUID,
    records: Sequence[Mapping[str, Any]],
) -> list[str]:
    """Each record's ``llm_text``: its hints (its own, else its schema's) applied to its
    context, then title, description and the transformed context joined (one definitions
    query for the batch)."""
    views = await transforms.render_many(session, owner_id, records)
    return [
        build_llm_text(
            record["title"], record.get("description"), view.context, transformed=view.replaced
        )
        for record, view in zip(records, views, strict=True)
    ]
