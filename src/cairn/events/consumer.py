"""One runner for every durable JetStream pull consumer of the BREADCRUMBS stream: the
worker's builders and webhook delivery declare a :class:`ConsumerSpec` and a handler; how
messages are fetched, settled, kept alive, retried and given up on lives here alone.

- Each message is acknowledged only after its handler returned; a process that dies before
  that leaves it unacknowledged and JetStream redelivers it after ``ack_wait`` (handlers are
  idempotent). While a handler runs, the message is marked in progress every third of
  ``ack_wait``, so a long one is not handed to a second process.
- What a handler's error means is in :mod:`cairn.events.outcomes`. An outage (confirmed by
  the spec's probe) holds the message in place and pauses fetching until the dependency is
  back: it never counts against the delivery limit. JetStream's own limit is off
  (``max_deliver=-1``) so that JetStream never drops a message silently; the runner counts
  deliveries itself and records what it gives up on as a dead letter.
- Losing NATS, or the durable consumer (deleted by hand, or with its stream), ends the pull
  loop, not the runner: it backs off, then binds again, creating the consumer where this
  process left off if it is gone.
- ``stop()`` stops fetching and waits for the messages in flight (graceful drain); a message
  held by an outage is handed back at once (``nak``) for another process to take.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import dataclass

from nats.aio.msg import Msg
from nats.js import JetStreamContext
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy
from nats.js.errors import NotFoundError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from cairn.config import EventSettings
from cairn.db.engine import database_probe
from cairn.events.consumer_metrics import DEAD_LETTERS, HELD, MESSAGES, OUTAGES
from cairn.events.dead_letters import DeadEventStore
from cairn.events.messages import ConsumerSpec, DeadLetterSink, Delivery, Handler, Probe
from cairn.events.nats_client import NatsHolder
from cairn.events.outcomes import PoisonMessage, RetryLater, is_outage
from cairn.events.payloads import STREAM_NAME, STREAM_SUBJECTS
from cairn.events.stream_setup import ensure_stream
from cairn.tasks import stop_tasks, wait_set

log = logging.getLogger(__name__)

FETCH_TIMEOUT_S = 1.0
CONSUMER_CHECK_S = 10.0  # while idle, check this often that the consumer still exists
MIN_BACKOFF_S, MAX_BACKOFF_S = 0.5, 5.0  # between attempts to bind after losing NATS
PROBE_TIMEOUT_S = 5.0
MAX_DEFECT_DELAY_S = 60.0


@dataclass(frozen=True)
class _Settle:
    action: str  # ack | nak | term
    delay_s: float | None = None


_ACK, _TERM, _NAK_NOW = _Settle("ack"), _Settle("term"), _Settle("nak")


class ConsumerRunner:
    def __init__(
        self,
        holder: NatsHolder,
        handler: Handler,
        spec: ConsumerSpec,
        *,
        dead_letters: DeadLetterSink,
        probe: Probe,
        events: EventSettings,
    ) -> None:
        self.holder = holder
        self.handler = handler
        self.spec = spec
        self.dead_letters = dead_letters
        self.probe = probe
        self.events = events
        self.in_flight: set[asyncio.Task[None]] = set()
        self.stopping = asyncio.Event()
        self.healthy = asyncio.Event()  # cleared while an outage holds messages
        self.healthy.set()
        self.outage_since = 0.0
        self.last_sequence: int | None = None  # the newest stream sequence fetched here

    async def run(self) -> None:
        """Until :meth:`stop`: bind, pull and handle; after any failure back off and bind
        again. Drains what is in flight before returning."""
        delay = MIN_BACKOFF_S
        try:
            while not self.stopping.is_set():
                js = self.holder.jetstream()
                if js is not None:
                    try:
                        subscription = await self._bind(js)
                        delay = MIN_BACKOFF_S  # NATS answers again
                        log.info("consuming %s as %s", STREAM_NAME, self.spec.durable)
                        await self._pull(js, subscription)
                    except Exception as error:  # NATS away, consumer gone, ...: start over
                        if not self.stopping.is_set():
                            log.warning("%s interrupted (%s); resuming", self.spec.durable, error)
                else:  # not connected yet: bind the moment the process's NATS is ready
                    await wait_set(self.holder.ready, delay)
                    if self.holder.jetstream() is not None:
                        continue
                await self._sleep_unless_stopping(delay)
                delay = min(delay * 2, MAX_BACKOFF_S)
            await self._drain()
        finally:
            await stop_tasks(self.in_flight)

    async def stop(self) -> None:
        self.stopping.set()

    # --- binding and pulling ----------------------------------------------------------------

    async def _bind(self, js: JetStreamContext) -> JetStreamContext.PullSubscription:
        """Bind to the durable consumer: created if missing, its editable limits brought up to
        date if the settings changed since it was made."""
        try:
            stream = await js.stream_info(STREAM_NAME)
        except NotFoundError:  # a fresh NATS without the stream yet
            await ensure_stream(js, self.events)
            stream = await js.stream_info(STREAM_NAME)
        try:
            info = await js.consumer_info(STREAM_NAME, self.spec.durable)
        except NotFoundError:
            await js.add_consumer(STREAM_NAME, config=self._config(int(stream.state.last_seq)))
        else:
            await self._update_limits(js, info.config)
        return await js.pull_subscribe_bind(durable=self.spec.durable, stream=STREAM_NAME)

    def _config(self, stream_last_sequence: int) -> ConsumerConfig:
        """A new consumer starts with what happens from now on, not the stream's history; one
        recreated under this process (lost with its stream, deleted by hand) continues where
        this process was."""
        config = ConsumerConfig(
            durable_name=self.spec.durable,
            filter_subject=STREAM_SUBJECTS,
            ack_policy=AckPolicy.EXPLICIT,
            ack_wait=self.spec.ack_wait_s,
            max_deliver=-1,  # the runner counts deliveries and records what it gives up on
            max_ack_pending=self.spec.max_ack_pending,
            deliver_policy=DeliverPolicy.NEW,
        )
        if self.last_sequence is not None:
            if stream_last_sequence < self.last_sequence:  # a new stream: all of it is new
                config.deliver_policy = DeliverPolicy.ALL
            else:
                config.deliver_policy = DeliverPolicy.BY_START_SEQUENCE
                config.opt_start_seq = self.last_sequence + 1
        return config

    async def _update_limits(self, js: JetStreamContext, current: ConsumerConfig) -> None:
        wanted = {"ack_wait": self.spec.ack_wait_s, "max_deliver": -1}
        if self.spec.max_ack_pending is not None:
            wanted["max_ack_pending"] = self.spec.max_ack_pending
        stale = {k: v for k, v in wanted.items() if getattr(current, k) != v}
        if not stale:
            return
        try:
            await js.add_consumer(STREAM_NAME, config=current.evolve(**stale))
            log.info("%s: consumer limits updated: %s", self.spec.durable, stale)
        except Exception as error:  # an older server: keep the consumer as it is
            log.warning("%s: could not update consumer limits (%s)", self.spec.durable, error)

    async def _pull(
        self, js: JetStreamContext, subscription: JetStreamContext.PullSubscription
    ) -> None:
        checked = time.monotonic()
        try:
            while not self.stopping.is_set():
                if not await self._ready_to_fetch():
                    continue
                try:
                    free = self.spec.concurrency - len(self.in_flight)
                    messages = await subscription.fetch(free, timeout=FETCH_TIMEOUT_S)
                except TimeoutError:
                    if time.monotonic() - checked > CONSUMER_CHECK_S:
                        await js.consumer_info(STREAM_NAME, self.spec.durable)  # raises if gone
                        checked = time.monotonic()
                    continue
                for message in messages:
                    self._start(message)
        finally:
            with contextlib.suppress(Exception):
                await subscription.unsubscribe()

    async def _ready_to_fetch(self) -> bool:
        """Wait (at most a fetch's time) for a free slot and no outage."""
        if len(self.in_flight) >= self.spec.concurrency:
            await asyncio.wait(
                self.in_flight, timeout=FETCH_TIMEOUT_S, return_when=asyncio.FIRST_COMPLETED
            )
            return False
        if not self.healthy.is_set():
            await wait_set(self.healthy, FETCH_TIMEOUT_S)
            return False
        return True

    def _start(self, message: Msg) -> None:
        metadata = message.metadata
        delivery = Delivery(
            subject=message.subject,
            data=message.data,
            stream_sequence=int(metadata.sequence.stream),
            deliveries=int(metadata.num_delivered),
            headers=message.headers or {},
        )
        self.last_sequence = max(delivery.stream_sequence, self.last_sequence or 0)
        task = asyncio.create_task(self._handle(message, delivery), name=self.spec.durable)
        self.in_flight.add(task)
        task.add_done_callback(self.in_flight.discard)

    async def _drain(self) -> None:
        if self.in_flight:
            log.info("%s: draining %d messages in flight", self.spec.durable, len(self.in_flight))
            await asyncio.gather(*self.in_flight, return_exceptions=True)

    # --- one message ------------------------------------------------------------------------

    async def _handle(self, message: Msg, delivery: Delivery) -> None:
        keep_alive = asyncio.create_task(self._keep_alive(message))
        try:
            settle = await self._process(delivery)
        finally:
            keep_alive.cancel()
        try:
            if settle.action == "ack":
                await message.ack()
            elif settle.action == "term":
                await message.term()
            else:
                await message.nak(delay=settle.delay_s)
        except Exception as error:  # NATS away: JetStream redelivers after ack_wait
            log.warning("%s: could not settle a message (%s)", self.spec.durable, error)

    async def _process(self, delivery: Delivery) -> _Settle:
        limit = self.spec.max_deliveries
        if delivery.deliveries > limit:  # its handlers' processes died every time
            return await self._give_up(
                delivery, f"delivered {delivery.deliveries} times without being settled"
            )
        backoff = _Backoff(self.spec.outage_max_backoff_s)
        while True:
            try:
                await self.handler(delivery)
            except PoisonMessage as error:
                return await self._give_up(delivery, f"poison message: {error}")
            except RetryLater as error:
                if delivery.deliveries >= limit:
                    return await self._give_up(delivery, f"still failing: {error}")
                MESSAGES.labels(self.spec.durable, "retry").inc()
                return _Settle("nak", error.delay_s)
            except Exception as error:
                if is_outage(error) and await self._outage_confirmed():
                    if await self._wait_out(error, backoff):
                        continue  # the dependency is back: handle it again
                    return _NAK_NOW  # stopping: another process takes it
                return await self._defect(delivery, error)
            else:
                self._healthy()
                MESSAGES.labels(self.spec.durable, "ok").inc()
                return _ACK

    async def _defect(self, delivery: Delivery, error: Exception) -> _Settle:
        MESSAGES.labels(self.spec.durable, "error").inc()
        log.error(
            "%s: handler failed on %s (delivery %d of %d)",
            self.spec.durable, delivery.subject, delivery.deliveries, self.spec.max_deliveries,
            exc_info=error,
        )  # fmt: skip
        if delivery.deliveries >= self.spec.max_deliveries:
            return await self._give_up(delivery, f"{type(error).__name__}: {error}")
        delay = min(self.spec.defect_delay_s * 2 ** (delivery.deliveries - 1), MAX_DEFECT_DELAY_S)
        return _Settle("nak", delay)

    async def _give_up(self, delivery: Delivery, reason: str) -> _Settle:
        """Record the event as a dead letter, then terminate it. If it cannot be recorded it
        is not terminated: it comes back and recording is tried again."""
        backoff = _Backoff(self.spec.outage_max_backoff_s)
        while True:
            try:
                await self.dead_letters.record(self.spec.durable, delivery, reason[:2000])
                break
            except Exception as error:
                if is_outage(error) and await self._outage_confirmed():
                    if await self._wait_out(error, backoff):
                        continue
                    return _NAK_NOW
                log.exception("%s: could not record a dead letter", self.spec.durable)
                return _Settle("nak", MAX_DEFECT_DELAY_S)
        MESSAGES.labels(self.spec.durable, "dead_lettered").inc()
        DEAD_LETTERS.labels(self.spec.durable).inc()
        log.error(
            "%s: gave up on %s (stream sequence %d, %d deliveries): %s; recorded as a dead letter",
            self.spec.durable, delivery.subject, delivery.stream_sequence, delivery.deliveries,
            reason,
        )  # fmt: skip
        return _TERM

    # --- outages ----------------------------------------------------------------------------

    async def _outage_confirmed(self) -> bool:
        try:
            async with asyncio.timeout(PROBE_TIMEOUT_S):
                await self.probe()
        except Exception:
            return True
        return False

    async def _wait_out(self, error: BaseException, backoff: _Backoff) -> bool:
        """Hold the message until the probe succeeds; False if the runner stops first."""
        if self.healthy.is_set():
            self.healthy.clear()
            self.outage_since = time.monotonic()
            OUTAGES.labels(self.spec.durable).inc()
            log.warning(
                "%s: a dependency is unreachable (%s); holding events until it is back",
                self.spec.durable, _summary(error),
            )  # fmt: skip
        held = HELD.labels(self.spec.durable)
        held.inc()
        try:
            while True:
                if await self._sleep_unless_stopping(backoff.next()):
                    return False
                if not await self._outage_confirmed():
                    return True
        finally:
            held.dec()

    def _healthy(self) -> None:
        if not self.healthy.is_set():
            self.healthy.set()
            log.warning(
                "%s: dependency back after %.1f s; resuming",
                self.spec.durable, time.monotonic() - self.outage_since,
            )  # fmt: skip

    async def _keep_alive(self, message: Msg) -> None:
        interval = max(self.spec.ack_wait_s / 3, 0.1)
        while True:
            await asyncio.sleep(interval)
            with contextlib.suppress(Exception):
                await message.in_progress()

    async def _sleep_unless_stopping(self, seconds: float) -> bool:
        """Sleep; True if the runner was told to stop meanwhile (returns at once then)."""
        return await wait_set(self.stopping, seconds)


def database_runner(
    holder: NatsHolder,
    handler: Handler,
    spec: ConsumerSpec,
    sessions: async_sessionmaker[AsyncSession],
    events: EventSettings,
) -> ConsumerRunner:
    """A runner whose handler needs PostgreSQL: outages are probed there, and what it gives
    up on is kept there (``event_dead_letters``)."""
    dead_letters, probe = DeadEventStore(sessions), database_probe(sessions)
    return ConsumerRunner(
        holder, handler, spec, dead_letters=dead_letters, probe=probe, events=events
    )


class _Backoff:
    def __init__(self, cap_s: float, first_s: float = 0.5) -> None:
        self.next_s = min(first_s, cap_s)
        self.cap_s = cap_s

    def next(self) -> float:
        delay = self.next_s
        self.next_s = min(self.next_s * 2, self.cap_s)
        return delay


def _summary(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}".splitlines()[0][:200]
