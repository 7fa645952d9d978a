"""One record's effect on its session's debug path, applied to the stored path: the worker's
``track_paths`` step.

Everything happens in the caller's tenant transaction, under the session's advisory lock,
so that any number of workers see one active path per session and number its waypoints
without gaps; a record that already has a waypoint (a redelivered event) changes nothing.

A path is dated and ordered by when its records were created, not by when a worker saw
them: a record created before the latest path's last waypoint (two workers, a redelivery,
a retry) has the session's paths since then rebuilt by replaying its records in order
(:mod:`.replay`), so that the outcome does not depend on the order of arrival. So does a
record that starts a path when later records of its session are already there: one of
them that arrived first (an edit after the error) had no path to join and left nothing.
A record in order costs about what it always did: the lock, the redelivery probe, the
active path (without one, the session's paths written since the record was created), its
writes, and for a path's first record a probe for later ones.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from cairn.breadcrumbs.generated import GeneratedWriter
from cairn.paths import repository
from cairn.paths.machine import RESOLUTION_THRESHOLD, Status, Step, Waypoint
from cairn.paths.replay import rebuild
from cairn.paths.signals import Signal
from cairn.paths.steps import (
    SKIPPED_SCHEMAS as SKIPPED_SCHEMAS,
    apply,
    is_active,
    session_of as session_of,
    time_of,
    tracked as tracked,
)
from cairn.paths.store import (
    StoredPath,
    link_files,
    link_waypoints,
    note_of,
    path_from_context,
    waypoint_id,
    write_path,
    write_waypoints,
)
from cairn.paths.summary import summarise


@dataclass(frozen=True, slots=True)
class Tracked:
    """What a record did to its session's path: the path as written and its new waypoints
    (after a replay: the session's latest path and every waypoint the replay wrote)."""

    path: StoredPath
    step: Step
    waypoint_ids: tuple[uuid.UUID, ...]
    replayed: bool = False


async def track(
    writer: GeneratedWriter,
    record: Mapping[str, Any],
    signal: Signal,
    *,
    threshold: int = RESOLUTION_THRESHOLD,
) -> Tracked | None:
    """Apply ``signal`` of ``record`` (a created event: id, tags, title) to its session's
    path."""
    session, owner = writer.session, writer.principal.owner_id
    tag = session_of(record)
    assert tag is not None  # see tracked()
    record_id = uuid.UUID(str(record["breadcrumb_id"]))
    await repository.lock_session(session, owner, tag)
    candidates = [waypoint_id(owner, record_id, kind) for kind in Waypoint]
    created = await repository.record_created(session, owner, record_id, candidates)
    if created is None or created[1]:  # deleted since, or already tracked (redelivered)
        return None
    record = {**record, "created_at": created[0]}
    created_at = time_of(record)
    active = await repository.active_path(session, owner, tag)
    if active is None:  # the latest path, if written since the record was created
        found = await repository.paths_since(session, owner, tag, created_at, latest_only=True)
        active = found[0] if found else None
    latest = path_from_context(*active) if active else None
    if latest is not None and await _late(writer, latest, record, record_id):
        if latest.state.status is Status.ABANDONED:
            return None  # that stretch of the session is closed
        return await _replay(writer, tag, created_at, threshold)
    applied = apply(owner, latest if is_active(latest) else None, record, signal,
                    threshold=threshold)  # fmt: skip
    if applied is None:
        return None
    if applied.step.started and await repository.created_after(
        session, owner, tag, created_at, record_id
    ):
        # Records of the session created after this one were tracked first: any of them
        # that needed this path found none and was left out, so the path is replayed.
        replayed = await _replay(writer, tag, created_at, threshold)
        if replayed is not None:
            return replayed
    stored = applied.path
    if not applied.step.resolved:  # the path's event before its waypoints': path_started first
        await write_path(writer, stored)
    ids = await write_waypoints(writer, stored.id, applied.waypoints, session=tag)
    if applied.step.resolved:  # the summary reads the waypoints just written
        notes = [note_of(c) for c in await repository.waypoints_of(session, owner, stored.id)]
        stored = replace(stored, resolution=summarise(notes))
        await write_path(writer, stored)
    await link_waypoints(writer, stored.id, [(record_id, ident) for ident in ids])
    await link_files(writer, stored.id, applied.waypoints[0].files)
    return Tracked(stored, applied.step, tuple(ids))


async def _replay(
    writer: GeneratedWriter, tag: str, since: datetime, threshold: int
) -> Tracked | None:
    """The session's paths rebuilt from ``since`` (:func:`.replay.rebuild`), as tracked."""
    replayed = await rebuild(writer, tag, since, threshold=threshold)
    if replayed is None:
        return None
    path, rewritten = replayed
    return Tracked(path, Step(path.state), rewritten, replayed=True)


async def _late(
    writer: GeneratedWriter, latest: StoredPath, record: Mapping[str, Any], record_id: uuid.UUID
) -> bool:
    """Whether ``record`` was created before the source of ``latest``'s last waypoint (by
    time, then id: the order a replay goes in)."""
    last_at, created_at = latest.state.last_at, time_of(record)
    if last_at is None or created_at > last_at:
        return False
    if created_at < last_at:
        return True
    owner = writer.principal.owner_id
    waypoints = await repository.waypoints_of(writer.session, owner, latest.id)
    return bool(waypoints) and record_id < uuid.UUID(waypoints[-1]["source_record_id"])
