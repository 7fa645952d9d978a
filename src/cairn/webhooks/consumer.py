"""The durable JetStream pull consumer ``webhooks`` that feeds delivery.

Every API process pulls from the same durable consumer, so each event is handled by one of
them (queue semantics). A message is acknowledged only after all of its deliveries finished
(delivered or dead-lettered), and marked in progress meanwhile so JetStream does not hand it
to another process; a process that dies mid-way leaves it to be redelivered (at least once:
receivers deduplicate by ``X-Cairn-Event-Id``). Losing NATS ends the pull loop, not the
task: it backs off and subscribes again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable

from nats.aio.msg import Msg
from nats.js import JetStreamContext
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy
from nats.js.errors import NotFoundError
from sqlalchemy.exc import SQLAlchemyError

from cairn.config import EventSettings
from cairn.events.nats_client import NatsHolder
from cairn.events.payloads import STREAM_NAME, STREAM_SUBJECTS
from cairn.events.stream_setup import ensure_stream
from cairn.webhooks.dispatch import EventDispatcher

log = logging.getLogger(__name__)

CONSUMER = "webhooks"
FETCH_TIMEOUT_S = 1.0
# While idle, check this often that the consumer still exists (a stream can be recreated).
CONSUMER_CHECK_S = 10.0
RETRY_LATER_S = 2.0  # the database is away: JetStream offers the event again after this
RETRY_DEFECT_S = 60.0
MIN_BACKOFF_S, MAX_BACKOFF_S = 0.5, 5.0

PullSubscription = JetStreamContext.PullSubscription


class WebhookConsumer:
    def __init__(
        self, holder: NatsHolder, dispatcher: EventDispatcher, settings: EventSettings
    ) -> None:
        self.holder = holder
        self.dispatcher = dispatcher
        self.settings = settings
        self.capacity = max(1, settings.webhook_concurrency)
        self.in_flight: set[asyncio.Task[None]] = set()
        self.last_sequence: int | None = None  # the newest stream sequence fetched here

    async def run(self) -> None:
        """Forever: pull and dispatch; after any failure, back off and subscribe again."""
        await self.holder.ready.wait()
        delay = MIN_BACKOFF_S
        try:
            while True:
                js = self.holder.jetstream()
                if js is not None:
                    try:
                        subscription = await self._subscribe(js)
                        delay = MIN_BACKOFF_S  # NATS answers again
                        await self._pull(js, subscription)
                    except Exception as error:  # NATS away, consumer gone, …: start over
                        log.warning("webhook consumer interrupted (%s); resuming", error)
                await asyncio.sleep(delay)
                delay = min(delay * 2, MAX_BACKOFF_S)
        finally:
            for task in self.in_flight:
                task.cancel()
            await asyncio.gather(*self.in_flight, return_exceptions=True)

    async def _pull(self, js: JetStreamContext, subscription: PullSubscription) -> None:
        checked = time.monotonic()
        try:
            while True:
                await self._wait_for_capacity()
                try:
                    messages = await subscription.fetch(
                        self.capacity - len(self.in_flight), timeout=FETCH_TIMEOUT_S
                    )
                except TimeoutError:
                    if time.monotonic() - checked > CONSUMER_CHECK_S:
                        await js.consumer_info(STREAM_NAME, CONSUMER)  # raises when gone
                        checked = time.monotonic()
                    continue
                for message in messages:
                    self._start(message)
        finally:
            with contextlib.suppress(Exception):
                await subscription.unsubscribe()

    async def _subscribe(self, js: JetStreamContext) -> PullSubscription:
        """Bind to the durable consumer, creating it if it does not exist (yet, or any more)."""
        try:
            stream = await js.stream_info(STREAM_NAME)
        except NotFoundError:  # a fresh NATS without the stream yet
            await ensure_stream(js, self.settings)
            stream = await js.stream_info(STREAM_NAME)
        config = self._config(int(stream.state.last_seq))
        return await js.pull_subscribe(
            STREAM_SUBJECTS, durable=CONSUMER, stream=STREAM_NAME, config=config
        )

    def _config(self, stream_last_sequence: int) -> ConsumerConfig:
        """Used only when the consumer is created. The first one starts at the stream's end:
        webhooks are for what happens next, not for a week of history. One recreated under
        this process (deleted by hand, or with its stream) continues where this process was."""
        config = ConsumerConfig(
            durable_name=CONSUMER,
            ack_policy=AckPolicy.EXPLICIT,
            ack_wait=self.settings.webhook_ack_wait_s,
            max_ack_pending=self.capacity * 4,
            deliver_policy=DeliverPolicy.NEW,
        )
        if self.last_sequence is None:
            return config
        if stream_last_sequence < self.last_sequence:  # a new stream: all of it is new
            config.deliver_policy = DeliverPolicy.ALL
        else:
            config.deliver_policy = DeliverPolicy.BY_START_SEQUENCE
            config.opt_start_seq = self.last_sequence + 1
        return config

    async def _wait_for_capacity(self) -> None:
        if len(self.in_flight) >= self.capacity:
            await asyncio.wait(self.in_flight, return_when=asyncio.FIRST_COMPLETED)

    def _start(self, message: Msg) -> None:
        sequence = int(message.metadata.sequence.stream)
        self.last_sequence = max(sequence, self.last_sequence or 0)
        task = asyncio.create_task(self._handle(message), name="webhook-event")
        self.in_flight.add(task)
        task.add_done_callback(self.in_flight.discard)

    async def _handle(self, message: Msg) -> None:
        keep_alive = asyncio.create_task(self._keep_alive(message), name="webhook-in-progress")
        try:
            await self.dispatcher.dispatch(message.data)
        except (SQLAlchemyError, OSError) as error:
            log.warning("webhook delivery postponed, database unavailable (%s)", error)
            await _settle(message.nak(delay=RETRY_LATER_S))
            return
        except Exception:  # a defect: keep the event, but do not spin on it
            log.exception("webhook delivery failed unexpectedly; retrying the event later")
            await _settle(message.nak(delay=RETRY_DEFECT_S))
            return
        finally:
            keep_alive.cancel()
        await _settle(message.ack())

    async def _keep_alive(self, message: Msg) -> None:
        """Tell JetStream the message is still being worked on (retries take a while)."""
        interval = max(self.settings.webhook_ack_wait_s / 3, 0.1)
        while True:
            await asyncio.sleep(interval)
            with contextlib.suppress(Exception):
                await message.in_progress()


async def _settle(acknowledgement: Awaitable[None]) -> None:
    """Ack or nak; if NATS is away right now, JetStream redelivers after ``ack_wait``."""
    try:
        await acknowledgement
    except Exception as error:
        log.warning("could not settle a webhook event with JetStream (%s)", error)
