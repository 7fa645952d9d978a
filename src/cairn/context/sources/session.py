"""``context_sources.session``: the newest records of the trigger's session, before it
(score = recency: 1.0 for the newest)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from sqlalchemy.ext.asyncio import AsyncSession

from cairn.context.model import Seed
from cairn.context.records import LIVE, NOT_EXCLUDED
from cairn.context.sources.base import (
    Rows,
    SeedBatch,
    SeedCost,
    SeedQuery,
    SeedRequest,
    run_alone,
)
from cairn.context.trigger import Probe, as_probe

NAME = "session"


class Session:
    name = NAME
    # The newest turns of the session come before almost everything else.
    cost = SeedCost(base=0.02, span=0.3)

    async def query(self, request: SeedRequest) -> SeedQuery | SeedBatch:
        return session_query(
            request.owner_id, request.sessions, request.agent.session_limit,
            request.excluded, request.trigger.probe,
        )  # fmt: skip

    async def seeds(self, request: SeedRequest) -> SeedBatch:
        return await session_seeds(
            request.session, request.owner_id, request.sessions, request.agent.session_limit,
            request.excluded, request.trigger.probe,
        )  # fmt: skip


SOURCE = Session()


async def session_seeds(
    session: AsyncSession,
    owner_id: uuid.UUID,
    session_tags: Sequence[str],
    limit: int,
    excluded: frozenset[str],
    trigger: uuid.UUID | Probe,
) -> SeedBatch:
    query = session_query(owner_id, session_tags, limit, excluded, trigger)
    return await run_alone(session, query)


def session_query(
    owner_id: uuid.UUID,
    session_tags: Sequence[str],
    limit: int,
    excluded: frozenset[str],
    trigger: uuid.UUID | Probe,
) -> SeedQuery | SeedBatch:
    if not session_tags or limit <= 0:
        return SeedBatch([])
    probe = as_probe(trigger)
    # Only what came before the trigger: a slow assembly must not show later turns.
    query = (
        "SELECT id FROM breadcrumbs WHERE owner_id = :owner AND tags && :tags"
        f" AND id <> :trigger AND {LIVE} AND {NOT_EXCLUDED}"
        f" AND created_at <= {probe.created_at_sql()}"
        " ORDER BY created_at DESC, id DESC LIMIT :limit"
    )
    params = {
        "owner": owner_id, "tags": list(session_tags), "limit": limit,
        "excluded": sorted(excluded), **probe.params(),
    }  # fmt: skip
    return SeedQuery(query, params, _read)


def _read(rows: Rows) -> SeedBatch:
    seeds = [
        Seed(row["id"], NAME, 1.0 - rank / max(1, len(rows)), f"session rank {rank + 1}")
        for rank, row in enumerate(rows)
    ]
    return SeedBatch(seeds)
