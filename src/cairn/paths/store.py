"""A session's debug path as stored: ``debug.path.v1`` and ``debug.waypoint.v1`` records that
Cairn derives itself, so that they get history, events, row-level security and the graph
like any record.

Ids are derived, so that redelivered events and concurrent workers converge: a waypoint's
from (owner, source record, waypoint type), a path's from (owner, session, the record that
started it). Writes go through ``GeneratedWriter.put_generated`` (an upsert); the caller
holds the session's lock (:func:`cairn.paths.repository.lock_session`), which orders them.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from cairn.breadcrumbs.generated import GeneratedWriter
from cairn.breadcrumbs.repository import Row
from cairn.breadcrumbs.schemas import BreadcrumbCreate
from cairn.edges import repository as edges
from cairn.edges.builder import CAUSAL, TAG
from cairn.paths import repository
from cairn.paths.machine import PathState, Status, Waypoint
from cairn.paths.repository import PATH_SCHEMA, WAYPOINT_SCHEMA
from cairn.paths.summary import Resolution, WaypointNote

_NAMESPACE = uuid.UUID("4e0c1d6a-6f1b-4f4e-8d2b-9b6f1a7c3d52")


def waypoint_id(owner_id: uuid.UUID, source_record_id: uuid.UUID, kind: Waypoint) -> uuid.UUID:
    return uuid.uuid5(_NAMESPACE, f"{owner_id}|{source_record_id}|{kind.value}")


def path_id(owner_id: uuid.UUID, session_tag: str, first_record_id: uuid.UUID) -> uuid.UUID:
    return uuid.uuid5(_NAMESPACE, f"{owner_id}|{session_tag}|{first_record_id}")


@dataclass(frozen=True, slots=True)
class SummaryOutcome:
    """What the LLM summariser (cairn.paths.summariser) made of a resolved path: its summary
    (``by == "llm"``, with its model) or a failure (``by == "extractive"``, with the reason).
    A path with an outcome is never sent again."""

    by: str
    at: datetime
    model: str | None = None
    error: str | None = None


@dataclass(frozen=True, slots=True)
class StoredPath:
    """A path as its record holds it: the machine's state and what the machine does not
    need (when and by which record it started, its summary once resolved)."""

    id: uuid.UUID
    session: str
    state: PathState
    started_at: datetime
    trigger_record_id: uuid.UUID | None  # None: started explicitly (POST /paths)
    resolved_at: datetime | None = None
    resolution: Resolution | None = None
    summariser: SummaryOutcome | None = None
    replaced: Resolution | None = None  # the summary the LLM's replaced
    abandon_reason: str | None = None
    abandoned_at: datetime | None = None
    # Started or resolved by an agent's explicit call (POST /paths...): the worker's replay
    # of late records leaves it as it is, as it does an abandoned path.
    explicit: bool = False


@dataclass(frozen=True, slots=True)
class NewWaypoint:
    kind: Waypoint
    sequence: int
    summary: str
    source_record_id: uuid.UUID | None  # None: an explicit start or resolution
    command: str | None = None
    files: tuple[str, ...] = ()
    signature: str | None = None


def path_from_context(record_id: uuid.UUID, context: Mapping[str, Any]) -> StoredPath:
    """The stored path of a ``debug.path.v1`` context."""
    last_at = context.get("last_at")
    state = PathState(
        status=Status(context["status"]),
        signature=context.get("signature"),
        successes=int(context.get("successes") or 0),
        failed_commands=frozenset(context.get("failed_commands") or ()),
        sequence=int(context["sequence"]),
        last_at=datetime.fromisoformat(last_at) if last_at else None,
    )
    resolved_at = context.get("resolved_at")
    resolution = _resolution_of(context, context)
    replaced = context.get("replaced_summary")
    return StoredPath(
        record_id,
        context["session"],
        state,
        datetime.fromisoformat(context["started_at"]),
        uuid.UUID(trigger) if (trigger := context.get("trigger_record_id")) else None,
        datetime.fromisoformat(resolved_at) if resolved_at else None,
        resolution,
        summariser=_outcome_of(context.get("summariser")),
        replaced=_resolution_of(replaced, context) if replaced else None,
        abandon_reason=context.get("abandon_reason"),
        abandoned_at=_moment(context.get("abandoned_at")),
        explicit=bool(context.get("explicit")),
    )


def _moment(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def _resolution_of(summary: Mapping[str, Any], context: Mapping[str, Any]) -> Resolution | None:
    if not summary.get("kiss_summary"):
        return None
    return Resolution(
        summary["kiss_summary"],
        summary.get("root_cause") or "",
        summary.get("what_fixed_it") or "",
        tuple(context.get("files") or ()),
    )


def _outcome_of(stored: Mapping[str, Any] | None) -> SummaryOutcome | None:
    if not stored:
        return None
    at = datetime.fromisoformat(stored["at"])
    return SummaryOutcome(stored["by"], at, stored.get("model"), stored.get("error"))


def path_context(path: StoredPath) -> dict[str, Any]:
    state, resolution = path.state, path.resolution
    context: dict[str, Any] = {
        "session": path.session,
        "status": state.status.value,
        "signature": state.signature,
        "successes": state.successes,
        "failed_commands": sorted(state.failed_commands),
        "sequence": state.sequence,
        "last_at": state.last_at.isoformat() if state.last_at else None,
        "started_at": path.started_at.isoformat(),
        "resolved_at": path.resolved_at.isoformat() if path.resolved_at else None,
        "trigger_record_id": str(path.trigger_record_id) if path.trigger_record_id else None,
        "kiss_summary": resolution.kiss_summary if resolution else None,
        "root_cause": resolution.root_cause if resolution else None,
        "what_fixed_it": resolution.what_fixed_it if resolution else None,
        "files": list(resolution.files) if resolution else [],
        "abandon_reason": path.abandon_reason,
        "abandoned_at": path.abandoned_at.isoformat() if path.abandoned_at else None,
    }
    if path.explicit:
        context["explicit"] = True
    if path.summariser is not None:  # only once the summariser was asked (see SummaryOutcome)
        outcome = path.summariser
        fields = {
            "by": outcome.by,
            "at": outcome.at.isoformat(),
            "model": outcome.model,
            "error": outcome.error,
        }
        context["summariser"] = {key: value for key, value in fields.items() if value is not None}
    if path.replaced is not None:
        replaced = path.replaced
        context["replaced_summary"] = {
            "kiss_summary": replaced.kiss_summary,
            "root_cause": replaced.root_cause,
            "what_fixed_it": replaced.what_fixed_it,
        }
    return context


def waypoint_context(
    path: uuid.UUID, waypoint: NewWaypoint, session: str | None = None
) -> dict[str, Any]:
    """``session`` (the path's ``session:*`` tag) lets a waypoint's event stand on its own:
    the stream's ``path_waypoint`` frame is made from it without reading the path."""
    return {
        "path_id": str(path),
        "session": session,
        "sequence": waypoint.sequence,
        "type": waypoint.kind.value,
        "summary": waypoint.summary,
        "source_record_id": str(source) if (source := waypoint.source_record_id) else None,
        "command": waypoint.command,
        "files": list(waypoint.files),
        "signature": waypoint.signature,
    }


def note_of(context: Mapping[str, Any]) -> WaypointNote:
    """A stored waypoint as the summary reads it."""
    return WaypointNote(
        Waypoint(context["type"]),
        str(context.get("summary") or ""),
        context.get("command"),
        tuple(context.get("files") or ()),
    )


async def write_path(writer: GeneratedWriter, path: StoredPath) -> Row:
    title = f"Debug path ({path.state.status.value}): {path.state.signature or 'an error'}"
    body = BreadcrumbCreate(
        schema_name=PATH_SCHEMA,
        title=title[:200],
        tags=["debug:path"],
        context=path_context(path),
    )
    return await writer.put_generated(path.id, body, unless_later=None)


async def write_waypoints(
    writer: GeneratedWriter,
    path: uuid.UUID,
    waypoints: Sequence[NewWaypoint],
    *,
    session: str | None = None,
) -> list[uuid.UUID]:
    """Each waypoint's record (one per source record and type; one per path and type for
    a waypoint without a source); their ids."""
    owner, written = writer.principal.owner_id, []
    for waypoint in waypoints:
        ident = waypoint_id(owner, waypoint.source_record_id or path, waypoint.kind)
        body = BreadcrumbCreate(
            schema_name=WAYPOINT_SCHEMA,
            title=f"{waypoint.kind.value}: {waypoint.summary}"[:200],
            tags=["debug:waypoint", f"path:{path}"],
            context=waypoint_context(path, waypoint, session),
        )
        await writer.put_generated(ident, body, unless_later=None)
        written.append(ident)
    return written


async def link_waypoints(
    writer: GeneratedWriter,
    path: uuid.UUID,
    waypoints: Sequence[tuple[uuid.UUID | None, uuid.UUID]],
) -> None:
    """Causal edges source record → waypoint → path, for (source, waypoint) pairs, between
    records that still exist (an explicit waypoint has no source: waypoint → path only)."""
    owner = writer.principal.owner_id
    ends = [path, *(end for pair in waypoints for end in pair if end is not None)]
    present = await edges.lock_endpoints(writer.session, owner, ends)
    wanted = [(source, w, CAUSAL, 1.0) for source, w in waypoints if source is not None]
    wanted += [(w, path, CAUSAL, 1.0) for _, w in waypoints]
    kept = sorted({e for e in wanted if e[0] in present and e[1] in present})
    await edges.upsert_edges(writer.session, owner, kept)


async def link_files(writer: GeneratedWriter, path: uuid.UUID, files: Sequence[str]) -> None:
    """Tag edges path → each record tagged ``file:<path>`` for a file the path touched (a
    waypoint's record named it): the graph then leads from a fix to what is known about the
    files it changed, and back. Files are not records unless someone made one so tagged."""
    if not files:
        return
    owner = writer.principal.owner_id
    found = await repository.file_records(writer.session, owner, sorted(set(files)))
    if not found:
        return
    present = await edges.lock_endpoints(writer.session, owner, [path, *found])
    kept = sorted((path, f, TAG, 1.0) for f in found if path in present and f in present)
    await edges.upsert_edges(writer.session, owner, kept)
