"""Request dependencies: the transaction, the caller, and the feature services."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import Depends, Query, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.ext.asyncio import AsyncSession

from cairn.api.resources import Resources
from cairn.breadcrumbs.chunks import ChunkWindow
from cairn.breadcrumbs.queries import BreadcrumbReader
from cairn.breadcrumbs.service import BreadcrumbWriter
from cairn.db.engine import tenant_session
from cairn.errors import Forbidden
from cairn.principal import Principal, Role

# Every dependency here is ``async def``, though none awaits: FastAPI runs a plain ``def``
# dependency in its thread pool: a thread hop (and two GIL hand-overs) per dependency per
# request, three for a write.


def get_resources(request: Request) -> Resources:
    resources: Resources = request.app.state.resources
    return resources


async def _resources(request: Request) -> Resources:
    return get_resources(request)


ResourcesDep = Annotated[Resources, Depends(_resources)]


_bearer = HTTPBearer(
    auto_error=False,
    description="A token from POST /auth/token or `cairn token` (CAIRN_AUTH=jwt)",
)
BearerDep = Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]


async def _authenticated(resources: Resources, credential: str | None) -> Principal:
    principal = resources.auth.authenticate(credential)
    await resources.auth.ensure_tenant(resources.engine, principal.owner_id)
    return principal


async def get_principal(resources: ResourcesDep, bearer: BearerDep) -> Principal:
    """The caller: from ``Authorization: Bearer`` (CAIRN_AUTH=jwt), or the default tenant
    with every role (CAIRN_AUTH=disabled, loopback only). 401 without a valid token, 429
    over the caller's request rate."""
    return await _authenticated(resources, bearer.credentials if bearer else None)


async def get_stream_principal(
    resources: ResourcesDep,
    bearer: BearerDep,
    access_token: Annotated[
        str | None,
        Query(description="the token, for EventSource clients that cannot send headers"),
    ] = None,
) -> Principal:
    """As ``get_principal``, also accepting ``?access_token=`` (SSE only: query strings end
    up in logs, so no other route takes a token there)."""
    credential = bearer.credentials if bearer else access_token
    return await _authenticated(resources, credential)


PrincipalDep = Annotated[Principal, Depends(get_principal)]
StreamPrincipalDep = Annotated[Principal, Depends(get_stream_principal)]


async def get_session(
    resources: ResourcesDep, principal: PrincipalDep
) -> AsyncIterator[AsyncSession]:
    """The request's one transaction: committed when the endpoint returns, before the
    response is sent (scope="function"), rolled back on any error.

    Scoped to the caller's tenant: right after BEGIN it runs
    ``set_config('cairn.tenant', <owner_id>, true)`` (SET LOCAL), and row-level security
    then hides every other tenant's rows, even from a query that forgot its ``owner_id``."""
    scoped = tenant_session(resources.session_factory, principal.owner_id)
    async with scoped as session, session.begin():
        yield session


SessionDep = Annotated[AsyncSession, Depends(get_session, scope="function")]


def require_role(role: Role, *, stream: bool = False) -> Any:
    """A route dependency: the caller must hold ``role`` (curators hold every role, emitters
    also read). ``stream`` accepts the token as ``?access_token=`` too."""

    async def check(principal: PrincipalDep) -> Principal:
        return _holding(principal, role)

    async def check_stream(principal: StreamPrincipalDep) -> Principal:
        return _holding(principal, role)

    gate = check_stream if stream else check
    gate.required_role = role  # type: ignore[attr-defined]  # read by the route-gate tests
    return Depends(gate)


def _holding(principal: Principal, role: Role) -> Principal:
    if not principal.has(role):
        raise Forbidden(f"this operation needs the {role.value} role")
    return principal


async def get_writer(
    session: SessionDep, resources: ResourcesDep, principal: PrincipalDep
) -> BreadcrumbWriter:
    settings = resources.settings
    return BreadcrumbWriter(
        session, resources.embedder, settings.limits, principal, resources.transforms,
        chunk_window=ChunkWindow.of(settings.embedding),
    )  # fmt: skip


async def get_reader(
    session: SessionDep, resources: ResourcesDep, principal: PrincipalDep
) -> BreadcrumbReader:
    return BreadcrumbReader(
        session, resources.embedder, resources.settings.limits, principal, resources.transforms
    )


WriterDep = Annotated[BreadcrumbWriter, Depends(get_writer)]
ReaderDep = Annotated[BreadcrumbReader, Depends(get_reader)]
