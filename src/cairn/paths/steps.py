"""One signal applied to a stored path, without the database: what the worker's
``track`` does for a record in order, and what a replay does for each of a session's
records in turn, so that both give the same path."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from cairn.paths.machine import RESOLUTION_THRESHOLD, PathState, Status, Step, Waypoint, advance
from cairn.paths.repository import PATH_SCHEMA, WAYPOINT_SCHEMA
from cairn.paths.signals import Signal
from cairn.paths.store import NewWaypoint, StoredPath, path_id

SKIPPED_SCHEMAS = frozenset({PATH_SCHEMA, WAYPOINT_SCHEMA, "agent.context.v1"})
_PROBLEMS = (Waypoint.ERROR, Waypoint.FAILURE, Waypoint.PIVOT)


def session_of(record: Mapping[str, Any]) -> str | None:
    """The record's ``session:*`` tag (its first), if any."""
    for tag in record.get("tags") or ():
        if isinstance(tag, str) and tag.startswith("session:"):
            return tag
    return None


def tracked(record: Mapping[str, Any]) -> bool:
    return record.get("schema_name") not in SKIPPED_SCHEMAS and session_of(record) is not None


def time_of(record: Mapping[str, Any]) -> datetime:
    """When the record was created (``created_at``, which :func:`.tracking.track` reads
    from the row): not when a worker saw it, so that the order of arrival does not date
    the path."""
    value = record["created_at"]
    return value if isinstance(value, datetime) else datetime.fromisoformat(str(value))


@dataclass(frozen=True, slots=True)
class Applied:
    """A signal's effect: the path as it now is (a new one when ``step.started``) and its
    new waypoints."""

    path: StoredPath
    step: Step
    waypoints: tuple[NewWaypoint, ...]


def apply(
    owner_id: uuid.UUID,
    active: StoredPath | None,
    record: Mapping[str, Any],
    signal: Signal,
    *,
    threshold: int = RESOLUTION_THRESHOLD,
) -> Applied | None:
    """``signal`` of ``record`` (its id under ``breadcrumb_id`` or ``id``) applied to the
    session's ``active`` path, or to none; None when it says nothing about a path. A
    resolved path's summary is the caller's (it needs every waypoint)."""
    record_id = uuid.UUID(str(record.get("breadcrumb_id") or record["id"]))
    now = time_of(record)
    step = advance(active.state if active else PathState(), signal, now, threshold=threshold)
    if not step.waypoints:
        return None
    previous = active.state.sequence if active and not step.started else 0
    if active is None or step.started:
        tag = session_of(record)
        assert tag is not None  # see tracked()
        path = StoredPath(path_id(owner_id, tag, record_id), tag, step.state, now, record_id)
    else:
        path = replace(active, state=step.state)
    if step.resolved:
        path = replace(path, resolved_at=now)
    waypoints = tuple(
        NewWaypoint(
            kind,
            previous + offset,
            _summary(kind, signal, record, step.state),
            record_id,
            signal.command,
            signal.files,
            signal.signature if kind in _PROBLEMS else None,
        )
        for offset, kind in enumerate(step.waypoints, start=1)
    )
    return Applied(path, step, waypoints)


def is_active(path: StoredPath | None) -> bool:
    return path is not None and path.state.status is Status.ACTIVE


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
