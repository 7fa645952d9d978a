"""A second app on the session's services with CAIRN_AUTH=jwt (HS256, issuer and audience
checked, low limits), and helpers that mint tokens for it."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import jwt
import pytest
from fastapi import FastAPI
from pydantic import SecretStr
from tests.processes import served

from cairn.api.app import create_app
from cairn.config import JwtSettings, Limits, Settings
from cairn.principal import Role

SECRET = "test-secret-0123456789-0123456789-0123456789"
ADMIN_TOKEN = "test-admin-credential-0123456789"
ISSUER = "cairn-test"
AUDIENCE = "cairn"
RATE_PER_S = 20.0
RATE_BURST = 40
MAX_SSE = 2
DEFAULT_TENANT = uuid.UUID(Settings().default_tenant_id)

Mint = Callable[..., str]


@pytest.fixture(scope="session")
def jwt_settings(settings: Settings) -> Settings:
    return settings.model_copy(
        update={
            "auth": "jwt",
            "admin_token": SecretStr(ADMIN_TOKEN),
            "jwt": JwtSettings(secret=SECRET, issuer=ISSUER, audience=AUDIENCE, leeway_s=5),
            "limits": Limits(
                rate_per_s=RATE_PER_S, rate_burst=RATE_BURST, max_sse_per_caller=MAX_SSE
            ),
        }
    )


@pytest.fixture(scope="session")
async def jwt_app(app: FastAPI, jwt_settings: Settings) -> AsyncIterator[FastAPI]:
    application = create_app(jwt_settings, embedder=app.state.resources.embedder)
    async with application.router.lifespan_context(application):
        await asyncio.wait_for(application.state.resources.nats.ready.wait(), 10)
        yield application


@pytest.fixture
async def jwt_client(jwt_app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=jwt_app)
    async with httpx.AsyncClient(transport=transport, base_url="http://cairn.test") as http:
        yield http


@pytest.fixture(scope="session")
async def jwt_live_url(jwt_app: FastAPI) -> AsyncIterator[str]:
    """The jwt app over real HTTP (SSE), sharing its lifespan and resources."""
    async with served(jwt_app) as url:
        yield url


def claims(
    *,
    owner_id: uuid.UUID = DEFAULT_TENANT,
    sub: str | None = None,
    roles: list[str] | None = None,
    ttl_s: int = 600,
    **overrides: Any,
) -> dict[str, Any]:
    """Valid claims for the jwt app; ``None`` overrides drop a claim."""
    now = int(time.time())
    body: dict[str, Any] = {
        "sub": sub or f"agent-{uuid.uuid4().hex[:10]}",
        "owner_id": str(owner_id),
        "roles": roles if roles is not None else [Role.CURATOR.value],
        "iat": now,
        "exp": now + ttl_s,
        "iss": ISSUER,
        "aud": AUDIENCE,
    }
    body.update(overrides)
    return {key: value for key, value in body.items() if value is not None}


def sign(payload: dict[str, Any], key: str = SECRET, algorithm: str = "HS256") -> str:
    return jwt.encode(payload, key, algorithm=algorithm)


@pytest.fixture
def mint() -> Mint:
    """``mint(roles=["subscriber"], owner_id=..., sub=...)``: a valid token (its own agent id
    unless ``sub`` is given, so each test has its own rate bucket)."""

    def make(**kwargs: Any) -> str:
        return sign(claims(**kwargs))

    return make


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}
