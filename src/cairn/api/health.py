"""Liveness, readiness and Prometheus metrics."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from fastapi import APIRouter, Header, Response
from fastapi.responses import JSONResponse, PlainTextResponse
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from sqlalchemy import text

from cairn.api.deps import ResourcesDep

router = APIRouter(tags=["operations"])


@router.get(
    "/health",
    response_model=dict[str, str],
    responses={200: {"content": {"text/plain": {"example": "ok"}}}},
)
async def health(accept: Annotated[str | None, Header()] = None) -> Response:
    """``{"status": "ok"}``; RCRT's plain ``ok`` to a client that prefers text/plain."""
    if prefers_text(accept):
        return PlainTextResponse("ok")
    return JSONResponse({"status": "ok"})


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


def prefers_text(accept: str | None) -> bool:
    """Whether ``Accept`` ranks text/plain above application/json (``*/*`` and no header:
    JSON). Two media types with q-values only, so written here rather than pulling in a web
    framework's header parser."""
    if not accept:
        return False
    quality = {"text/plain": 0.0, "application/json": 0.0}
    for item in accept.split(","):
        media, *params = (part.strip() for part in item.split(";"))
        q = next((_q(p[2:]) for p in params if p.replace(" ", "").startswith("q=")), 1.0)
        for name in quality:
            if media.lower() in {name, name.split("/")[0] + "/*", "*/*"}:
                exact = media.lower() == name
                quality[name] = max(quality[name], q + (0.001 if exact else 0.0))
    return quality["text/plain"] > quality["application/json"]


def _q(value: str) -> float:
    try:
        return min(max(float(value.strip().lstrip("=")), 0.0), 1.0)
    except ValueError:
        return 0.0


async def _database_ok(resources: ResourcesDep) -> str:
    try:
        async with asyncio.timeout(2), resources.engine.connect() as connection:
            await connection.execute(text("SELECT 1"))
        return "ok"
    except Exception:
        return "down"
