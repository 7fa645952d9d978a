"""The outbox relay: publishes committed outbox rows to JetStream in order, once.

One relay leads at a time (a PostgreSQL advisory lock held on its connection), so rows go out
in outbox order even with many servers; the others wait to take over. A batch is pipelined
(sent in order, acks awaited together); only its acknowledged prefix is marked. It wakes on the
outbox trigger's NOTIFY (at commit) and polls as a fallback. A row is marked published only
after JetStream acknowledged it; a crash in between republishes it with the same
``Nats-Msg-Id``, which JetStream's duplicate window drops.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable

import asyncpg
from prometheus_client import Counter, Gauge

from cairn.config import EventSettings
from cairn.events.broker import Broker, Outgoing
from cairn.events.outbox import published_body
from cairn.events.payloads import event_headers
from cairn.tasks import wait_set

log = logging.getLogger(__name__)

RELAY_LOCK = 0x6361_6972_6E01
CHANNEL = "cairn_outbox"
PUBLISHED = Counter("cairn_outbox_published_total", "Outbox events published to JetStream")
PENDING = Gauge("cairn_outbox_pending", "Outbox events waiting to be published")

BrokerProvider = Callable[[], Broker | None]


class OutboxRelay:
    def __init__(self, dsn: str, brokers: BrokerProvider, settings: EventSettings) -> None:
        self.dsn = dsn
        self.brokers = brokers
        self.settings = settings
        self.leading = False
        self._wake = asyncio.Event()
        self._last_cleanup = 0.0

    async def run(self) -> None:
        """Forever: connect, wait for leadership, relay; reconnect after any failure."""
        while True:
            try:
                connection = await asyncpg.connect(self.dsn)
            except (OSError, asyncpg.PostgresError) as error:
                log.warning("outbox relay cannot reach PostgreSQL (%s); retrying", error)
                await asyncio.sleep(1)
                continue
            try:
                await self._lead(connection)
            except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as error:
                log.warning("outbox relay lost its connection (%s); reconnecting", error)
            finally:
                self.leading = False
                with contextlib.suppress(Exception):
                    await asyncio.shield(connection.close(timeout=2))
            await asyncio.sleep(0.5)

    async def _lead(self, connection: asyncpg.Connection) -> None:
        while not await connection.fetchval("SELECT pg_try_advisory_lock($1)", RELAY_LOCK):
            await asyncio.sleep(2)  # another relay leads; take over if it goes away
        self.leading = True
        log.info("outbox relay leading")
        await connection.add_listener(CHANNEL, lambda *_: self._wake.set())
        while True:
            self._wake.clear()
            while await self.relay_batch(connection) == self.settings.relay_batch:
                pass  # a full batch: more may be waiting
            await self._cleanup(connection)
            await wait_set(self._wake, self.settings.relay_poll_s)

    async def relay_batch(self, connection: asyncpg.Connection) -> int:
        """Publish up to one batch of pending rows in order; returns how many went out."""
        rows = await connection.fetch(
            "SELECT id, subject, msg_id, payload::text AS payload, context::text AS context,"
            " owner_id::text AS owner, payload->>'schema_name' AS schema_name"
            " FROM outbox WHERE published_at IS NULL ORDER BY id LIMIT $1",
            self.settings.relay_batch,
        )
        PENDING.set(len(rows))
        broker = self.brokers()
        if not rows or broker is None:
            return 0
        messages = [
            Outgoing(
                row["subject"],
                published_body(row["payload"], row["context"]),
                str(row["msg_id"]),
                event_headers(row["owner"], row["schema_name"]),
            )
            for row in rows
        ]
        try:
            count = await broker.publish_batch(messages)
        except Exception as error:  # NATS away: keep them all, in order, for later
            log.warning("publishing outbox event %s failed (%s); will retry", rows[0]["id"], error)
            count = 0
        published = [row["id"] for row in rows[:count]]
        if published:
            await connection.execute(
                "UPDATE outbox SET published_at = now() WHERE id = ANY($1::bigint[])", published
            )
            PUBLISHED.inc(len(published))
        return len(published)

    async def _cleanup(self, connection: asyncpg.Connection) -> None:
        """Delete published rows past their retention, at most once a minute."""
        now = time.monotonic()
        if now - self._last_cleanup < 60:
            return
        self._last_cleanup = now
        await connection.execute(
            "DELETE FROM outbox WHERE published_at < now() - make_interval(secs => $1)",
            self.settings.outbox_retention_s,
        )


def asyncpg_dsn(sqlalchemy_url: str) -> str:
    """``postgresql+asyncpg://…`` → ``postgresql://…`` for a plain asyncpg connection."""
    return sqlalchemy_url.replace("postgresql+asyncpg://", "postgresql://", 1)
