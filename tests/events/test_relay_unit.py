"""The relay's own logic with the in-memory broker, on a database of its own (so the
session's running relay never sees these rows)."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator

import asyncpg
import pytest
from tests.conftest import Services

from cairn.config import EventSettings, Settings
from cairn.db.engine import create_engine
from cairn.db.migrate import upgrade
from cairn.events.broker import InMemoryBroker
from cairn.events.payloads import OWNER_HEADER, SCHEMA_HEADER, event_summary
from cairn.events.relay import OutboxRelay


@pytest.fixture
async def dsn(services: Services) -> AsyncIterator[str]:
    name = f"relay_{uuid.uuid4().hex[:10]}"
    admin = await asyncpg.connect(services.postgres.dsn)
    await admin.execute(f'CREATE DATABASE "{name}"')
    url = services.postgres.url.rsplit("/", 1)[0] + f"/{name}"
    engine = create_engine(url, Settings())
    await upgrade(engine)
    await engine.dispose()
    yield url.replace("postgresql+asyncpg://", "postgresql://")
    await admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
    await admin.close()


async def _add_events(connection: asyncpg.Connection, count: int) -> list[str]:
    ids = []
    for i in range(count):
        msg_id = str(uuid.uuid4())
        await connection.execute(
            "INSERT INTO outbox (owner_id, subject, msg_id, payload) VALUES ($1, $2, $3, $4)",
            uuid.uuid4(), f"bc.x{i}.created", msg_id, json.dumps({"n": i}),
        )  # fmt: skip
        ids.append(msg_id)
    return ids


async def test_publishes_pending_rows_in_order_and_marks_them(dsn: str) -> None:
    broker = InMemoryBroker()
    relay = OutboxRelay(dsn, lambda: broker, EventSettings(relay_batch=4))
    connection = await asyncpg.connect(dsn)
    ids = await _add_events(connection, 10)
    while await relay.relay_batch(connection):
        pass
    assert [msg_id for _, _, msg_id in broker.messages] == ids
    assert await connection.fetchval("SELECT count(*) FROM outbox WHERE published_at IS NULL") == 0
    await connection.close()


async def test_an_event_with_its_context_in_its_own_column_is_published_whole(dsn: str) -> None:
    """Revision 0026: the writes that copy a record's context keep it out of the payload;
    the relay publishes it as the payload's "context" key, for any context jsonb holds."""
    contexts = [
        {"text": 'quote " backslash \\ brace } é \u2028', "n": [1, 2.5, None, True]},
        {"explain": {"dropped": [{"record_id": "x", "tokens": 43}] * 3}, "": {}},
        [],
        "a string",
        0,
        None,
    ]
    payloads = [{"type": "breadcrumb.updated", "version": 2}, {}]
    rows = [(payload, context) for payload in payloads for context in contexts]
    broker = InMemoryBroker()
    relay = OutboxRelay(dsn, lambda: broker, EventSettings())
    connection = await asyncpg.connect(dsn)
    for n, (payload, context) in enumerate(rows):
        await connection.execute(
            "INSERT INTO outbox (owner_id, subject, msg_id, payload, context)"
            " VALUES ($1, $2, $3, $4, CAST($5 AS jsonb))",
            uuid.uuid4(), f"bc.x{n}.updated", uuid.uuid4(), json.dumps(payload),
            json.dumps(context),
        )  # fmt: skip
    await connection.execute(
        "INSERT INTO outbox (owner_id, subject, msg_id, payload) VALUES ($1, $2, $3, $4)",
        uuid.uuid4(), "bc.y.updated", uuid.uuid4(), json.dumps({"context": {"kept": 1}}),
    )  # fmt: skip
    while await relay.relay_batch(connection):
        pass
    published = [json.loads(body) for _, body, _ in broker.messages]
    expected = [payload | {"context": context} for payload, context in rows]
    assert published == [*expected, {"context": {"kept": 1}}]
    await connection.close()


