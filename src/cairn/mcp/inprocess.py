"""The backend of ``/mcp``: Cairn's own services, on behalf of the HTTP request's caller.

Each call is one transaction scoped to the caller's tenant (row-level security), with the
role checks of the matching API route, exactly as the route's dependencies build it.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, TypeVar

from mcp.server.mcpserver import Context
from pydantic import BaseModel, ValidationError
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.requests import Request

from cairn.api.deps import get_resources
from cairn.api.resources import Resources
from cairn.breadcrumbs.chunks import ChunkWindow
from cairn.breadcrumbs.generated import GeneratedWriter
from cairn.breadcrumbs.hybrid import hybrid_search
from cairn.breadcrumbs.queries import BreadcrumbReader
from cairn.breadcrumbs.repository import ListFilter
from cairn.breadcrumbs.schemas import BreadcrumbCreate
from cairn.breadcrumbs.service import BreadcrumbWriter
from cairn.context import ondemand
from cairn.db.engine import tenant_session
from cairn.errors import CairnError, Forbidden, InvalidInput, NotFound
from cairn.mcp.backend import (
    ContextQuery,
    PathList,
    Record,
    Records,
    Remembered,
    SearchMode,
    SearchResults,
    session_tag,
)
from cairn.paths import actions, queries
from cairn.paths.endpoints import get_path_writer
from cairn.paths.queries import PathFilter
from cairn.paths.schemas import PathDetailView, PathResolve, PathStart, PathStatus, PathView
from cairn.principal import Principal, Role


def caller_backend(ctx: Context) -> InProcessBackend:
    """The backend of the HTTP request carrying this tool call: the ``/mcp`` endpoint has
    authenticated it and left the caller on ``request.state``."""
    request = ctx.request_context.request
    principal = getattr(request.state, "principal", None) if request is not None else None
    if not isinstance(request, Request) or not isinstance(principal, Principal):
        raise CairnError("this tool call did not arrive through the authenticated /mcp route")
    return InProcessBackend(get_resources(request), principal)


class InProcessBackend:
    def __init__(self, resources: Resources, principal: Principal) -> None:
        self.resources = resources
        self.principal = principal

    async def remember(
        self,
        *,
        schema_name: str | None,
        title: str,
        context: dict[str, Any],
        tags: list[str],
        session: str | None,
    ) -> Remembered:
        self._require(Role.EMITTER)
        if session is not None:
            tags = [*tags, session_tag(session)]
        body = BreadcrumbCreate(schema_name=schema_name, title=title, context=context, tags=tags)
        async with self._services() as (_, writer):
            created = await writer.create(body, None)
        return Remembered(id=created.id, version=created.version)

    async def search(
        self, text: str, *, mode: SearchMode, schema_name: str | None, limit: int
    ) -> SearchResults:
        """``hybrid`` ranks as GET /breadcrumbs/search?mode=hybrid does (BM25 alone while the
        embedder is down); ``vector`` by cosine similarity."""
        self._require(Role.SUBSCRIBER)
        flt = ListFilter(schema_name=schema_name)
        async with self._services() as (reader, _):
            if mode == "hybrid":
                common = self.resources.contexts.common_words
                found = await hybrid_search(
                    reader, flt, q=text, nn=limit, include_context=True, common_words=common
                )
                hits = found.hits
            else:
                hits = await reader.search(flt, q=text, qvec=None, nn=limit, include_context=True)
        return SearchResults(mode=mode, hits=[hit.model_dump(mode="json") for hit in hits])

    async def get_context(self, request: ContextQuery) -> dict[str, Any]:
        self._require(Role.SUBSCRIBER)
        try:
            query = ondemand.ContextQuery.model_validate(request.body())
        except ValidationError as error:
            raise InvalidInput(
                str(error).splitlines()[-1 if error.error_count() == 1 else 0]
            ) from None
        answer = await ondemand.answer(
            self.resources.contexts, self.principal, query, use_cache=True
        )
        return answer.model_dump(mode="json")

    async def get_record(self, record_id: uuid.UUID) -> Record:
        self._require(Role.SUBSCRIBER)
        async with self._services() as (reader, _):
            view = await reader.view(record_id)
        return view.model_dump(mode="json")

    async def recent(self, session: str, *, limit: int) -> Records:
        self._require(Role.SUBSCRIBER)
        flt = ListFilter(tag=session_tag(session))
        async with self._services() as (reader, _):
            page = await reader.page(flt, limit=limit, offset=0, cursor=None, include_context=True)
        return Records(records=[item.model_dump(mode="json") for item in page.items])

    async def path_start(self, session: str, summary: str, signature: str | None) -> PathDetailView:
        self._require(Role.EMITTER)
        body = _valid(PathStart, session=session, summary=summary, signature=signature)
        async with self._path_writer() as writer:
            path = await actions.start(writer, session_tag(body.session), summary, signature)
            return await self._detail(writer.session, path.id)

    async def path_resolve(
        self, path_id: uuid.UUID, what_fixed_it: str | None, root_cause: str | None
    ) -> PathDetailView:
        self._require(Role.EMITTER)
        _valid(PathResolve, what_fixed_it=what_fixed_it, root_cause=root_cause)
        async with self._path_writer() as writer:
            await actions.resolve(writer, path_id, what_fixed_it, root_cause)
            return await self._detail(writer.session, path_id)

    async def path_show(self, path_id: uuid.UUID) -> PathDetailView:
        self._require(Role.SUBSCRIBER)
        async with self._services() as (reader, _):
            return await self._detail(reader.session, path_id)

    async def path_active(self, session: str) -> PathDetailView | None:
        self._require(Role.SUBSCRIBER)
        tag = session_tag(_valid(PathStart, session=session, summary="-").session)
        async with self._services() as (reader, _):
            found = await queries.active_detail(reader.session, self.principal.owner_id, tag)
        return None if found is None else PathDetailView.of(found)

    async def path_list(
        self, status: PathStatus | None, session: str | None, limit: int
    ) -> PathList:
        self._require(Role.SUBSCRIBER)
        tag = None
        if session is not None:
            tag = session_tag(_valid(PathStart, session=session, summary="-").session)
        flt = PathFilter(status, tag, limit)
        async with self._services() as (reader, _):
            found = await queries.list_paths(reader.session, self.principal.owner_id, flt)
        return PathList(paths=[PathView.of(path) for path in found])

    async def _detail(self, session: AsyncSession, path_id: uuid.UUID) -> PathDetailView:
        found = await queries.path_detail(session, self.principal.owner_id, path_id)
        if found is None:
            raise NotFound(f"path {path_id} not found")
        return PathDetailView.of(found)

    @asynccontextmanager
    async def _path_writer(self) -> AsyncIterator[GeneratedWriter]:
        """As ``POST /paths...`` builds it, in one transaction of the caller's tenant."""
        resources, principal = self.resources, self.principal
        scoped = tenant_session(resources.session_factory, principal.owner_id)
        async with scoped as session, session.begin():
            yield get_path_writer(session, resources, principal)

    def _require(self, role: Role) -> None:
        if not self.principal.has(role):
            raise Forbidden(f"this tool needs the {role.value} role")

    @asynccontextmanager
    async def _services(self) -> AsyncIterator[tuple[BreadcrumbReader, BreadcrumbWriter]]:
        """One transaction in the caller's tenant, committed when the tool's work is done
        (so its events leave through the outbox like any request's)."""
        resources, principal = self.resources, self.principal
        scoped = tenant_session(resources.session_factory, principal.owner_id)
        async with scoped as session, session.begin():
            args = (session, resources.embedder, resources.settings.limits, principal)
            yield (
                BreadcrumbReader(*args, resources.transforms),
                BreadcrumbWriter(
                    *args,
                    resources.transforms,
                    chunk_window=ChunkWindow.of(resources.settings.embedding),
                ),
            )


M = TypeVar("M", bound=BaseModel)


def _valid(model: type[M], **fields: Any) -> M:
    """The request model of the matching route, so a tool refuses what the route refuses
    (and says where, as the route's 422 does)."""
    try:
        return model.model_validate(fields)
    except ValidationError as error:
        problems = [f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors()]
        raise InvalidInput("; ".join(problems)[:2000]) from None
