"""One event to every matching webhook of its tenant; what kept failing goes to the DLQ.

Plain bytes in, no NATS here, so the whole decision is testable with in-memory twins.
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from prometheus_client import Counter
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from cairn.db.engine import tenant_session
from cairn.webhooks import repository
from cairn.webhooks.delivery import Deliverer, Outcome, Target
from cairn.webhooks.targets import TargetCache

log = logging.getLogger(__name__)

DELIVERIES = Counter(
    "cairn_webhook_deliveries_total",
    "Webhook deliveries by outcome (delivered, dead_lettered, redelivered, redelivery_failed)",
    ["outcome"],
)


class DeadLetters(Protocol):
    async def add(
        self, target: Target, event_id: str, event: dict[str, Any], outcome: Outcome
    ) -> None: ...


class DatabaseDeadLetters:
    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        self.sessions = sessions

    async def add(
        self, target: Target, event_id: str, event: dict[str, Any], outcome: Outcome
    ) -> None:
        values = {
            "owner_id": target.owner_id,
            "webhook_id": target.webhook_id,
            "agent_id": target.agent_id,
            "url": target.url,
            "event_id": event_id,
            "payload": event,
            "attempts": outcome.attempts,
            "last_error": outcome.last_error or "unknown error",
        }
        scoped = tenant_session(self.sessions, target.owner_id)
        async with scoped as session, session.begin():
            await repository.record_dead_letter(session, values)


class EventDispatcher:
    def __init__(self, targets: TargetCache, deliverer: Deliverer, dead: DeadLetters) -> None:
        self.targets = targets
        self.deliverer = deliverer
        self.dead = dead

    async def dispatch(self, body: bytes, summary: Mapping[str, Any] | None = None) -> int:
        """Deliver ``body`` (the event exactly as published) to the webhooks that want it;
        returns how many did. Raises only when the database is unreachable (retry later).
        ``summary``: the event's tenant from its headers (``Delivery.summary``), which
        spares parsing the body of an event whose tenant has no webhook, the common case."""
        event, owner = None, _owner(summary)
        if owner is None:  # a message without the relay's headers
            if (event := _parse(body)) is None:
                return 0
            owner = event.owner_id
        targets = await self.targets.for_owner(owner)  # one read of the tenant's generation
        if not targets:
            return 0
        if event is None and (event := _parse(body)) is None:
            return 0
        matching = [target for target in targets if target.wants(event.payload)]
        if not matching:
            return 0
        outcomes = await asyncio.gather(
            *(self.deliverer.deliver(target, body, event.event_id) for target in matching)
        )
        for target, outcome in zip(matching, outcomes, strict=True):
            if outcome.delivered:
                DELIVERIES.labels("delivered").inc()
                continue
            log.warning(
                "webhook %s gave up on event %s after %d attempts: %s",
                target.webhook_id, event.event_id, outcome.attempts, outcome.last_error,
            )  # fmt: skip
            await self.dead.add(target, event.event_id, event.payload, outcome)
            DELIVERIES.labels("dead_lettered").inc()
        return sum(outcome.delivered for outcome in outcomes)


@dataclass(frozen=True, slots=True)
class _Event:
    owner_id: uuid.UUID
    event_id: str
    payload: dict[str, Any]


def _owner(summary: Mapping[str, Any] | None) -> uuid.UUID | None:
    try:
        return None if summary is None else uuid.UUID(str(summary["owner_id"]))
    except ValueError:
        return None


def _parse(body: bytes) -> _Event | None:
    """The event and its tenant, or None for a message that is not a change event (a poison
    message: acknowledged and dropped, never retried)."""
    try:
        payload = json.loads(body)
        owner_id = uuid.UUID(str(payload["owner_id"]))
    except (ValueError, KeyError, TypeError):
        log.warning("skipping a message that is not a change event: %.200r", body)
        return None
    return _Event(owner_id, str(payload.get("event_id", "")), payload)
