"""One record's effect on its session's debug path, applied to the stored path: the worker's
``track_paths`` step.

Everything happens in the caller's tenant transaction, under the session's advisory lock,
so that any number of workers see one active path per session and number its waypoints
without gaps; a record that already has a waypoint (a redelivered event) changes nothing.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from cairn.breadcrumbs.generated import GeneratedWriter
from cairn.edges import repository as edges
from cairn.edges.builder import CAUSAL
from cairn.paths import repository
from cairn.paths.machine import RESOLUTION_THRESHOLD, PathState, Step, Waypoint, advance
from cairn.paths.signals import Signal
from cairn.paths.store import (
    NewWaypoint,
    StoredPath,
    note_of,
    path_from_context,
    path_id,
    write_path,
    write_waypoints,
)
from cairn.paths.summary import summarise

SKIPPED_SCHEMAS = frozenset(
    {repository.PATH_SCHEMA, repository.WAYPOINT_SCHEMA, "agent.context.v1"}
)
_PROBLEMS = (Waypoint.ERROR, Waypoint.FAILURE, Waypoint.PIVOT)


@dataclass(frozen=True, slots=True)
class Tracked:
    """What a record did to its session's path: the path as written and its new waypoints."""

    path: StoredPath
    step: Step
    waypoint_ids: tuple[uuid.UUID, ...]


def session_of(record: Mapping[str, Any]) -> str | None:
    """The record's ``session:*`` tag (its first), if any."""
    for tag in record.get("tags") or ():
        if isinstance(tag, str) and tag.startswith("session:"):
            return tag
    return None


def tracked(record: Mapping[str, Any]) -> bool:
    return record.get("schema_name") not in SKIPPED_SCHEMAS and session_of(record) is not None


async def track(
    writer: GeneratedWriter,
    record: Mapping[str, Any],
    signal: Signal,
    *,
    threshold: int = RESOLUTION_THRESHOLD,
) -> Tracked | None:
    """Apply ``signal`` of ``record`` (id, tags, title, ``updated_at``) to its session's path."""
    session, owner = writer.session, writer.principal.owner_id
    tag = session_of(record)
    assert tag is not None  # see tracked()
    record_id = uuid.UUID(str(record["breadcrumb_id"]))
    await repository.lock_session(session, owner, tag)
    if await repository.has_waypoint_from(session, owner, record_id):
        return None
    found = await repository.active_path(session, owner, tag)
    stored = path_from_context(*found) if found else None
    now = _time_of(record)
    step = advance(stored.state if stored else PathState(), signal, now, threshold=threshold)
    if not step.waypoints:
        return None
    previous = stored.state.sequence if stored and not step.started else 0
    if stored is None or step.started:
        stored = StoredPath(path_id(owner, tag, record_id), tag, step.state, now, record_id)
    else:
        stored = replace(stored, state=step.state)
    waypoints = _waypoints(step, signal, record, record_id, previous)
    if not step.resolved:  # the path's event before its waypoints': path_started comes first
        await write_path(writer, stored)
    ids = await write_waypoints(writer, stored.id, waypoints, session=tag)
    if step.resolved:  # the summary reads the waypoints just written
        notes = [note_of(c) for c in await repository.waypoints_of(session, owner, stored.id)]
        stored = replace(stored, resolved_at=now, resolution=summarise(notes))
        await write_path(writer, stored)
    await _link(writer, record_id, stored.id, ids)
    return Tracked(stored, step, tuple(ids))


def _waypoints(
    step: Step, signal: Signal, record: Mapping[str, Any], source: uuid.UUID, previous: int
) -> list[NewWaypoint]:
    return [
        NewWaypoint(
            kind,
            previous + offset,
            _summary(kind, signal, record, step.state),
            source,
            signal.command,
            signal.files,
            signal.signature if kind in _PROBLEMS else None,
        )
        for offset, kind in enumerate(step.waypoints, start=1)
    ]


def _summary(kind: Waypoint, signal: Signal, record: Mapping[str, Any], state: PathState) -> str:
    """What the waypoint says in a line: the error for a problem, else the record's title."""
    title = str(record.get("title") or "").strip()
    if kind is Waypoint.RESOLUTION:
        return f"resolved after {state.successes} consecutive successes"
    if kind in _PROBLEMS:
        return signal.signature or title or signal.evidence
    if kind is Waypoint.SUCCESS and signal.evidence:
        return f"{title} ({signal.evidence})" if title else signal.evidence
    return title or signal.evidence


async def _link(
    writer: GeneratedWriter, source: uuid.UUID, path: uuid.UUID, waypoints: Sequence[uuid.UUID]
) -> None:
    """Causal edges source record → waypoint → path, between records that still exist."""
    owner = writer.principal.owner_id
    present = await edges.lock_endpoints(writer.session, owner, [source, path, *waypoints])
    wanted = [(source, w, CAUSAL, 1.0) for w in waypoints]
    wanted += [(w, path, CAUSAL, 1.0) for w in waypoints]
    kept = sorted(e for e in wanted if e[0] in present and e[1] in present)
    await edges.upsert_edges(writer.session, owner, kept)


def _time_of(record: Mapping[str, Any]) -> datetime:
    """When the record was written (an event's ISO ``updated_at``, or a row's datetime)."""
    value = record["updated_at"]
    return value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
