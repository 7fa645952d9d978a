"""The transactional outbox: events are written in the same transaction as the change.

A relay (events issue) publishes pending rows to JetStream after commit; the API itself never
publishes, so a NATS outage cannot lose or block a write.
"""

from __future__ import annotations

from sqlalchemy import func, insert, select
from sqlalchemy.ext.asyncio import AsyncSession

from cairn.db.models import outbox
from cairn.events.payloads import ChangeEvent


async def enqueue(session: AsyncSession, event: ChangeEvent) -> None:
    await session.execute(
        insert(outbox).values(
            owner_id=event.owner_id,
            subject=event.subject,
            msg_id=event.event_id,
            payload=event.payload,
        )
    )


async def pending_count(session: AsyncSession) -> int:
    query = select(func.count()).select_from(outbox).where(outbox.c.published_at.is_(None))
    return int((await session.execute(query)).scalar_one())
