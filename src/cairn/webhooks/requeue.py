"""Redelivery of dead-letter entries asked to retry (``POST /dlq/{id}/retry``).

The request only marks the entry; every API process polls for marked entries and claims
them with ``SKIP LOCKED``, so one process redelivers each. Redelivery uses the same retry
policy as the first delivery: success deletes the entry, failure adds the attempts and keeps
the last error. A process that dies mid-way leaves the entry in the DLQ, unmarked.

The poll spans tenants, so ``sessions`` are the system sessions (the schema owner's); what is
redelivered is exactly the stored entry, to the webhook and tenant it was recorded for.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import uuid

from sqlalchemy import RowMapping
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from cairn.config import EventSettings
from cairn.webhooks import repository
from cairn.webhooks.delivery import Deliverer, Target
from cairn.webhooks.dispatch import DELIVERIES

log = logging.getLogger(__name__)


class DeadLetterRequeuer:
    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        deliverer: Deliverer,
        settings: EventSettings,
    ) -> None:
        self.sessions = sessions
        self.deliverer = deliverer
        self.settings = settings
        self.capacity = max(1, settings.webhook_concurrency)
        self.busy: dict[uuid.UUID, asyncio.Task[None]] = {}

    async def run(self) -> None:
        try:
            while True:
                try:
                    await self.claim_and_start()
                except (SQLAlchemyError, OSError) as error:
                    log.warning("cannot look for requeued DLQ entries (%s)", error)
                except Exception:  # a defect must not end redelivery for good
                    log.exception("looking for requeued DLQ entries failed")
                await asyncio.sleep(self.settings.webhook_requeue_poll_s)
        finally:
            for task in self.busy.values():
                task.cancel()
            await asyncio.gather(*self.busy.values(), return_exceptions=True)

    async def claim_and_start(self) -> int:
        free = self.capacity - len(self.busy)
        if free <= 0:
            return 0
        async with self.sessions() as session, session.begin():
            rows = await repository.claim_requeued(session, list(self.busy), free)
        for row in rows:
            entry_id: uuid.UUID = row["id"]
            task = asyncio.create_task(self._redeliver(row), name="webhook-redelivery")
            self.busy[entry_id] = task
            task.add_done_callback(functools.partial(self._forget, entry_id))
        return len(rows)

    def _forget(self, entry_id: uuid.UUID, _: asyncio.Task[None]) -> None:
        self.busy.pop(entry_id, None)

    async def _redeliver(self, row: RowMapping) -> None:
        target = Target(
            webhook_id=row["webhook_id"],
            owner_id=row["owner_id"],
            agent_id=row["agent_id"],
            url=row["url"],
            secret=row["secret"],
        )
        body = json.dumps(row["payload"], ensure_ascii=False).encode()
        outcome = await self.deliverer.deliver(
            target, body, row["event_id"], previous_attempts=row["attempts"]
        )
        try:
            async with self.sessions() as session, session.begin():
                if outcome.delivered:
                    await repository.resolve_dead_letter(session, row["id"])
                else:
                    error = outcome.last_error or "unknown error"
                    await repository.fail_dead_letter(session, row["id"], outcome.attempts, error)
        except (SQLAlchemyError, OSError) as error:
            log.warning("could not record the redelivery of DLQ entry %s (%s)", row["id"], error)
        DELIVERIES.labels("redelivered" if outcome.delivered else "redelivery_failed").inc()
