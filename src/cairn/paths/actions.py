"""What an agent says about its own debug path: start one, call it resolved, give it up.

Each runs in the caller's tenant transaction under the session's lock
(:func:`cairn.paths.repository.lock_session`), like the worker's tracking, so an explicit
operation and the worker's detection never both start a path for one session, and the
path's state is read again under the lock before it changes.

An explicit start has no record behind it: the path's id is random, its
``trigger_record_id`` null, and its first waypoint (an ``error`` carrying the agent's
summary) has no source record. The worker's detection then goes on from that path like
from one it started itself.
"""

from __future__ import annotations

import uuid
from dataclasses import replace
from datetime import UTC, datetime

from cairn.breadcrumbs.generated import GeneratedWriter
from cairn.errors import Conflict, NotFound
from cairn.paths import queries, repository
from cairn.paths.closing import abandon_path
from cairn.paths.machine import PathState, Status, Waypoint
from cairn.paths.store import (
    NewWaypoint,
    StoredPath,
    link_waypoints,
    note_of,
    write_path,
    write_waypoints,
)
from cairn.paths.summary import Resolution, kiss_line, summarise


async def start(
    writer: GeneratedWriter, session_tag: str, summary: str, signature: str | None = None
) -> StoredPath:
    """A new active path for the session; 409 if the session already has one."""
    owner, now = writer.principal.owner_id, _now()
    await repository.lock_session(writer.session, owner, session_tag)
    found = await repository.active_path(writer.session, owner, session_tag)
    if found is not None:
        raise Conflict(
            f"{session_tag} already has an active path ({found[0]}): resolve or abandon it first",
            extra={"path_id": str(found[0])},
        )
    state = PathState(Status.ACTIVE, signature, sequence=1, last_at=now)
    path = StoredPath(uuid.uuid4(), session_tag, state, now, None, explicit=True)
    first = NewWaypoint(Waypoint.ERROR, 1, summary, None, signature=signature)
    await write_path(writer, path)  # before its waypoint: path_started comes first
    written = await write_waypoints(writer, path.id, [first], session=session_tag)
    await link_waypoints(writer, path.id, [(None, w) for w in written])
    return path


async def resolve(
    writer: GeneratedWriter,
    path_id: uuid.UUID,
    what_fixed_it: str | None = None,
    root_cause: str | None = None,
) -> StoredPath:
    """Active → resolved with a ``resolution`` waypoint, and the summary extracted from the
    waypoints; the caller's ``what_fixed_it`` / ``root_cause`` replace the extracted ones."""
    stored = await _active(writer, path_id, "resolved")
    now, owner = _now(), writer.principal.owner_id
    sequence = stored.state.sequence + 1
    said = "resolved explicitly" + (f": {what_fixed_it}" if what_fixed_it else "")
    waypoint = NewWaypoint(Waypoint.RESOLUTION, sequence, said, None)
    written = await write_waypoints(writer, stored.id, [waypoint], session=stored.session)
    notes = [note_of(c) for c in await repository.waypoints_of(writer.session, owner, path_id)]
    extracted = summarise(notes)
    root = root_cause or extracted.root_cause
    fix = what_fixed_it or extracted.what_fixed_it
    resolution = Resolution(kiss_line(root, fix, extracted.files), root, fix, extracted.files)
    state = replace(stored.state, status=Status.RESOLVED, sequence=sequence, last_at=now)
    resolved = replace(stored, state=state, resolved_at=now, resolution=resolution, explicit=True)
    await write_path(writer, resolved)
    await link_waypoints(writer, stored.id, [(None, w) for w in written])
    return resolved


async def abandon(
    writer: GeneratedWriter, path_id: uuid.UUID, reason: str | None = None
) -> StoredPath:
    """Active → abandoned, at the agent's word."""
    stored = await _active(writer, path_id, "abandoned")
    return await abandon_path(writer, stored, _now(), reason)


async def _active(writer: GeneratedWriter, path_id: uuid.UUID, verb: str) -> StoredPath:
    """The path, read again under its session's lock; 404 unknown, 409 not active."""
    session, owner = writer.session, writer.principal.owner_id
    seen = await queries.find_path(session, owner, path_id)
    if seen is None:
        raise NotFound(f"path {path_id} not found")
    await repository.lock_session(session, owner, seen.session)
    stored = await queries.find_path(session, owner, path_id)
    if stored is None:
        raise NotFound(f"path {path_id} not found")
    if stored.state.status is not Status.ACTIVE:
        raise Conflict(
            f"path {path_id} is {stored.state.status.value}: only an active path can be {verb}",
            extra={"path_status": stored.state.status.value},
        )
    return stored


def _now() -> datetime:
    return datetime.now(UTC)
