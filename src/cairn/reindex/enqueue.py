"""A schema definition whose hints changed: its schema's records are reindexed.

Called by the write path in the writer's transaction, so the job exists exactly when the
change does. Hints are those the transforms read (``cairn.transforms.repository``): the
definition's ``llm_hints``, else its ``context.llm_hints``.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from cairn.reindex.jobs import enqueue_hints_job
from cairn.transforms import defined_schemas, is_definition

Row = Mapping[Any, Any]


def schemas_to_reindex(before: Row | None, after: Row | None) -> set[str]:
    """The schemas whose records read differently after this write of a definition: all it
    defines (before or after) when its hints changed, else those it started or stopped
    defining."""
    old, new = _defines(before), _defines(after)
    if _hints(before) != _hints(after):
        return old | new
    return old ^ new


def _defines(row: Row | None) -> set[str]:
    return defined_schemas(row["tags"]) if row is not None and is_definition(row) else set()


def _hints(row: Row | None) -> Any:
    if row is None or not is_definition(row):
        return None
    if isinstance(row.get("llm_hints"), dict):
        return row["llm_hints"]
    nested = row["context"].get("llm_hints") if isinstance(row.get("context"), dict) else None
    return nested if isinstance(nested, dict) else None


async def enqueue_for_hints(
    session: AsyncSession, owner_id: uuid.UUID, before: Row | None, after: Row | None
) -> set[str]:
    """Enqueue a reindex of each schema whose hints this write changed; returns them."""
    names = schemas_to_reindex(before, after)
    for name in sorted(names):
        await enqueue_hints_job(session, owner_id, name)
    return names
