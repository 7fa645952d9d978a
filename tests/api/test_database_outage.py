"""PostgreSQL goes away under a running server: every route answers 503 with Retry-After
and logs one line, then the same server recovers when PostgreSQL is back on its port.

The session's PostgreSQL stays up for the other tests: this module stops its own."""

from __future__ import annotations

import logging
import shutil
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from tests.factories import breadcrumb
from tests.processes import served

from cairn.api.app import create_app
from cairn.config import Settings
from cairn.db.roles import DEFAULT_APP_ROLE
from cairn.embedding import HashEmbedder
from cairn.runtime import EmbeddedNats, EmbeddedPostgres

UNAVAILABLE = {"error": "unavailable", "detail": "the database is unreachable; retry shortly"}
# Loggers of the request path: background jobs (relay, webhook delivery, embedding retries)
# log their own retries and are not what a failed request writes.
REQUEST_LOGGERS = ("cairn.api", "cairn.auth", "uvicorn", "fastapi", "starlette", "sqlalchemy")


@dataclass(frozen=True)
class Outage:
    postgres: EmbeddedPostgres
    url: str


@pytest.fixture(scope="module")
def own_services() -> Iterator[tuple[EmbeddedPostgres, EmbeddedNats]]:
    root = Path(tempfile.mkdtemp(prefix="cairn-outage-"))
    postgres = EmbeddedPostgres(root / "postgres", fast=True)
    nats = EmbeddedNats(root / "nats")
    try:
        postgres.start()
        nats.start()
        yield postgres, nats
    finally:
        nats.stop()
        postgres.stop()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
async def outage(
    own_services: tuple[EmbeddedPostgres, EmbeddedNats], settings: Settings
) -> AsyncIterator[Outage]:
    postgres, nats = own_services
    own = settings.model_copy(
        update={
            "admin_database_url": postgres.url,
            "database_url": postgres.url_for(DEFAULT_APP_ROLE),
            "nats_url": nats.url,
        }
    )
    app = create_app(own, embedder=HashEmbedder())
    async with app.router.lifespan_context(app), served(app) as url:
        yield Outage(postgres, url)


def _requests(record_id: str) -> list[tuple[str, str, object]]:
    agent = "outage-agent"
    return [
        ("GET", "/breadcrumbs", None),
        ("POST", "/breadcrumbs", breadcrumb()),
        ("GET", f"/breadcrumbs/{record_id}", None),
        ("GET", f"/breadcrumbs/{record_id}/full", None),
        ("PATCH", f"/breadcrumbs/{record_id}", {"title": "changed"}),
        ("GET", "/breadcrumbs/search?q=outage", None),
        ("GET", f"/breadcrumbs/{record_id}/history", None),
        ("GET", "/agents", None),
        ("GET", f"/agents/{agent}/webhooks", None),
        ("POST", f"/agents/{agent}/webhooks", {"url": "http://127.0.0.1:9/hook"}),
        ("GET", "/dlq", None),
        ("GET", "/secrets", None),
        ("GET", "/events/stream", None),
    ]


async def _send(http: httpx.AsyncClient, method: str, path: str, body: object) -> httpx.Response:
    if path == "/events/stream":  # a stream that opens would never end: only read the head
        async with http.stream(method, path) as response:
            if response.status_code != 200:
                await response.aread()
            return response
    return await http.request(method, path, json=body)


async def test_every_route_answers_503_and_logs_one_line_while_postgres_is_down(
    outage: Outage, caplog: pytest.LogCaptureFixture
) -> None:
    async with httpx.AsyncClient(base_url=outage.url, timeout=30) as http:
        record_id = (await http.post("/breadcrumbs", json=breadcrumb())).json()["id"]
        port = outage.postgres.port
        outage.postgres.stop()
        try:
            caplog.clear()
            with caplog.at_level(logging.INFO):
                for method, path, body in _requests(record_id):
                    response = await _send(http, method, path, body)
                    assert response.status_code == 503, (method, path, response.text)
                    assert response.json() == UNAVAILABLE, (method, path)
                    assert 2 <= int(response.headers["Retry-After"]) <= 5
                ready = await http.get("/ready")
            request_records = [
                r for r in caplog.records if r.name.startswith(REQUEST_LOGGERS) and r.levelno >= 30
            ]
            assert [r.levelname for r in request_records] == ["WARNING"] * len(_requests("x"))
            assert all(r.exc_info is None for r in request_records)
            assert ready.status_code == 503 and ready.json()["checks"]["database"] == "down"
        finally:
            outage.postgres.start()
        assert outage.postgres.port == port  # the same URL: the pool reconnects


async def test_the_same_server_recovers_when_postgres_is_back(outage: Outage) -> None:
    async with httpx.AsyncClient(base_url=outage.url, timeout=30) as http:
        record_id = (await http.post("/breadcrumbs", json=breadcrumb())).json()["id"]
        outage.postgres.stop()
        try:
            assert (await http.get(f"/breadcrumbs/{record_id}")).status_code == 503
        finally:
            outage.postgres.start()
        for method, path, body in _requests(record_id):
            response = await _send(http, method, path, body)
            assert response.status_code < 300, (method, path, response.text)
        assert (await http.get("/ready")).json()["checks"]["database"] == "ok"


async def test_503s_are_counted_by_reason(outage: Outage) -> None:
    async with httpx.AsyncClient(base_url=outage.url, timeout=30) as http:
        outage.postgres.stop()
        try:
            missing = f"/breadcrumbs/{uuid.uuid4()}"
            assert (await http.get(missing)).status_code == 503
        finally:
            outage.postgres.start()
        metrics = (await http.get("/metrics")).text
    assert 'cairn_http_unavailable_total{reason="database"}' in metrics
    route = 'route="/breadcrumbs/{breadcrumb_id}",status="503"'
    assert f'cairn_http_requests_total{{method="GET",{route}}}' in metrics
