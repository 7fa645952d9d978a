"""Start the event machinery of an API process: the NATS connection, the outbox relay and
webhook delivery."""

from __future__ import annotations

import asyncio
import logging

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from cairn.config import Settings
from cairn.events.broker import Broker, JetStreamBroker
from cairn.events.nats_client import NatsHolder
from cairn.events.relay import OutboxRelay, asyncpg_dsn
from cairn.events.stream_setup import ensure_stream
from cairn.webhooks.worker import run_webhook_delivery

log = logging.getLogger(__name__)


def start_events(
    settings: Settings,
    holder: NatsHolder,
    sessions: async_sessionmaker[AsyncSession] | None = None,
) -> list[asyncio.Task[None]]:
    """Background tasks: connect to NATS, declare the stream, relay the outbox, and (given
    ``sessions``) deliver webhooks."""
    assert settings.database_url

    def broker() -> Broker | None:
        js = holder.jetstream()
        return JetStreamBroker(js, settings.events) if js is not None else None

    relay = OutboxRelay(asyncpg_dsn(settings.database_url), broker, settings.events)
    tasks = [
        asyncio.create_task(_connect(holder, settings), name="nats-connect"),
        asyncio.create_task(relay.run(), name="outbox-relay"),
    ]
    if sessions is not None:
        webhooks = run_webhook_delivery(holder, sessions, settings.events)
        tasks.append(asyncio.create_task(webhooks, name="webhook-delivery"))
    return tasks


async def _connect(holder: NatsHolder, settings: Settings) -> None:
    await holder.run()
    js = holder.jetstream()
    if js is None:
        return
    try:
        await ensure_stream(js, settings.events)
    except Exception:  # the broker declares it on first publish instead
        log.warning("could not declare the JetStream stream yet", exc_info=True)
    holder.ready.set()
