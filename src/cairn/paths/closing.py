"""Closing a path by hand or by time: one way to abandon it, whoever does (the periodic
sweep, an explicit abandon)."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from cairn.breadcrumbs.generated import GeneratedWriter
from cairn.paths.machine import Status
from cairn.paths.store import StoredPath, write_path

REASON_CHARS = 1000  # the schema's maxLength of abandon_reason


async def abandon_path(
    writer: GeneratedWriter, stored: StoredPath, now: datetime, reason: str | None
) -> StoredPath:
    """Write ``stored`` as abandoned at ``now`` for ``reason``; the path as written. The
    caller holds the session's lock (:func:`cairn.paths.repository.lock_session`) and has
    checked, under it, that the path is still the session's active one. No waypoint:
    giving up is not a step of the path."""
    state = replace(stored.state, status=Status.ABANDONED, successes=0)
    clipped = reason[:REASON_CHARS] if reason else None
    closed = replace(stored, state=state, abandoned_at=now, abandon_reason=clipped)
    await write_path(writer, closed)
    return closed
