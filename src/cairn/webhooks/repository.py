"""Every query on webhooks, agent secrets and the dead-letter queue; all owner-scoped except
the delivery loop's own claims (which act for every tenant)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from sqlalchemy import RowMapping, delete, func, select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from cairn.db.models import agent_secrets, tenants, webhook_dlq, webhooks


async def insert_webhook(session: AsyncSession, values: dict[str, Any]) -> RowMapping:
    query = insert(webhooks).values(**values).returning(webhooks)
    row: RowMapping = (await session.execute(query)).mappings().one()
    return row


async def active_webhooks(
    session: AsyncSession, owner_id: uuid.UUID, agent_id: str
) -> Sequence[RowMapping]:
    query = (
        select(webhooks)
        .where(webhooks.c.owner_id == owner_id, webhooks.c.agent_id == agent_id, webhooks.c.active)
        .order_by(webhooks.c.created_at, webhooks.c.id)
    )
    return (await session.execute(query)).mappings().all()


async def deactivate_webhook(
    session: AsyncSession, owner_id: uuid.UUID, agent_id: str, webhook_id: uuid.UUID
) -> bool:
    query = (
        update(webhooks)
        .where(
            webhooks.c.id == webhook_id,
            webhooks.c.owner_id == owner_id,
            webhooks.c.agent_id == agent_id,
            webhooks.c.active,
        )
        .values(active=False)
        .returning(webhooks.c.id)
    )
    return (await session.execute(query)).first() is not None


async def create_secret_if_missing(
    session: AsyncSession, owner_id: uuid.UUID, agent_id: str, secret: str
) -> bool:
    """True when this call stored ``secret``; False when the agent already had one."""
    query = (
        insert(agent_secrets)
        .values(owner_id=owner_id, agent_id=agent_id, secret=secret)
        .on_conflict_do_nothing()
        .returning(agent_secrets.c.agent_id)
    )
    return (await session.execute(query)).first() is not None


async def set_secret(
    session: AsyncSession, owner_id: uuid.UUID, agent_id: str, secret: str
) -> None:
    query = insert(agent_secrets).values(owner_id=owner_id, agent_id=agent_id, secret=secret)
    await session.execute(
        query.on_conflict_do_update(
            index_elements=[agent_secrets.c.owner_id, agent_secrets.c.agent_id],
            set_={"secret": secret, "updated_at": func.now()},
        )
    )


async def bump_generation(session: AsyncSession, owner_id: uuid.UUID) -> None:
    """Mark a change to the tenant's webhooks or secrets; commits with the change itself."""
    query = (
        update(tenants)
        .where(tenants.c.id == owner_id)
        .values(webhook_generation=tenants.c.webhook_generation + 1)
    )
    await session.execute(query)


async def webhook_generation(session: AsyncSession | AsyncConnection, owner_id: uuid.UUID) -> int:
    """The tenant's generation; 0 for a tenant without a row (it has no webhooks either)."""
    query = select(tenants.c.webhook_generation).where(tenants.c.id == owner_id)
    return int((await session.execute(query)).scalar_one_or_none() or 0)


async def delivery_targets(session: AsyncSession, owner_id: uuid.UUID) -> Sequence[RowMapping]:
    """The tenant's active webhooks with their agent's secret."""
    query = (
        select(webhooks, agent_secrets.c.secret)
        .outerjoin(
            agent_secrets,
            (agent_secrets.c.owner_id == webhooks.c.owner_id)
            & (agent_secrets.c.agent_id == webhooks.c.agent_id),
        )
        .where(webhooks.c.owner_id == owner_id, webhooks.c.active)
    )
    return (await session.execute(query)).mappings().all()


async def record_dead_letter(session: AsyncSession, values: dict[str, Any]) -> None:
    """One entry per (webhook, event): a redelivered event that fails again adds its attempts."""
    query = insert(webhook_dlq).values(id=uuid.uuid4(), **values)
    await session.execute(
        query.on_conflict_do_update(
            index_elements=[webhook_dlq.c.webhook_id, webhook_dlq.c.event_id],
            set_={
                "attempts": webhook_dlq.c.attempts + query.excluded.attempts,
                "last_error": query.excluded.last_error,
                "updated_at": func.now(),
            },
        )
    )


async def dead_letters(
    session: AsyncSession, owner_id: uuid.UUID, limit: int
) -> Sequence[RowMapping]:
    query = (
        select(webhook_dlq)
        .where(webhook_dlq.c.owner_id == owner_id)
        .order_by(webhook_dlq.c.created_at.desc(), webhook_dlq.c.id.desc())
        .limit(limit)
    )
    return (await session.execute(query)).mappings().all()


async def delete_dead_letter(
    session: AsyncSession, owner_id: uuid.UUID, entry_id: uuid.UUID
) -> bool:
    query = (
        delete(webhook_dlq)
        .where(webhook_dlq.c.id == entry_id, webhook_dlq.c.owner_id == owner_id)
        .returning(webhook_dlq.c.id)
    )
    return (await session.execute(query)).first() is not None


async def requeue_dead_letter(
    session: AsyncSession, owner_id: uuid.UUID, entry_id: uuid.UUID
) -> bool:
    query = (
        update(webhook_dlq)
        .where(webhook_dlq.c.id == entry_id, webhook_dlq.c.owner_id == owner_id)
        .values(requeued_at=func.now())
        .returning(webhook_dlq.c.id)
    )
    return (await session.execute(query)).first() is not None


async def claim_requeued(
    session: AsyncSession, busy: Sequence[uuid.UUID], limit: int
) -> Sequence[RowMapping]:
    """Entries asked to retry, taken by this caller (others skip them), with the secret."""
    pending = (
        select(webhook_dlq.c.id)
        .where(webhook_dlq.c.requeued_at.is_not(None), webhook_dlq.c.id.not_in(busy))
        .order_by(webhook_dlq.c.requeued_at)
        .limit(limit)
        .with_for_update(skip_locked=True)
    )
    claimed = (
        update(webhook_dlq)
        .where(webhook_dlq.c.id.in_(pending.scalar_subquery()))
        .values(requeued_at=None)
        .returning(webhook_dlq)
        .cte("claimed")
    )
    query = select(claimed, agent_secrets.c.secret).outerjoin(
        agent_secrets,
        (agent_secrets.c.owner_id == claimed.c.owner_id)
        & (agent_secrets.c.agent_id == claimed.c.agent_id),
    )
    return (await session.execute(query)).mappings().all()


async def resolve_dead_letter(session: AsyncSession, entry_id: uuid.UUID) -> None:
    await session.execute(delete(webhook_dlq).where(webhook_dlq.c.id == entry_id))


async def fail_dead_letter(
    session: AsyncSession, entry_id: uuid.UUID, attempts: int, last_error: str
) -> None:
    await session.execute(
        update(webhook_dlq)
        .where(webhook_dlq.c.id == entry_id)
        .values(
            attempts=webhook_dlq.c.attempts + attempts,
            last_error=last_error,
            updated_at=func.now(),
        )
    )
