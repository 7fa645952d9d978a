"""Stored shapes of a path: derived ids, and a path's context read back as the same path."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from cairn.context.definitions import check_definition
from cairn.paths.machine import PathState, Status, Waypoint
from cairn.paths.store import (
    NewWaypoint,
    StoredPath,
    path_context,
    path_from_context,
    path_id,
    waypoint_context,
    waypoint_id,
)
from cairn.paths.summary import Resolution

OWNER = uuid.UUID("00000000-0000-4000-8000-000000000001")
RECORD = uuid.UUID("00000000-0000-4000-8000-0000000000aa")
AT = datetime(2026, 11, 26, 10, 0, tzinfo=UTC)


def test_a_waypoint_id_is_the_same_for_a_redelivered_record() -> None:
    assert waypoint_id(OWNER, RECORD, Waypoint.ERROR) == waypoint_id(OWNER, RECORD, Waypoint.ERROR)


def test_two_waypoints_of_one_record_have_two_ids() -> None:
    assert waypoint_id(OWNER, RECORD, Waypoint.SUCCESS) != waypoint_id(
        OWNER, RECORD, Waypoint.RESOLUTION
    )


def test_a_path_id_depends_on_the_session() -> None:
    assert path_id(OWNER, "session:a", RECORD) != path_id(OWNER, "session:b", RECORD)


def test_a_resolved_path_reads_back_as_written() -> None:
    state = PathState(Status.RESOLVED, "KeyError: <id>", 3, frozenset({"pytest"}), 7, AT)
    resolution = Resolution("When x: y.", "x", "y", ("app.py",))
    ident = path_id(OWNER, "session:a", RECORD)
    path = StoredPath(ident, "session:a", state, AT, RECORD, AT, resolution)
    context = path_context(path)
    check_definition("debug.path.v1", context)
    assert path_from_context(path.id, context) == path


def test_a_waypoint_context_is_valid() -> None:
    waypoint = NewWaypoint(Waypoint.PIVOT, 2, "TypeError", RECORD, "pytest", ("a.py",), "T")
    context = waypoint_context(path_id(OWNER, "session:a", RECORD), waypoint)
    check_definition("debug.waypoint.v1", context)
    assert context["type"] == "pivot" and context["sequence"] == 2
    with_session = waypoint_context(path_id(OWNER, "session:a", RECORD), waypoint, "session:a")
    check_definition("debug.waypoint.v1", with_session)
    assert with_session["session"] == "session:a"  # the stream's path_waypoint frame reads it
