"""Start the event machinery of an API process: the NATS connection, the outbox relay and
webhook delivery."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from cairn.config import Settings
from cairn.events.broker import Broker, JetStreamBroker
from cairn.events.nats_client import NatsHolder
from cairn.events.payloads import event_summary
from cairn.events.relay import OutboxRelay, asyncpg_dsn
from cairn.events.stream_setup import ensure_stream
from cairn.webhooks.worker import run_webhook_delivery

log = logging.getLogger(__name__)


# Told of every change event: reads its ``owner_id`` and ``schema_name`` only (it is given
# just those when the message's headers carry them: events.payloads.event_summary).
CacheListener = Callable[[Mapping[str, Any]], object]


def start_events(
    settings: Settings,
    holder: NatsHolder,
    sessions: async_sessionmaker[AsyncSession] | None = None,
    listeners: Sequence[CacheListener] = (),
    *,
    system_sessions: async_sessionmaker[AsyncSession] | None = None,
) -> list[asyncio.Task[None]]:
    """Background tasks: connect to NATS, declare the stream, relay the outbox, (given
    ``sessions``) deliver webhooks, and tell ``listeners`` about every change made anywhere
    (caches of schema hints, agents and the blacklist forget what changed)."""
    system_url = settings.system_database_url
    assert system_url

    made: list[tuple[object, JetStreamBroker]] = []

    def broker() -> Broker | None:
        """One broker per client: its JetStream context holds the pipelined publishes'
        reply subscription."""
        js = holder.jetstream()
        if js is None:
            return None
        if not made or made[0][0] is not holder.client:
            made[:] = [(holder.client, JetStreamBroker(js, settings.events))]
        return made[0][1]

    # The relay reads every tenant's outbox: it connects as the schema owner.
    relay = OutboxRelay(asyncpg_dsn(system_url), broker, settings.events)
    tasks = [
        asyncio.create_task(_connect(holder, settings, listeners), name="nats-connect"),
        asyncio.create_task(relay.run(), name="outbox-relay"),
    ]
    if sessions is not None:
        webhooks = run_webhook_delivery(holder, sessions, settings.events, system_sessions)
        tasks.append(asyncio.create_task(webhooks, name="webhook-delivery"))
    return tasks


async def _connect(
    holder: NatsHolder, settings: Settings, listeners: Sequence[CacheListener]
) -> None:
    await holder.run()
    js = holder.jetstream()
    if js is None or holder.client is None:
        return
    if listeners:
        await holder.client.subscribe("bc.>", cb=_notify(listeners))
    try:
        await ensure_stream(js, settings.events)
    except Exception:  # the broker declares it on first publish instead
        log.warning("could not declare the JetStream stream yet", exc_info=True)
    holder.ready.set()


def _notify(listeners: Sequence[CacheListener]) -> Callable[[Any], Any]:
    """A core NATS subscription: at most once, which is enough for cache invalidation
    (the caches also expire on their own)."""

    async def on_message(message: Any) -> None:
        payload = event_summary(message.headers)  # all a listener reads
        if payload is None:
            try:
                payload = json.loads(message.data)
            except ValueError:
                return
        if isinstance(payload, dict):
            for listener in listeners:
                listener(payload)

    return on_message
