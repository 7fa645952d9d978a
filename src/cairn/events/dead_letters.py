"""Events a JetStream consumer gave up on: recorded in ``event_dead_letters`` within the
event's tenant, listed and cleared over ``/worker/dead``."""

from __future__ import annotations

import json
import logging
import uuid
from typing import Any

from prometheus_client import Counter
from sqlalchemy import delete, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.engine import RowMapping
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from cairn.db.engine import tenant_session
from cairn.db.models import event_dead_letters
from cairn.events.messages import Delivery

log = logging.getLogger(__name__)

UNATTRIBUTED = Counter(
    "cairn_consumer_unattributed_dead_letters_total",
    "Given-up messages without a tenant (not a Cairn event): logged, not stored",
    ["consumer"],
)


class DeadEventStore:
    """The runner's dead-letter sink: one row per (consumer, stream sequence)."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        self.sessions = sessions

    async def record(self, consumer: str, delivery: Delivery, reason: str) -> None:
        event = _decoded(delivery.data)
        owner = _uuid(event.get("owner_id"))
        if owner is None:  # not published by Cairn's relay: no tenant to file it under
            UNATTRIBUTED.labels(consumer).inc()
            log.error(
                "%s: dropping a message without a tenant on %s (sequence %d): %s; data: %.500r",
                consumer, delivery.subject, delivery.stream_sequence, reason, delivery.data,
            )  # fmt: skip
            return
        values = {
            "id": uuid.uuid4(),
            "owner_id": owner,
            "consumer": consumer,
            "subject": delivery.subject,
            "stream_sequence": delivery.stream_sequence,
            "event_id": _text(event.get("event_id")),
            "event_type": _text(event.get("type")),
            "breadcrumb_id": _uuid(event.get("breadcrumb_id")),
            "deliveries": delivery.deliveries,
            "reason": reason,
            "payload": event,
        }
        query = insert(event_dead_letters).values(**values).on_conflict_do_nothing()
        async with tenant_session(self.sessions, owner) as session, session.begin():
            await session.execute(query)


async def newest(session: AsyncSession, owner_id: uuid.UUID, limit: int) -> list[RowMapping]:
    query = (
        select(event_dead_letters)
        .where(event_dead_letters.c.owner_id == owner_id)
        .order_by(event_dead_letters.c.created_at.desc(), event_dead_letters.c.id.desc())
        .limit(limit)
    )
    return list((await session.execute(query)).mappings())


async def remove(session: AsyncSession, owner_id: uuid.UUID, entry_id: uuid.UUID) -> bool:
    query = (
        delete(event_dead_letters)
        .where(event_dead_letters.c.owner_id == owner_id, event_dead_letters.c.id == entry_id)
        .returning(event_dead_letters.c.id)
    )
    return (await session.execute(query)).first() is not None


def _decoded(data: bytes) -> dict[str, Any]:
    try:
        event = json.loads(data)
    except ValueError:
        return {"undecodable": data[:4096].decode("utf-8", errors="replace")}
    return event if isinstance(event, dict) else {"value": event}


def _uuid(value: Any) -> uuid.UUID | None:
    try:
        return uuid.UUID(str(value))
    except ValueError:
        return None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None
