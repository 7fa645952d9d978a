"""The log's queries: a page of entries (newest first), per-agent figures, and the purge."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Float, cast, delete, func, select
from sqlalchemy.engine import RowMapping
from sqlalchemy.ext.asyncio import AsyncSession

from cairn.db.models import assemblies

a = assemblies.c


@dataclass(frozen=True, slots=True)
class EntryFilter:
    agent_id: str | None = None
    session_tag: str | None = None
    since: datetime | None = None
    before_id: int | None = None  # the page cursor: entries written before this one


async def newest(
    session: AsyncSession, owner_id: uuid.UUID, flt: EntryFilter, limit: int
) -> list[RowMapping]:
    query = select(assemblies).where(a.owner_id == owner_id)
    if flt.agent_id is not None:
        query = query.where(a.agent_id == flt.agent_id)
    if flt.session_tag is not None:
        query = query.where(a.session_tag == flt.session_tag)
    if flt.since is not None:
        query = query.where(a.created_at >= flt.since)
    if flt.before_id is not None:
        query = query.where(a.id < flt.before_id)
    return list((await session.execute(query.order_by(a.id.desc()).limit(limit))).mappings())


async def per_agent(
    session: AsyncSession, owner_id: uuid.UUID, since: datetime | None
) -> list[RowMapping]:
    """Per agent: how many assemblies, the median and 99th percentile of their total
    milliseconds, the mean tokens, and the mean share of the budget used."""
    budget_use = cast(a.token_count, Float) / func.nullif(a.token_budget, 0)
    query = (
        select(
            a.agent_id,
            func.count().label("count"),
            func.percentile_cont(0.5).within_group(a.total_ms).label("p50_ms"),
            func.percentile_cont(0.99).within_group(a.total_ms).label("p99_ms"),
            func.avg(a.token_count).label("mean_tokens"),
            func.avg(budget_use).label("mean_budget_use"),
            func.count().filter(a.cache_hit).label("cache_hits"),
        )
        .where(a.owner_id == owner_id)
        .group_by(a.agent_id)
        .order_by(a.agent_id)
    )
    if since is not None:
        query = query.where(a.created_at >= since)
    return list((await session.execute(query)).mappings())


async def purge_before(session: AsyncSession, cutoff: datetime, batch: int) -> int:
    """Delete up to ``batch`` entries written before ``cutoff`` (any tenant: the caller's
    session is the schema owner's); returns how many went."""
    oldest = select(a.id).where(a.created_at < cutoff).limit(batch).scalar_subquery()
    result = await session.execute(delete(assemblies).where(a.id.in_(oldest)).returning(a.id))
    return len(result.all())
