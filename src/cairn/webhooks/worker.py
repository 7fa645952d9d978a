"""Webhook delivery inside an API process: one HTTP client, the JetStream consumer and the
DLQ requeue loop, started by ``cairn.events.runtime.start_events``."""

from __future__ import annotations

import asyncio
import dataclasses

import httpx
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from cairn.config import EventSettings
from cairn.events.consumer import ConsumerRunner, database_runner
from cairn.events.messages import ConsumerSpec, Delivery
from cairn.events.nats_client import NatsHolder
from cairn.webhooks.delivery import Deliverer
from cairn.webhooks.dispatch import DatabaseDeadLetters, EventDispatcher
from cairn.webhooks.requeue import DeadLetterRequeuer
from cairn.webhooks.targets import TargetCache, database_generation, database_loader


async def run_webhook_delivery(
    holder: NatsHolder,
    sessions: async_sessionmaker[AsyncSession],
    settings: EventSettings,
    system_sessions: async_sessionmaker[AsyncSession] | None = None,
) -> None:
    """Runs until cancelled; each loop survives NATS and PostgreSQL outages on its own.

    An event is delivered within its own tenant (``sessions`` scoped to the event's
    ``owner_id``: only that tenant's webhooks and secrets are visible); only the DLQ
    requeue poll spans tenants, on ``system_sessions`` (the schema owner), which also
    reads each event's tenant's webhook generation (``targets.database_generation``)."""
    limits = httpx.Limits(
        max_connections=settings.webhook_concurrency,
        max_keepalive_connections=settings.webhook_concurrency,
    )
    # Redirects are never followed: a receiver must not steer signed events elsewhere.
    async with httpx.AsyncClient(follow_redirects=False, limits=limits) as http:
        deliverer = Deliverer(http, settings)
        targets = TargetCache(
            database_loader(sessions),
            settings.webhook_cache_ttl_s,
            database_generation(sessions, system_sessions),
        )
        dispatcher = EventDispatcher(targets, deliverer, DatabaseDeadLetters(sessions))
        consumer = webhook_consumer(holder, dispatcher, sessions, settings)
        requeuer = DeadLetterRequeuer(system_sessions or sessions, deliverer, settings)
        async with asyncio.TaskGroup() as group:
            group.create_task(consumer.run(), name="webhook-consumer")
            group.create_task(requeuer.run(), name="webhook-requeue")


CONSUMER = "webhooks"


def webhook_consumer(
    holder: NatsHolder,
    dispatcher: EventDispatcher,
    sessions: async_sessionmaker[AsyncSession],
    settings: EventSettings,
) -> ConsumerRunner:
    """Every API process pulls from the same durable consumer, so each event is handled by
    one of them; it is acknowledged once every delivery of it finished (delivered or in the
    webhook DLQ). Receivers deduplicate redeliveries by ``X-Cairn-Event-Id``."""

    async def dispatch(delivery: Delivery) -> None:
        await dispatcher.dispatch(delivery.data, delivery.summary())

    capacity = max(1, settings.webhook_concurrency)
    spec = ConsumerSpec.from_settings(CONSUMER, capacity, settings.webhook_ack_wait_s, settings)
    spec = dataclasses.replace(spec, max_ack_pending=capacity * 4)
    return database_runner(holder, dispatch, spec, sessions, settings)
