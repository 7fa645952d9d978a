"""Reads sent to asyncpg directly (``cairn.db.driver``) run on the session's connection,
inside its transaction: under its tenant's scope (row-level security decides what comes
back, as for any other query) and seeing what the transaction wrote itself."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest
from fastapi import FastAPI
from sqlalchemy import text

from cairn.db import driver as driver_module
from cairn.db.driver import DriverQuery
from cairn.db.engine import tenant_session
from cairn.db.tenants import ensure_tenant

_BY_IDS = DriverQuery(
    text("SELECT id, owner_id, title FROM breadcrumbs WHERE id = ANY(CAST(:ids AS uuid[]))")
)
_INSERT = text(
    "INSERT INTO breadcrumbs (id, owner_id, title, context, checksum, size_bytes)"
    " VALUES (:id, :owner, :title, '{}', 'x', 2)"
)


@pytest.fixture
async def two_tenants(app: FastAPI) -> AsyncIterator[dict[uuid.UUID, uuid.UUID]]:
    """Two tenants with one record each (tenant → its record), removed afterwards."""
    system = app.state.resources.system_engine
    records = {uuid.uuid4(): uuid.uuid4() for _ in range(2)}
    for owner in records:
        await ensure_tenant(system, owner, f"driver-{owner}")
    async with system.begin() as connection:
        for owner, record in records.items():
            await connection.execute(_INSERT, {"id": record, "owner": owner, "title": "kept"})
    yield records
    async with system.begin() as connection:
        owners = list(records)
        await connection.execute(
            text("DELETE FROM breadcrumbs WHERE owner_id = ANY(:o)"), {"o": owners}
        )
        await connection.execute(text("DELETE FROM tenants WHERE id = ANY(:o)"), {"o": owners})


async def test_a_tenant_reads_only_its_own_rows(
    app: FastAPI, two_tenants: dict[uuid.UUID, uuid.UUID]
) -> None:
    factory = app.state.resources.session_factory
    ids = list(two_tenants.values())
    for owner, record in two_tenants.items():
        async with tenant_session(factory, owner) as session, session.begin():
            rows = await _BY_IDS.fetch(session, {"ids": ids})
            assert [(row["id"], row["owner_id"]) for row in rows] == [(record, owner)]


async def test_it_sees_what_its_transaction_wrote_and_nothing_once_rolled_back(
    app: FastAPI, two_tenants: dict[uuid.UUID, uuid.UUID]
) -> None:
    factory = app.state.resources.session_factory
    owner = next(iter(two_tenants))
    fresh = uuid.uuid4()
    async with tenant_session(factory, owner) as session:
        async with session.begin() as transaction:
            await session.execute(_INSERT, {"id": fresh, "owner": owner, "title": "new"})
            rows = await _BY_IDS.fetch(session, {"ids": [fresh]})
            assert [row["title"] for row in rows] == ["new"]
            await transaction.rollback()
        async with session.begin():
            assert await _BY_IDS.fetch(session, {"ids": [fresh]}) == []


async def test_a_session_that_has_sent_nothing_yet_goes_through_sqlalchemy(
    app: FastAPI, two_tenants: dict[uuid.UUID, uuid.UUID]
) -> None:
    """Without a tenant nothing has begun the transaction on the connection: SQLAlchemy
    begins it, and the policy, with no tenant set, shows no row (it fails closed)."""
    factory = app.state.resources.session_factory
    async with factory() as session, session.begin():
        driver = (await (await session.connection()).get_raw_connection()).driver_connection
        assert driver is not None and not driver.is_in_transaction()
        assert await _BY_IDS.fetch(session, {"ids": list(two_tenants.values())}) == []
        assert driver.is_in_transaction()


_PID = DriverQuery(text("SELECT pg_backend_pid() AS pid"))


async def test_each_transaction_sends_on_the_connection_it_holds(
    app: FastAPI, two_tenants: dict[uuid.UUID, uuid.UUID]
) -> None:
    """The session's asyncpg connection is kept for one transaction only: after it, the
    pool is emptied, so the next transaction holds a new connection, and the queries of
    that transaction go to it, through the driver."""
    resources = app.state.resources
    owner, record = next(iter(two_tenants.items()))
    pids = []
    async with tenant_session(resources.session_factory, owner) as session:
        for _ in range(2):
            async with session.begin():
                rows = await _BY_IDS.fetch(session, {"ids": [record]})
                assert [row["id"] for row in rows] == [record]
                raw = await (await session.connection()).get_raw_connection()
                assert session.info[driver_module._HELD][1] is raw.driver_connection
                (row,) = await _PID.fetch(session, {})
                by_sqlalchemy = await session.execute(text("SELECT pg_backend_pid()"))
                assert row["pid"] == by_sqlalchemy.scalar_one()
                pids.append(row["pid"])
            await resources.engine.dispose()  # closes the idle connections
    assert pids[0] != pids[1]
