"""The JetStream consumer runner against real NATS and PostgreSQL: what each outcome does to
a message, outages waited out without counting, dead letters recorded, the consumer
recreated after it is lost and after NATS restarts."""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx
from fastapi import FastAPI
from sqlalchemy import text
from tests.conftest import Services
from tests.waiting import eventually

from cairn.db.engine import database_probe
from cairn.events.consumer import ConsumerRunner
from cairn.events.consumer_metrics import HELD
from cairn.events.dead_letters import DeadEventStore
from cairn.events.messages import ConsumerSpec, Delivery
from cairn.events.outcomes import PoisonMessage
from cairn.events.payloads import STREAM_NAME

Handler = Callable[[Delivery], Awaitable[None]]


class Outage:
    """A dependency the test switches off and on: the handler and the probe both fail."""

    def __init__(self) -> None:
        self.down = False

    async def probe(self) -> None:
        if self.down:
            raise OSError("connection refused")


def _spec(durable: str, **overrides: Any) -> ConsumerSpec:
    values: dict[str, Any] = {
        "durable": durable,
        "concurrency": 2,
        "ack_wait_s": 30.0,
        "max_deliveries": 3,
        "outage_max_backoff_s": 0.2,
        "defect_delay_s": 0.05,
    } | overrides
    return ConsumerSpec(**values)


def _runner(
    app: FastAPI, handler: Handler, spec: ConsumerSpec, probe: Any = None
) -> ConsumerRunner:
    resources = app.state.resources
    sessions = resources.session_factory
    return ConsumerRunner(
        resources.nats,
        handler,
        spec,
        dead_letters=DeadEventStore(sessions),
        probe=probe or database_probe(sessions),
        events=resources.settings.events,
    )


@asynccontextmanager
async def running(
    app: FastAPI, runner: ConsumerRunner, *, keep: bool = False
) -> AsyncIterator[asyncio.Task[None]]:
    """The runner until the block ends; then its consumer is deleted unless ``keep``."""
    task = asyncio.create_task(runner.run())
    try:
        await eventually(lambda: _consumer_exists(app, runner.spec.durable))
        yield task
    finally:
        await runner.stop()
        await asyncio.wait_for(task, 10)
        if not keep:
            js = app.state.resources.nats.jetstream()
            with contextlib.suppress(Exception):
                await js.delete_consumer(STREAM_NAME, runner.spec.durable)


async def _consumer_exists(app: FastAPI, durable: str) -> bool:
    js = app.state.resources.nats.jetstream()
    try:
        await js.consumer_info(STREAM_NAME, durable)
    except Exception:
        return False
    return True


async def _publish(app: FastAPI, marker: str) -> int:
    """An event as the relay publishes it, for the default tenant; returns its sequence."""
    js = app.state.resources.nats.jetstream()
    event = {
        "type": "breadcrumb.created",
        "event_id": str(uuid.uuid4()),
        "breadcrumb_id": str(uuid.uuid4()),
        "owner_id": str(app.state.resources.default_tenant),
        "schema_name": "test.v1",
        "tags": [marker],
    }
    ack = await js.publish(f"bc.{event['breadcrumb_id']}.created", json.dumps(event).encode())
    return int(ack.seq)


async def _dead_letters(app: FastAPI, durable: str) -> list[dict[str, Any]]:
    query = text("SELECT * FROM event_dead_letters WHERE consumer = :c ORDER BY stream_sequence")
    async with app.state.resources.system_engine.connect() as connection:
        return [dict(row) for row in (await connection.execute(query, {"c": durable})).mappings()]


def _mine(marker: str) -> Callable[[Delivery], bool]:
    return lambda delivery: marker in delivery.event().get("tags", [])


async def test_a_handled_message_is_acknowledged_once(app: FastAPI, marker: str) -> None:
    seen: list[int] = []

    async def handle(delivery: Delivery) -> None:
        if _mine(marker)(delivery):
            seen.append(delivery.deliveries)

    runner = _runner(app, handle, _spec(f"ok-{uuid.uuid4().hex[:8]}"))
    async with running(app, runner):
        await _publish(app, marker)
        await eventually(lambda: seen)
        await asyncio.sleep(0.5)
    assert seen == [1]


async def test_a_poison_message_is_recorded_and_never_redelivered(
    app: FastAPI, client: httpx.AsyncClient, marker: str
) -> None:
    durable = f"poison-{uuid.uuid4().hex[:8]}"
    calls: list[int] = []

    async def handle(delivery: Delivery) -> None:
        if _mine(marker)(delivery):
            calls.append(delivery.deliveries)
            raise PoisonMessage("cannot be handled")

    async with running(app, _runner(app, handle, _spec(durable))):
        sequence = await _publish(app, marker)
        await eventually(lambda: _dead_letters(app, durable))
        await asyncio.sleep(0.5)
    assert calls == [1]
    [letter] = await _dead_letters(app, durable)
    assert letter["stream_sequence"] == sequence and letter["deliveries"] == 1
    assert "poison message: cannot be handled" in letter["reason"]
    listed = (await client.get("/worker/dead")).json()
    assert str(letter["id"]) in {entry["id"] for entry in listed}


async def test_a_failing_handler_is_redelivered_up_to_the_limit_then_dead_lettered(
    app: FastAPI, marker: str
) -> None:
    durable = f"defect-{uuid.uuid4().hex[:8]}"
    calls: list[int] = []

    async def handle(delivery: Delivery) -> None:
        if _mine(marker)(delivery):
            calls.append(delivery.deliveries)
            raise ValueError("a defect")

    async with running(app, _runner(app, handle, _spec(durable, max_deliveries=3))):
        await _publish(app, marker)
        await eventually(lambda: _dead_letters(app, durable))
        await asyncio.sleep(0.5)
    assert calls == [1, 2, 3]
    [letter] = await _dead_letters(app, durable)
    assert letter["deliveries"] == 3 and "ValueError: a defect" in letter["reason"]


