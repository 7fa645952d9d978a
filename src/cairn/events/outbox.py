"""The transactional outbox: events are written in the same transaction as the change.

A relay (events issue) publishes pending rows to JetStream after commit; the API itself never
publishes, so a NATS outage cannot lose or block a write.

A row's event is its ``payload``, with, when the row has one, its ``context`` column as the
payload's ``"context"`` key: the writes that copy the stored record's context into the event
keep it in that column, as stored, instead of building a new document around it in SQL
(revision 0026).
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


def published_body(payload: str, context: str | None) -> bytes:
    """The event of an outbox row, from its ``payload`` and ``context`` as PostgreSQL writes
    jsonb as text (an object: ``{…}``), as the relay publishes it. Such a row's payload
    never holds a ``"context"`` key (the writes that fill the column leave it out), so the
    context is appended, not merged; key order is not part of an event."""
    if context is None:
        return payload.encode()
    head = payload.rstrip()[:-1].rstrip()  # without its closing brace
    separator = "" if head == "{" else ", "
    return f'{head}{separator}"context": {context}}}'.encode()


async def pending_count(session: AsyncSession) -> int:
    query = select(func.count()).select_from(outbox).where(outbox.c.published_at.is_(None))
    return int((await session.execute(query)).scalar_one())
