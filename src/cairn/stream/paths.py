"""The debug-path frames of ``/events/stream?paths=true``: ``path_started``,
``path_waypoint``, ``path_resolved`` and ``path_abandoned``, made from the record events of
``debug.path.v1`` and ``debug.waypoint.v1`` records (their context is in the event: no
read of the database per event).

- a path record created ``active`` → ``path_started``;
- a waypoint record created → ``path_waypoint``;
- a path record written ``resolved`` or ``abandoned`` → ``path_resolved`` /
  ``path_abandoned``: once when it closes, again if the closed path is rewritten (a
  summariser's better summary). ``version`` (the path record's) tells them apart.

Resumption: a path frame comes from one stream event N and goes out in the same chunk as
N's record frame (when the connection's filter matches that), *before* it and without an
``id:`` line; only the chunk's last frame carries ``id: N``. A client cut off between the two
still holds the previous id, so it is sent the path frame again on resume (never lost); a
client cut off after ``id: N`` has both. A path frame on its own carries ``id: N``. Every path
frame also says ``"seq": N`` in its data.

Path frames are the subscriber's own tenant's only (an ACL grant on another tenant's record
gives its record events, not path frames), and of the ``session`` filter's session when one
is given; the other filters select record events only.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from sse_starlette import ServerSentEvent

from cairn.events.selectors import Selector
from cairn.paths.repository import PATH_SCHEMA, WAYPOINT_SCHEMA
from cairn.stream.frames import SEPARATOR, frame_bytes

CREATED, UPDATED = "breadcrumb.created", "breadcrumb.updated"
_CLOSED = {"resolved": "path_resolved", "abandoned": "path_abandoned"}
_RESOLUTION = ("kiss_summary", "root_cause", "what_fixed_it", "files")


def path_frame(event: Mapping[str, Any]) -> dict[str, Any] | None:
    """The path frame's data (without ``seq``) an event makes, if any."""
    schema, kind = event.get("schema_name"), event.get("type")
    context = event.get("context")
    if schema not in (PATH_SCHEMA, WAYPOINT_SCHEMA) or not isinstance(context, Mapping):
        return None
    if schema == WAYPOINT_SCHEMA:
        return _waypoint(event, context) if kind == CREATED else None
    status = context.get("status")
    if kind == CREATED and status == "active":
        frame_type = "path_started"
    elif kind in (CREATED, UPDATED) and isinstance(status, str) and status in _CLOSED:
        frame_type = _CLOSED[status]
    else:
        return None
    frame = {
        "type": frame_type,
        "path_id": event.get("breadcrumb_id"),
        "version": event.get("version"),
        "session": context.get("session"),
        "status": status,
        "signature": context.get("signature"),
        "sequence": context.get("sequence"),
        "started_at": context.get("started_at"),
        "trigger_record_id": context.get("trigger_record_id"),
    }
    if status == "resolved":
        frame |= {key: context.get(key) for key in _RESOLUTION}
        frame["resolved_at"] = context.get("resolved_at")
    elif status == "abandoned":
        frame["abandon_reason"] = context.get("abandon_reason")
    return frame


def _waypoint(event: Mapping[str, Any], context: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "type": "path_waypoint",
        "path_id": context.get("path_id"),
        "waypoint_id": event.get("breadcrumb_id"),
        "session": context.get("session"),
        "sequence": context.get("sequence"),
        "waypoint_type": context.get("type"),
        "summary": context.get("summary"),
        "source_record_id": context.get("source_record_id"),
        "signature": context.get("signature"),
        "command": context.get("command"),
        "files": context.get("files") or [],
    }


def wanted(selector: Selector, frame: Mapping[str, Any]) -> bool:
    """Whether a connection with ``selector`` gets this path frame: its session's, if any."""
    return selector.session is None or frame.get("session") == f"session:{selector.session}"


class Framing:
    """One event's frames, each encoded at most once however many connections take it."""

    __slots__ = ("_alone", "_before", "_record", "data", "path", "seq")

    def __init__(self, seq: int, data: bytes, path: dict[str, Any] | None) -> None:
        self.seq, self.data, self.path = seq, data, path
        self._record: bytes | None = None
        self._alone: bytes | None = None
        self._before: bytes | None = None

    @property
    def record(self) -> bytes:
        if self._record is None:
            self._record = frame_bytes(self.seq, self.data)
        return self._record

    def with_path(self, matched: bool) -> bytes:
        """The path frame, then the record frame if the connection's filter ``matched`` it."""
        assert self.path is not None
        if matched:
            if self._before is None:
                self._before = _path_bytes(None, self.seq, self.path) + self.record
            return self._before
        if self._alone is None:
            self._alone = _path_bytes(self.seq, self.seq, self.path)
        return self._alone


def _path_bytes(frame_id: int | None, seq: int, path: Mapping[str, Any]) -> bytes:
    data = json.dumps({**path, "seq": seq}, separators=(",", ":"), ensure_ascii=False)
    ident = None if frame_id is None else str(frame_id)
    return ServerSentEvent(data, id=ident, sep=SEPARATOR).encode()


def connection_frame(
    framing: Framing, event: Mapping[str, Any], selector: Selector, *, paths: bool
) -> bytes | None:
    """What one connection of the event's tenant is sent for it (None: nothing)."""
    matched = selector.matches(event)
    if paths and framing.path is not None and wanted(selector, framing.path):
        return framing.with_path(matched)
    return framing.record if matched else None


def last_frame(chunk: bytes) -> tuple[bytes, bytes]:
    """A chunk split before its last frame (the one with the event's id): the path frame
    that went before it, if any, and that frame. JSON data holds no raw line break, so a
    blank line only ever ends a frame."""
    head, sep, _ = chunk.rstrip(b"\n").rpartition(b"\n\n")
    cut = len(head) + len(sep)
    return chunk[:cut], chunk[cut:]
