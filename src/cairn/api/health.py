"""Liveness, readiness and Prometheus metrics."""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, Response
from fastapi.responses import JSONResponse
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from sqlalchemy import text

from cairn.api.deps import ResourcesDep

router = APIRouter(tags=["operations"])


@router.get("/health")
async def health() -> dict[str, str]:
    return {"status": "ok"}


@router.get("/ready")
async def ready(resources: ResourcesDep) -> JSONResponse:
    checks: dict[str, Any] = {"database": await _database_ok(resources)}
    if resources.settings.nats_url:
        checks["nats"] = "ok" if resources.nats is not None and resources.nats.connected else "down"
    else:
        checks["nats"] = "not_configured"
    healthy = checks["database"] == "ok" and checks["nats"] != "down"
    body = {"status": "ready" if healthy else "unavailable", "checks": checks}
    return JSONResponse(body, status_code=200 if healthy else 503)


@router.get("/metrics")
async def metrics() -> Response:
    return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)


async def _database_ok(resources: ResourcesDep) -> str:
    try:
        async with asyncio.timeout(2), resources.engine.connect() as connection:
            await connection.execute(text("SELECT 1"))
        return "ok"
    except Exception:
        return "down"