async def test_an_outage_holds_the_message_without_counting_deliveries(
    app: FastAPI, marker: str
) -> None:
    durable = f"outage-{uuid.uuid4().hex[:8]}"
    outage, handled, attempts = Outage(), [], []

    async def handle(delivery: Delivery) -> None:
        if _mine(marker)(delivery):
            attempts.append(delivery.deliveries)
            if outage.down:
                raise OSError("connection refused")
            handled.append(delivery.deliveries)

    runner = _runner(app, handle, _spec(durable, max_deliveries=2), probe=outage.probe)
    async with running(app, runner):
        outage.down = True
        await _publish(app, marker)
        await eventually(lambda: len(attempts) >= 1)
        await asyncio.sleep(2.0)  # ten probes at the 0.2 s cap: far past two deliveries' worth
        assert HELD.labels(durable)._value.get() == 1
        assert not runner.healthy.is_set()  # fetching is paused meanwhile
        outage.down = False
        await eventually(lambda: handled)
        await asyncio.sleep(0.5)
    assert handled == [1] and set(attempts) == {1}  # never redelivered
    assert await _dead_letters(app, durable) == []
    assert HELD.labels(durable)._value.get() == 0


async def test_an_error_that_looks_like_an_outage_while_the_probe_succeeds_is_a_defect(
    app: FastAPI, marker: str
) -> None:
    durable = f"misread-{uuid.uuid4().hex[:8]}"
    calls: list[int] = []

    async def handle(delivery: Delivery) -> None:
        if _mine(marker)(delivery):
            calls.append(delivery.deliveries)
            raise OSError("a file the handler wanted is missing")

    async with running(app, _runner(app, handle, _spec(durable, max_deliveries=2))):
        await _publish(app, marker)
        await eventually(lambda: _dead_letters(app, durable))
    assert calls == [1, 2]


async def test_a_message_whose_handlers_kept_dying_is_dead_lettered_unhandled(
    app: FastAPI, marker: str
) -> None:
    durable = f"crash-{uuid.uuid4().hex[:8]}"
    calls: list[str] = []
    hang = asyncio.Event()

    async def dies(delivery: Delivery) -> None:
        if _mine(marker)(delivery):
            calls.append("first")
            await hang.wait()  # its process is about to die

    async def survives(delivery: Delivery) -> None:
        if _mine(marker)(delivery):
            calls.append("second")

    first = _runner(app, dies, _spec(durable, ack_wait_s=1.0, max_deliveries=1))
    task = asyncio.create_task(first.run())
    await eventually(lambda: _consumer_exists(app, durable))
    await _publish(app, marker)
    await eventually(lambda: calls)
    task.cancel()  # killed: neither ack nor nak
    await asyncio.gather(task, return_exceptions=True)
    second = _runner(app, survives, _spec(durable, ack_wait_s=1.0, max_deliveries=1))
    async with running(app, second):
        await eventually(lambda: _dead_letters(app, durable))
    assert calls == ["first"]
    [letter] = await _dead_letters(app, durable)
    assert letter["deliveries"] == 2 and "without being settled" in letter["reason"]


async def test_a_lost_consumer_is_recreated_where_this_process_was(
    app: FastAPI, marker: str
) -> None:
    durable = f"lost-{uuid.uuid4().hex[:8]}"
    seen: list[int] = []

    async def handle(delivery: Delivery) -> None:
        if _mine(marker)(delivery):
            seen.append(delivery.stream_sequence)

    js = app.state.resources.nats.jetstream()
    async with running(app, _runner(app, handle, _spec(durable))):
        first = await _publish(app, marker)
        await eventually(lambda: seen == [first])
        await js.delete_consumer(STREAM_NAME, durable)
        second = await _publish(app, marker)  # published while no consumer exists
        await eventually(lambda: seen == [first, second], timeout=30)


async def test_the_runner_resumes_after_nats_restarts(
    app: FastAPI, services: Services, marker: str
) -> None:
    durable = f"restart-{uuid.uuid4().hex[:8]}"
    seen: list[int] = []

    async def handle(delivery: Delivery) -> None:
        if _mine(marker)(delivery):
            seen.append(delivery.stream_sequence)

    holder = app.state.resources.nats
    async with running(app, _runner(app, handle, _spec(durable))):
        first = await _publish(app, marker)
        await eventually(lambda: seen == [first])
        services.nats.stop()
        try:
            await eventually(lambda: not holder.connected)
        finally:
            services.nats.start()
        await eventually(lambda: holder.connected, timeout=30)
        second = await _publish(app, marker)
        await eventually(lambda: seen == [first, second], timeout=30)


async def test_changed_settings_update_an_existing_consumer(app: FastAPI) -> None:
    durable = f"limits-{uuid.uuid4().hex[:8]}"

    async def handle(delivery: Delivery) -> None:
        return None

    js = app.state.resources.nats.jetstream()
    async with running(app, _runner(app, handle, _spec(durable, ack_wait_s=30.0)), keep=True):
        pass
    async with running(app, _runner(app, handle, _spec(durable, ack_wait_s=7.0))):
        await eventually(lambda: _config_is(js, durable, ack_wait=7.0, max_deliver=-1), timeout=10)


async def _config_is(js: Any, durable: str, **wanted: Any) -> bool:
    config = (await js.consumer_info(STREAM_NAME, durable)).config
    return all(getattr(config, key) == value for key, value in wanted.items())
