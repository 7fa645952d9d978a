"""Health, readiness, metrics and the OpenAPI docs."""

from __future__ import annotations

import asyncio

import httpx
from tests.conftest import Services
from tests.factories import breadcrumb


async def test_health(client: httpx.AsyncClient) -> None:
    for accept in (None, "*/*", "application/json", "application/json, text/plain, */*"):
        headers = {"Accept": accept} if accept else {}
        response = await client.get("/health", headers=headers)
        assert response.status_code == 200 and response.json() == {"status": "ok"}, accept


async def test_health_answers_rcrt_plain_ok_to_text_clients(client: httpx.AsyncClient) -> None:
    for accept in ("text/plain", "text/plain, */*;q=0.8", "text/*"):
        response = await client.get("/health", headers={"Accept": accept})
        assert response.status_code == 200, accept
        assert response.text == "ok" and response.headers["content-type"].startswith("text/plain")


async def test_ready_checks_database_and_nats(client: httpx.AsyncClient) -> None:
    for _ in range(50):  # the NATS connection is made in the background at start
        response = await client.get("/ready")
        if response.status_code == 200:
            break
        await asyncio.sleep(0.1)
    assert response.json() == {"status": "ready", "checks": {"database": "ok", "nats": "ok"}}


async def test_metrics_count_requests_by_route(client: httpx.AsyncClient) -> None:
    await client.post("/breadcrumbs", json=breadcrumb())
    text = (await client.get("/metrics")).text
    assert 'cairn_http_requests_total{method="POST",route="/breadcrumbs",status="201"}' in text
    assert "cairn_http_request_duration_seconds_bucket" in text


async def test_docs_and_openapi(client: httpx.AsyncClient) -> None:
    assert (await client.get("/docs")).status_code == 200
    paths = (await client.get("/openapi.json")).json()["paths"]
    assert "/breadcrumbs/{breadcrumb_id}/context/merge" in paths


async def test_ready_reports_nats_down_while_writes_go_on(
    client: httpx.AsyncClient, services: Services
) -> None:
    services.nats.stop()
    try:
        for _ in range(50):
            response = await client.get("/ready")
            if response.status_code == 503:
                break
            await asyncio.sleep(0.1)
        assert response.status_code == 503
        assert response.json()["checks"]["nats"] == "down"
        assert (await client.post("/breadcrumbs", json=breadcrumb())).status_code == 201
    finally:
        services.nats.start()
    for _ in range(100):
        if (await client.get("/ready")).status_code == 200:
            break
        await asyncio.sleep(0.1)
    assert (await client.get("/ready")).status_code == 200