async def test_every_event_names_its_tenant_and_schema_in_headers(dsn: str) -> None:
    broker = InMemoryBroker()
    relay = OutboxRelay(dsn, lambda: broker, EventSettings())
    connection = await asyncpg.connect(dsn)
    owner, with_schema, without = uuid.uuid4(), str(uuid.uuid4()), str(uuid.uuid4())
    for msg_id, payload in [
        (with_schema, {"schema_name": "agent.context.v1", "owner_id": str(owner)}),
        (without, {"schema_name": None, "owner_id": str(owner)}),
    ]:
        await connection.execute(
            "INSERT INTO outbox (owner_id, subject, msg_id, payload) VALUES ($1, 'bc.x.updated',"
            " $2, $3)",
            owner, msg_id, json.dumps(payload),
        )  # fmt: skip
    assert await relay.relay_batch(connection) == 2
    assert broker.headers == {
        with_schema: {OWNER_HEADER: str(owner), SCHEMA_HEADER: "agent.context.v1"},
        without: {OWNER_HEADER: str(owner)},
    }
    assert [event_summary(broker.headers[m]) for m in (with_schema, without)] == [
        {"owner_id": str(owner), "schema_name": "agent.context.v1"},
        {"owner_id": str(owner), "schema_name": None},
    ]
    await connection.close()


async def test_a_failing_broker_marks_nothing(dsn: str) -> None:
    broker = InMemoryBroker(fail=True)
    relay = OutboxRelay(dsn, lambda: broker, EventSettings())
    connection = await asyncpg.connect(dsn)
    await _add_events(connection, 3)
    assert await relay.relay_batch(connection) == 0
    assert await connection.fetchval("SELECT count(*) FROM outbox WHERE published_at IS NULL") == 3
    broker.fail = False
    assert await relay.relay_batch(connection) == 3
    await connection.close()


async def test_a_partly_published_batch_marks_its_prefix_and_sends_the_rest_later(
    dsn: str,
) -> None:
    broker = InMemoryBroker(fail_after=3)  # NATS went away after three acks
    relay = OutboxRelay(dsn, lambda: broker, EventSettings())
    connection = await asyncpg.connect(dsn)
    ids = await _add_events(connection, 8)
    assert await relay.relay_batch(connection) == 3
    assert await connection.fetchval("SELECT count(*) FROM outbox WHERE published_at IS NULL") == 5
    broker.fail_after = None
    assert await relay.relay_batch(connection) == 5
    assert [msg_id for _, _, msg_id in broker.messages] == ids  # in order, once
    await connection.close()


async def test_no_broker_yet_means_wait(dsn: str) -> None:
    relay = OutboxRelay(dsn, lambda: None, EventSettings())
    connection = await asyncpg.connect(dsn)
    await _add_events(connection, 2)
    assert await relay.relay_batch(connection) == 0
    await connection.close()


async def test_one_relay_leads_and_wakes_on_commit(dsn: str) -> None:
    first, second = InMemoryBroker(), InMemoryBroker()
    settings = EventSettings(relay_poll_s=30)  # only NOTIFY can wake them in time
    relays = [OutboxRelay(dsn, lambda b=b: b, settings) for b in (first, second)]
    tasks = [asyncio.create_task(relay.run()) for relay in relays]
    try:
        for _ in range(100):
            if any(relay.leading for relay in relays):
                break
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.2)
        assert sum(relay.leading for relay in relays) == 1
        connection = await asyncpg.connect(dsn)
        ids = await _add_events(connection, 5)
        for _ in range(100):
            if len(first.messages) + len(second.messages) == 5:
                break
            await asyncio.sleep(0.02)
        leader = first if relays[0].leading else second
        assert [msg_id for _, _, msg_id in leader.messages] == ids
        assert not (second if leader is first else first).messages
        await connection.close()
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def test_a_wake_up_as_the_relay_is_cancelled_still_stops_it(
    dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On Python 3.11 ``asyncio.wait_for`` loses a cancellation that comes in the loop
    iteration its event is set in: a relay waiting that way ran on after its process's
    shutdown cancelled it, and the shutdown, awaiting it, never ended."""
    relay = OutboxRelay(dsn, InMemoryBroker, EventSettings(relay_poll_s=30))
    task = asyncio.create_task(relay.run())
    try:
        for _ in range(200):
            if relay.leading:
                break
            await asyncio.sleep(0.02)
        assert relay.leading
        await asyncio.sleep(0.2)  # past its first batch: waiting for a NOTIFY
        relay._wake.set()
        task.cancel()
        done, _ = await asyncio.wait({task}, timeout=5)
        assert done and task.cancelled()
    finally:
        task.cancel()
