"""Request dependencies: the transaction, the caller, and the feature services."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import Depends, Request
from sqlalchemy.ext.asyncio import AsyncSession

from cairn.api.resources import Resources
from cairn.breadcrumbs.queries import BreadcrumbReader
from cairn.breadcrumbs.service import BreadcrumbWriter
from cairn.errors import Forbidden
from cairn.principal import Principal, Role


def get_resources(request: Request) -> Resources:
    resources: Resources = request.app.state.resources
    return resources


ResourcesDep = Annotated[Resources, Depends(get_resources)]


async def get_session(resources: ResourcesDep) -> AsyncIterator[AsyncSession]:
    """The request's one transaction: committed when the endpoint returns, before the
    response is sent (scope="function"), rolled back on any error."""
    async with resources.session_factory() as session, session.begin():
        yield session


SessionDep = Annotated[AsyncSession, Depends(get_session, scope="function")]


def get_principal(resources: ResourcesDep) -> Principal:
    # Until authentication lands every caller acts for the default tenant.
    return Principal(owner_id=resources.default_tenant, actor=resources.settings.default_actor)


PrincipalDep = Annotated[Principal, Depends(get_principal)]


def require_role(role: Role) -> object:
    """A route dependency: the caller must hold ``role`` (curators hold every role)."""

    def check(principal: PrincipalDep) -> Principal:
        if not principal.has(role):
            raise Forbidden(f"this operation needs the {role.value} role")
        return principal

    return Depends(check)


def get_writer(
    session: SessionDep, resources: ResourcesDep, principal: PrincipalDep
) -> BreadcrumbWriter:
    return BreadcrumbWriter(
        session, resources.embedder, resources.settings.limits, principal, resources.transforms
    )


def get_reader(
    session: SessionDep, resources: ResourcesDep, principal: PrincipalDep
) -> BreadcrumbReader:
    return BreadcrumbReader(
        session, resources.embedder, resources.settings.limits, principal, resources.transforms
    )


WriterDep = Annotated[BreadcrumbWriter, Depends(get_writer)]
ReaderDep = Annotated[BreadcrumbReader, Depends(get_reader)]
