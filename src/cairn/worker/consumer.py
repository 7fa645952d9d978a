"""A JetStream durable pull consumer shared by every worker (queue semantics).

Each message is acked only after its handler committed; a crash before that leaves it
unacked and JetStream redelivers it after ``ack_wait``. Concurrency is bounded; ``stop()``
stops fetching and waits for the messages in flight (graceful drain).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from nats.errors import TimeoutError as NatsTimeout
from nats.js import JetStreamContext
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy
from prometheus_client import Counter

from cairn.events.payloads import STREAM_NAME, STREAM_SUBJECTS
from cairn.worker.outcomes import PoisonMessage, RetryLater

log = logging.getLogger(__name__)

OUTCOMES = Counter("cairn_worker_messages_total", "Messages handled by the worker", ["outcome"])

Handler = Callable[[dict[str, Any]], Awaitable[None]]


def consumer_config(durable: str, ack_wait_s: float, max_deliver: int) -> ConsumerConfig:
    return ConsumerConfig(
        durable_name=durable,
        filter_subject=STREAM_SUBJECTS,
        ack_policy=AckPolicy.EXPLICIT,
        ack_wait=ack_wait_s,
        max_deliver=max_deliver,
        # A new worker group starts with what happens from now on, not the whole history.
        deliver_policy=DeliverPolicy.NEW,
    )


class DurableConsumer:
    def __init__(
        self,
        js: JetStreamContext,
        handler: Handler,
        *,
        durable: str,
        concurrency: int,
        ack_wait_s: float = 30.0,
        max_deliver: int = 20,
    ) -> None:
        self.js = js
        self.handler = handler
        self.durable = durable
        self.config = consumer_config(durable, ack_wait_s, max_deliver)
        self.slots = asyncio.Semaphore(concurrency)
        self.in_flight: set[asyncio.Task[None]] = set()
        self.stopping = asyncio.Event()

    async def run(self) -> None:
        subscription = await self.js.pull_subscribe(
            STREAM_SUBJECTS, durable=self.durable, stream=STREAM_NAME, config=self.config
        )
        log.info("worker consuming %s as %s", STREAM_NAME, self.durable)
        while not self.stopping.is_set():
            await self.slots.acquire()
            self.slots.release()
            try:
                messages = await subscription.fetch(batch=self._free_slots(), timeout=1)
            except (NatsTimeout, TimeoutError):
                continue
            except Exception as error:  # NATS away: the client reconnects; try again
                if self._connection_closed():
                    break  # closed for good (shutdown): nothing will come any more
                log.warning("fetch failed (%s); retrying", error)
                await asyncio.sleep(1)
                continue
            for message in messages:
                await self.slots.acquire()
                task = asyncio.create_task(self._handle(message))
                self.in_flight.add(task)
                task.add_done_callback(self.in_flight.discard)
        await self.drain()

    async def stop(self) -> None:
        self.stopping.set()

    async def drain(self) -> None:
        if self.in_flight:
            log.info("draining %d messages in flight", len(self.in_flight))
            await asyncio.gather(*self.in_flight, return_exceptions=True)

    def _connection_closed(self) -> bool:
        client = getattr(self.js, "_nc", None)  # the context has no public accessor
        return bool(client is not None and client.is_closed)

    def _free_slots(self) -> int:
        return max(1, self.slots._value)

    async def _handle(self, message: Any) -> None:
        try:
            await self._dispatch(message)
        finally:
            self.slots.release()

    async def _dispatch(self, message: Any) -> None:
        try:
            event = json.loads(message.data)
            if not isinstance(event, dict):
                raise PoisonMessage("not a JSON object")
            await self.handler(event)
        except PoisonMessage as error:
            log.error("poison message on %s: %s", message.subject, error)
            OUTCOMES.labels("poison").inc()
            await message.term()
        except ValueError as error:
            log.error("undecodable message on %s: %s", message.subject, error)
            OUTCOMES.labels("poison").inc()
            await message.term()
        except RetryLater as error:
            OUTCOMES.labels("retry").inc()
            log.info("retrying %s later: %s", message.subject, error)
            await message.nak(delay=error.delay_s)
        except Exception:
            OUTCOMES.labels("error").inc()
            log.exception("handler failed on %s; it will be redelivered", message.subject)
            with contextlib.suppress(Exception):
                await message.nak(delay=2.0)
        else:
            OUTCOMES.labels("ok").inc()
            await message.ack()
