"""``/paths``: a tenant's debug paths (detected by the worker or started explicitly), and
an agent's explicit start, resolve and abandon. Reading needs subscriber, writing emitter.

Paths are records Cairn derives: the route checks the caller's role, and the writes then
act for Cairn in the caller's name (``updated_by``), as the worker's tracking does, so an
agent can resolve a path the worker started."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Depends, Query, status

from cairn.api.deps import PrincipalDep, ResourcesDep, SessionDep, require_role
from cairn.breadcrumbs.chunks import ChunkWindow
from cairn.breadcrumbs.generated import GeneratedWriter
from cairn.errors import NotFound
from cairn.paths import actions, queries
from cairn.paths.queries import PathFilter
from cairn.paths.schemas import (
    SESSION,
    PathAbandon,
    PathDetailView,
    PathResolve,
    PathStart,
    PathStatus,
    PathView,
)
from cairn.principal import Principal, Role

router = APIRouter(prefix="/paths", tags=["paths"])
SUBSCRIBER = require_role(Role.SUBSCRIBER)
EMITTER = require_role(Role.EMITTER)

SessionQuery = Annotated[
    str, Query(pattern=SESSION, description="the session tag, `session:` optional")
]


def session_tag(session: str) -> str:
    return "session:" + session.removeprefix("session:")


def get_path_writer(
    db: SessionDep, resources: ResourcesDep, principal: PrincipalDep
) -> GeneratedWriter:
    settings = resources.settings
    acting = Principal(principal.owner_id, principal.actor)  # every role: see the docstring
    return GeneratedWriter(
        db, resources.embedder, settings.limits, acting, resources.transforms,
        chunk_window=ChunkWindow.of(settings.embedding),
    )  # fmt: skip


PathWriterDep = Annotated[GeneratedWriter, Depends(get_path_writer)]


@router.get("", dependencies=[SUBSCRIBER])
async def list_paths(
    db: SessionDep,
    principal: PrincipalDep,
    status: PathStatus | None = None,
    session: Annotated[str | None, Query(pattern=SESSION)] = None,
    limit: Annotated[int, Query(ge=1, le=queries.MAX_LIST)] = 50,
) -> list[PathView]:
    """Paths, the latest started first."""
    flt = PathFilter(status, None if session is None else session_tag(session), limit)
    return [PathView.of(path) for path in await queries.list_paths(db, principal.owner_id, flt)]


@router.get("/active", dependencies=[SUBSCRIBER])
async def active_path(
    db: SessionDep, principal: PrincipalDep, session: SessionQuery
) -> PathDetailView | None:
    """The session's active path with its waypoints; ``null`` when it has none (having
    none is an answer, not a missing resource)."""
    detail = await queries.active_detail(db, principal.owner_id, session_tag(session))
    return None if detail is None else PathDetailView.of(detail)


@router.get("/{path_id}", dependencies=[SUBSCRIBER])
async def show_path(db: SessionDep, principal: PrincipalDep, path_id: uuid.UUID) -> PathDetailView:
    """The path, its waypoints in sequence order and the records they came from."""
    return await _detail(db, principal.owner_id, path_id)


@router.post("", status_code=status.HTTP_201_CREATED, dependencies=[EMITTER])
async def start_path(body: PathStart, writer: PathWriterDep) -> PathDetailView:
    """Start a path for a session explicitly (409 while the session has an active one)."""
    path = await actions.start(writer, session_tag(body.session), body.summary, body.signature)
    return await _detail(writer.session, writer.principal.owner_id, path.id)


@router.post("/{path_id}/resolve", dependencies=[EMITTER])
async def resolve_path(
    path_id: uuid.UUID, body: PathResolve, writer: PathWriterDep
) -> PathDetailView:
    """Call an active path resolved (409 otherwise); the summary is extracted from its
    waypoints, with the given ``what_fixed_it`` and ``root_cause`` in place of theirs."""
    await actions.resolve(writer, path_id, body.what_fixed_it, body.root_cause)
    return await _detail(writer.session, writer.principal.owner_id, path_id)


@router.post("/{path_id}/abandon", dependencies=[EMITTER])
async def abandon_path(
    path_id: uuid.UUID, body: PathAbandon, writer: PathWriterDep
) -> PathDetailView:
    """Give up an active path (409 otherwise)."""
    await actions.abandon(writer, path_id, body.reason)
    return await _detail(writer.session, writer.principal.owner_id, path_id)


async def _detail(db: SessionDep, owner: uuid.UUID, path_id: uuid.UUID) -> PathDetailView:
    detail = await queries.path_detail(db, owner, path_id)
    if detail is None:
        raise NotFound(f"path {path_id} not found")
    return PathDetailView.of(detail)
