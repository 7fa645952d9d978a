"""Reads of stored debug paths for the API and the MCP tools: a tenant's paths newest first,
one path with its waypoints in order and the records they came from. Owner-scoped, live
records only, schema names as literals (see :mod:`.repository`)."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import TextClause, text
from sqlalchemy.ext.asyncio import AsyncSession

from cairn.paths.repository import _LIVE, PATH_SCHEMA, WAYPOINT_SCHEMA, active_path
from cairn.paths.store import StoredPath, path_from_context

MAX_LIST = 500


@dataclass(frozen=True, slots=True)
class PathFilter:
    status: str | None = None
    session_tag: str | None = None
    limit: int = 50


@dataclass(frozen=True, slots=True)
class SourceRecord:
    """The record a waypoint was derived from, as far as a reader needs to find it."""

    id: uuid.UUID
    title: str | None
    schema_name: str | None


@dataclass(frozen=True, slots=True)
class StoredWaypoint:
    id: uuid.UUID
    context: dict[str, Any]
    source_id: uuid.UUID | None
    source: SourceRecord | None  # None: no source, or it is gone


@dataclass(frozen=True, slots=True)
class PathDetail:
    path: StoredPath
    waypoints: list[StoredWaypoint]


async def list_paths(
    session: AsyncSession, owner_id: uuid.UUID, flt: PathFilter
) -> list[StoredPath]:
    """The tenant's paths, the latest started first."""
    query, params = list_query(owner_id, flt)
    parsed = [_parsed(row.id, row.context) for row in await session.execute(query, params)]
    return [path for path in parsed if path is not None]


def list_query(owner_id: uuid.UUID, flt: PathFilter) -> tuple[TextClause, dict[str, Any]]:
    """``list_paths``'s statement (its order fits the index of migration 0021)."""
    clauses, params = [], {"owner": owner_id, "limit": min(flt.limit, MAX_LIST)}
    if flt.status is not None:
        clauses.append("AND context->>'status' = :status")
        params["status"] = flt.status
    if flt.session_tag is not None:
        clauses.append("AND context->>'session' = :session")
        params["session"] = flt.session_tag
    query = text(
        f"SELECT id, context FROM breadcrumbs WHERE owner_id = :owner AND {_LIVE}"
        f" AND schema_name = '{PATH_SCHEMA}' {' '.join(clauses)}"
        " ORDER BY created_at DESC, id LIMIT :limit"
    )
    return query, params


async def find_path(
    session: AsyncSession, owner_id: uuid.UUID, path_id: uuid.UUID
) -> StoredPath | None:
    query = text(
        f"SELECT id, context FROM breadcrumbs WHERE owner_id = :owner AND {_LIVE}"
        f" AND schema_name = '{PATH_SCHEMA}' AND id = :id"
    )
    row = (await session.execute(query, {"owner": owner_id, "id": path_id})).one_or_none()
    return None if row is None else _parsed(row.id, row.context)


async def waypoints_with_sources(
    session: AsyncSession, owner_id: uuid.UUID, path_id: uuid.UUID
) -> list[StoredWaypoint]:
    """A path's waypoints in sequence order, each with its source record while that lives."""
    query = text(
        f"SELECT id, context FROM breadcrumbs WHERE owner_id = :owner AND {_LIVE}"
        f" AND schema_name = '{WAYPOINT_SCHEMA}' AND context->>'path_id' = :path"
        " ORDER BY (context->>'sequence')::int"
    )
    rows = list(await session.execute(query, {"owner": owner_id, "path": str(path_id)}))
    wanted = {row.id: _uuid(row.context.get("source_record_id")) for row in rows}
    sources = await _records(session, owner_id, {s for s in wanted.values() if s is not None})
    waypoints = []
    for row in rows:
        source = wanted[row.id]
        found = sources.get(source) if source else None
        waypoints.append(StoredWaypoint(row.id, dict(row.context), source, found))
    return waypoints


async def _records(
    session: AsyncSession, owner_id: uuid.UUID, ids: set[uuid.UUID]
) -> dict[uuid.UUID, SourceRecord]:
    if not ids:
        return {}
    query = text(
        f"SELECT id, title, schema_name FROM breadcrumbs WHERE owner_id = :owner AND {_LIVE}"
        " AND id = ANY(:ids)"
    )
    rows = await session.execute(query, {"owner": owner_id, "ids": list(ids)})
    return {row.id: SourceRecord(row.id, row.title, row.schema_name) for row in rows}


def _uuid(value: object) -> uuid.UUID | None:
    """A stored id; None for none, or for a malformed one in a record someone else wrote."""
    try:
        return uuid.UUID(str(value)) if value else None
    except ValueError:
        return None


def _parsed(record_id: uuid.UUID, context: Mapping[str, Any]) -> StoredPath | None:
    """The path of a ``debug.path.v1`` record; None for one whose times or ids do not read
    (the schema does not check formats, and any emitter may write that schema)."""
    try:
        return path_from_context(record_id, context)
    except (KeyError, TypeError, ValueError):
        return None


async def path_detail(
    session: AsyncSession, owner_id: uuid.UUID, path_id: uuid.UUID
) -> PathDetail | None:
    path = await find_path(session, owner_id, path_id)
    if path is None:
        return None
    return PathDetail(path, await waypoints_with_sources(session, owner_id, path_id))


async def active_detail(
    session: AsyncSession, owner_id: uuid.UUID, session_tag: str
) -> PathDetail | None:
    """The session's active path with its waypoints, if it has one."""
    found = await active_path(session, owner_id, session_tag)
    path = None if found is None else _parsed(*found)
    if path is None:
        return None
    return PathDetail(path, await waypoints_with_sources(session, owner_id, path.id))
