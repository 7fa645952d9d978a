"""The last stop of an error: a database lost at commit time or in the middle of a stream,
and a genuine query bug, in a small app served over real HTTP like the service's routes
(the request transaction is a ``scope="function"`` dependency, as in ``cairn.api.deps``)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Annotated

import asyncpg
import httpx
import pytest
from fastapi import Depends, FastAPI, Request
from fastapi.responses import StreamingResponse
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine
from tests.conftest import Services
from tests.processes import served

from cairn.api.errors import install_error_handlers
from cairn.api.middleware import RequestMetrics


async def _terminate(dsn: str, connection: AsyncConnection) -> None:
    pid = await connection.scalar(text("SELECT pg_backend_pid()"))
    admin = await asyncpg.connect(dsn)
    try:
        await admin.fetchval("SELECT pg_terminate_backend($1, 5000)", pid)
    finally:
        await admin.close()


async def _transaction(request: Request) -> AsyncIterator[AsyncConnection]:
    async with request.app.state.engine.begin() as connection:  # commits after the endpoint
        yield connection


Transaction = Annotated[AsyncConnection, Depends(_transaction, scope="function")]


def _boundary_app(engine: AsyncEngine, dsn: str) -> FastAPI:
    app = FastAPI()
    app.state.engine = engine
    install_error_handlers(app)
    app.add_middleware(RequestMetrics)

    @app.post("/lost-at-commit")
    async def lost_at_commit(connection: Transaction) -> dict[str, bool]:
        await connection.execute(text("CREATE TEMP TABLE written (x int)"))
        await _terminate(dsn, connection)
        return {"ok": True}

    @app.get("/lost-mid-stream")
    async def lost_mid_stream() -> StreamingResponse:
        async def frames() -> AsyncIterator[bytes]:
            async with engine.connect() as connection:
                yield b"data: first\n\n"
                await _terminate(dsn, connection)
                await connection.execute(text("SELECT 1"))
                yield b"data: never\n\n"

        return StreamingResponse(frames(), media_type="text/event-stream")

    @app.post("/deadlock")
    async def deadlock(connection: Transaction) -> None:
        # PostgreSQL's own deadlock error, as a losing transaction gets it.
        await connection.execute(
            text("DO $$ BEGIN RAISE EXCEPTION 'deadlock detected' USING ERRCODE = '40P01'; END $$")
        )

    @app.get("/query-bug")
    async def query_bug(connection: Transaction) -> None:
        await connection.execute(text("SELEC 1"))

    return app


@pytest.fixture(scope="module")
async def boundary_url(services: Services) -> AsyncIterator[str]:
    engine = create_async_engine(services.postgres.url, pool_pre_ping=True)
    async with served(_boundary_app(engine, services.postgres.dsn)) as url:
        yield url
    await engine.dispose()


def _traceback_records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.exc_info is not None]


async def test_a_database_lost_at_commit_answers_503_with_one_line(
    boundary_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    async with httpx.AsyncClient(base_url=boundary_url) as http:
        with caplog.at_level(logging.WARNING):
            response = await http.post("/lost-at-commit")
    assert response.status_code == 503 and response.json()["error"] == "unavailable"
    assert response.headers["Retry-After"] == "3"
    assert [r.name for r in caplog.records] == ["cairn.api.errors"]
    assert not _traceback_records(caplog)


async def test_a_database_lost_mid_stream_ends_the_stream_cleanly(
    boundary_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    async with httpx.AsyncClient(base_url=boundary_url) as http:
        with caplog.at_level(logging.WARNING):
            response = await http.get("/lost-mid-stream")  # raises if the connection broke
    assert response.status_code == 200 and response.text == "data: first\n\n"
    assert [r.levelname for r in caplog.records] == ["WARNING"]
    assert not _traceback_records(caplog)


async def test_a_query_bug_answers_500_with_one_traceback(
    boundary_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    async with httpx.AsyncClient(base_url=boundary_url) as http:
        with caplog.at_level(logging.WARNING):
            response = await http.get("/query-bug")
    assert response.status_code == 500 and response.json()["error"] == "internal_error"
    assert len(_traceback_records(caplog)) == 1
    assert [r.name for r in caplog.records] == ["cairn.api.errors"]


async def test_a_transaction_aborted_for_a_concurrent_one_answers_503_retry(
    boundary_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    async with httpx.AsyncClient(base_url=boundary_url) as http:
        with caplog.at_level(logging.WARNING):
            response = await http.post("/deadlock")
    assert response.status_code == 503 and response.headers["Retry-After"] == "1"
    assert "retry" in response.json()["detail"]
    assert not _traceback_records(caplog)
