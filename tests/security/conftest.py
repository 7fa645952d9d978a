"""Callers of different tenants, agents and roles against the one test app.

``get_principal`` is replaced by one that reads the caller from test-only headers, so one
test can act as several callers at once (in-process and over real HTTP for SSE). Everything
after the principal (sessions scoped by row-level security, record checks, ACLs) is real.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager

import httpx
import pytest
from fastapi import FastAPI, Request

from cairn.api import deps
from cairn.db.tenants import ensure_tenant
from cairn.principal import ALL_ROLES, Principal, Role

ROLES = {
    "curator": frozenset({Role.CURATOR}),
    "emitter": frozenset({Role.EMITTER}),
    "subscriber": frozenset({Role.SUBSCRIBER}),
}


def _principal_from_headers(request: Request) -> Principal:
    owner = request.headers.get("x-test-owner")
    if owner is None:
        resources = request.app.state.resources
        return Principal(resources.default_tenant, resources.settings.default_actor)
    roles = request.headers.get("x-test-roles")
    return Principal(
        owner_id=uuid.UUID(owner),
        actor=request.headers.get("x-test-actor", "agent"),
        roles=ROLES[roles] if roles else ALL_ROLES,
    )


@pytest.fixture
def callers(app: FastAPI) -> Iterator[None]:
    app.dependency_overrides[deps.get_principal] = _principal_from_headers
    app.dependency_overrides[deps.get_stream_principal] = _principal_from_headers
    try:
        yield
    finally:
        app.dependency_overrides.pop(deps.get_principal, None)
        app.dependency_overrides.pop(deps.get_stream_principal, None)


def caller_headers(owner: uuid.UUID, actor: str, role: str) -> dict[str, str]:
    return {"x-test-owner": str(owner), "x-test-actor": actor, "x-test-roles": role}


Caller = Callable[..., AsyncIterator[httpx.AsyncClient]]


@pytest.fixture
def as_caller(app: FastAPI, callers: None) -> Caller:
    """``async with as_caller(owner, actor, role) as client``: requests as that caller."""

    @asynccontextmanager
    async def open_client(
        owner: uuid.UUID, actor: str = "agent", role: str = "curator"
    ) -> AsyncIterator[httpx.AsyncClient]:
        await ensure_tenant(app.state.resources.engine, owner, f"tenant-{owner}")
        transport = httpx.ASGITransport(app=app)
        headers = caller_headers(owner, actor, role)
        async with httpx.AsyncClient(
            transport=transport, base_url="http://cairn.test", headers=headers
        ) as client:
            yield client

    return open_client


@pytest.fixture
def tenant_a() -> uuid.UUID:
    return uuid.uuid4()


@pytest.fixture
def tenant_b() -> uuid.UUID:
    return uuid.uuid4()
