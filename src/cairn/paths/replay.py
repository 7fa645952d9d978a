"""Rebuilding a session's paths from its records, for a record that arrived after later
ones of its session were tracked.

The replay goes through the session's records from the earliest affected point (the late
record, or the start of the first path it reaches back into) in the order they were
created, applying each to the path as :mod:`.tracking` would have, had it seen them in
that order. Waypoint ids are derived from (source record, type), so a waypoint the replay
produces again keeps its record (rewritten only if its sequence or path changed); the
paths and waypoints it no longer produces are deleted. Abandoned paths and paths an agent
started or resolved explicitly are not replayed (:func:`_settled`): what came before them
stays as it was, and a record older than their last waypoint is not tracked.

The caller holds the session's lock.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from prometheus_client import Counter

from cairn.breadcrumbs.generated import GeneratedWriter
from cairn.edges import repository as edges
from cairn.edges.builder import CAUSAL
from cairn.paths import repository
from cairn.paths.machine import RESOLUTION_THRESHOLD, Status, Waypoint
from cairn.paths.signals import Kind, classify
from cairn.paths.steps import apply, is_active, tracked
from cairn.paths.store import (
    NewWaypoint,
    StoredPath,
    link_files,
    link_waypoints,
    path_context,
    path_from_context,
    waypoint_context,
    waypoint_id,
    write_path,
    write_waypoints,
)
from cairn.paths.summary import WaypointNote, summarise

REPLAYS = Counter(
    "cairn_debug_path_replays_total",
    "Session replays of debug paths: a record arrived after later ones of its session",
)
REPLAYED_RECORDS = Counter(
    "cairn_debug_path_replayed_records_total", "Records the debug path replays went through"
)


def _settled(path: StoredPath) -> bool:
    """Not replayed: an abandoned path (the time it closed cannot be replayed) and one an
    agent started or resolved by hand (its waypoints have no records to replay)."""
    return path.state.status is Status.ABANDONED or path.explicit


@dataclass
class _Replayed:
    path: StoredPath
    waypoints: list[NewWaypoint] = field(default_factory=list)


async def rebuild(
    writer: GeneratedWriter, session_tag: str, late_at: datetime, *,
    threshold: int = RESOLUTION_THRESHOLD,
) -> tuple[StoredPath, tuple[uuid.UUID, ...]] | None:  # fmt: skip
    """Replay the session's records from the paths that end at or after ``late_at``; the
    session's latest path and the waypoints written. None: nothing to replay (the records
    before its latest abandoned path are closed)."""
    session, owner = writer.session, writer.principal.owner_id
    found = await repository.paths_since(session, owner, session_tag, late_at)
    paths = [path_from_context(*row) for row in found]
    closed = [p.state.last_at for p in paths if _settled(p)]
    frozen = max((at for at in closed if at is not None), default=None)
    if frozen is not None and late_at <= frozen:
        return None
    affected = [
        p for p in paths
        if not _settled(p)
        and (frozen is None or p.started_at > frozen)
        and (p.state.last_at is None or p.state.last_at >= late_at)
    ]  # fmt: skip
    since = min([late_at, *(p.started_at for p in affected)])
    records = await repository.session_records(session, owner, session_tag, since)
    REPLAYS.inc()
    REPLAYED_RECORDS.inc(len(records))
    produced = _replay(owner, records, threshold)
    if not produced:
        return None
    before = {p.id: path_context(p) for p in affected}
    kept = {p.id: p for p in affected}
    stale: dict[uuid.UUID, dict[str, Any]] = {}
    for path in affected:
        for context in await repository.waypoints_of(session, owner, path.id):
            source = context.get("source_record_id")
            if source:  # a waypoint of an explicit call has none (and is not replayed)
                kind = Waypoint(context["type"])
                stale[waypoint_id(owner, uuid.UUID(source), kind)] = dict(context)
    written: list[uuid.UUID] = []
    moved: list[tuple[uuid.UUID, uuid.UUID]] = []  # waypoint → the path it left
    for replayed in produced:
        path = _keeping_summary(replayed.path, kept.get(replayed.path.id))
        resolved = path.state.status is Status.RESOLVED
        changed = before.pop(path.id, None) != path_context(path)
        if changed and not resolved:  # the path's event before its waypoints', as in track
            await write_path(writer, path)
        pairs = []
        for waypoint in replayed.waypoints:
            source = waypoint.source_record_id
            assert source is not None  # a replayed waypoint comes from a record
            ident = waypoint_id(owner, source, waypoint.kind)
            old = stale.pop(ident, None)
            if old != waypoint_context(path.id, waypoint, session_tag):
                written += await write_waypoints(writer, path.id, [waypoint], session=session_tag)
            if old is not None and old["path_id"] != str(path.id):
                moved.append((ident, uuid.UUID(old["path_id"])))
            pairs.append((source, ident))
        if changed and resolved:
            await write_path(writer, path)
        await link_waypoints(writer, path.id, pairs)
        await link_files(writer, path.id, [f for w in replayed.waypoints for f in w.files])
    await edges.delete_edges(session, owner, moved, CAUSAL)
    for gone in [*stale, *before]:  # no longer produced: their edges go with them
        await writer.delete(gone)
    return produced[-1].path, tuple(written)


def _keeping_summary(path: StoredPath, old: StoredPath | None) -> StoredPath:
    """A path resolved again keeps what the LLM summariser made of it (it is asked once)."""
    if old is None or old.summariser is None or path.state.status is not Status.RESOLVED:
        return path
    return replace(path, resolution=old.resolution, summariser=old.summariser,
                   replaced=old.replaced)  # fmt: skip


def _replay(owner: uuid.UUID, records: list[Any], threshold: int) -> list[_Replayed]:
    """The paths ``records`` make, in order, from no active path."""
    paths: list[_Replayed] = []
    for record in records:
        if not tracked(record):
            continue
        signal = classify(record)
        if signal.kind is Kind.NONE:
            continue
        current = paths[-1].path if paths else None
        applied = apply(owner, current if is_active(current) else None, record, signal,
                        threshold=threshold)  # fmt: skip
        if applied is None:
            continue
        if applied.step.started:
            paths.append(_Replayed(applied.path))
        replayed = paths[-1]
        replayed.waypoints += applied.waypoints
        replayed.path = applied.path
        if applied.step.resolved:
            notes = [
                WaypointNote(w.kind, w.summary, w.command, w.files) for w in replayed.waypoints
            ]
            replayed.path = replace(applied.path, resolution=summarise(notes))
    return paths
