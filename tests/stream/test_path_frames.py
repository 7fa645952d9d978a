"""Debug-path frames made from record events, without NATS: which event makes which frame,
how the fan-out, the replay and RCRT's framing send them, and where the event's id goes."""

from __future__ import annotations

import json
import uuid
from typing import Any

from cairn.events.selectors import Selector
from cairn.stream.compat import rcrt_frame
from cairn.stream.feed import Fanout
from cairn.stream.paths import last_frame, path_frame
from cairn.stream.sse import SseConnection

OWNER, OTHER = uuid.uuid4(), uuid.uuid4()
PATH = str(uuid.uuid4())


def _path_event(kind: str = "created", status: str = "active", **context: Any) -> dict[str, Any]:
    return {
        "type": f"breadcrumb.{kind}",
        "breadcrumb_id": PATH,
        "owner_id": str(OWNER),
        "version": 1 if kind == "created" else 3,
        "schema_name": "debug.path.v1",
        "tags": ["debug:path"],
        "context": {
            "session": "session:s1",
            "status": status,
            "signature": "AssertionError: assert <n> == <n>",
            "sequence": 1,
            "started_at": "2026-11-26T10:00:00+00:00",
            "trigger_record_id": str(uuid.uuid4()),
            **context,
        },
    }


def _waypoint_event(kind: str = "created", session: str = "session:s1") -> dict[str, Any]:
    source = str(uuid.uuid4())
    return {
        "type": f"breadcrumb.{kind}",
        "breadcrumb_id": str(uuid.uuid4()),
        "owner_id": str(OWNER),
        "version": 1,
        "schema_name": "debug.waypoint.v1",
        "tags": ["debug:waypoint", f"path:{PATH}"],
        "context": {
            "path_id": PATH,
            "session": session,
            "sequence": 2,
            "type": "attempt",
            "summary": "Edit src/cart.py line 10",
            "source_record_id": source,
            "command": None,
            "files": ["src/cart.py"],
            "signature": None,
        },
    }


def test_a_created_active_path_is_path_started() -> None:
    frame = path_frame(_path_event())
    assert frame is not None and frame["type"] == "path_started"
    assert frame["path_id"] == PATH and frame["session"] == "session:s1"
    assert frame["status"] == "active" and frame["signature"].startswith("AssertionError")
    assert "kiss_summary" not in frame


def test_an_active_path_rewritten_makes_no_frame() -> None:
    assert path_frame(_path_event("updated", sequence=4)) is None


def test_a_resolved_path_carries_its_summary() -> None:
    summary = {"kiss_summary": "When x: y.", "root_cause": "x", "what_fixed_it": "y"}
    frame = path_frame(_path_event("updated", "resolved", **summary))
    assert frame is not None and frame["type"] == "path_resolved" and frame["version"] == 3
    assert {key: frame[key] for key in summary} == summary


def test_an_abandoned_path_is_path_abandoned() -> None:
    frame = path_frame(_path_event("updated", "abandoned", abandon_reason="idle 30 min"))
    assert frame is not None and frame["type"] == "path_abandoned"
    assert frame["abandon_reason"] == "idle 30 min" and "kiss_summary" not in frame


def test_a_created_waypoint_is_path_waypoint() -> None:
    event = _waypoint_event()
    frame = path_frame(event)
    assert frame is not None and frame["type"] == "path_waypoint"
    assert frame["path_id"] == PATH and frame["waypoint_id"] == event["breadcrumb_id"]
    assert frame["session"] == "session:s1" and frame["sequence"] == 2
    assert frame["waypoint_type"] == "attempt" and frame["summary"].startswith("Edit")
    assert frame["source_record_id"] == event["context"]["source_record_id"]


def test_other_events_make_no_path_frame() -> None:
    assert path_frame(_waypoint_event("updated")) is None
    assert path_frame({**_path_event(), "type": "breadcrumb.deleted"}) is None
    assert path_frame({**_path_event(), "schema_name": "tool.response.v1"}) is None
    assert path_frame({**_path_event(), "context": "not an object"}) is None


class Chunks:
    """A listener that keeps the bytes the fan-out gives it."""

    def __init__(self, owner: uuid.UUID, selector: Selector, *, paths: bool = True) -> None:
        self.owner_id, self.selector, self.paths = str(owner), selector, paths
        self.granted: frozenset[str] = frozenset({PATH})
        self.chunks: list[tuple[int, bytes]] = []

    def deliver(self, seq: int, frame: bytes) -> None:
        self.chunks.append((seq, frame))


def _frames(chunk: bytes) -> list[tuple[str | None, dict[str, Any]]]:
    """(id, data) of each frame in a chunk."""
    frames = []
    for block in chunk.decode().strip("\n").split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.split("\n"))
        frames.append((fields.get("id"), json.loads(fields["data"])))
    return frames


def _fed(*listeners: Chunks, events: list[dict[str, Any]]) -> None:
    feed = Fanout()
    for listener in listeners:
        feed.attach(listener)
    for seq, event in enumerate(events, start=1):
        feed.dispatch(seq, json.dumps(event).encode())


def test_the_path_frame_goes_before_the_record_frame_and_only_the_last_has_the_id() -> None:
    everything = Chunks(OWNER, Selector())
    _fed(everything, events=[_path_event()])
    ((seq, chunk),) = everything.chunks
    (path_id, path), (record_id, record) = _frames(chunk)
    assert (path_id, record_id) == (None, "1")
    assert path["type"] == "path_started" and path["seq"] == 1
    assert record["type"] == "breadcrumb.created" and seq == 1


def test_a_path_frame_alone_carries_the_events_id() -> None:
    """A filter the path record does not match: the path frame is all the event sends."""
    session = Chunks(OWNER, Selector(session="s1"))
    _fed(session, events=[_waypoint_event()])
    ((_, chunk),) = session.chunks
    ((frame_id, frame),) = _frames(chunk)
    assert frame_id == "1" and frame["type"] == "path_waypoint"


def test_path_frames_follow_the_session_filter_and_the_wish() -> None:
    elsewhere = Chunks(OWNER, Selector(session="s2"))
    unasked = Chunks(OWNER, Selector(session="s1"), paths=False)
    records = Chunks(OWNER, Selector(), paths=False)
    _fed(elsewhere, unasked, records, events=[_path_event(), _waypoint_event()])
    assert elsewhere.chunks == [] and unasked.chunks == []
    assert [_frames(chunk)[0][1]["type"] for _, chunk in records.chunks] == [
        "breadcrumb.created",
        "breadcrumb.created",
    ]


def test_another_tenant_gets_no_path_frames_even_with_a_grant() -> None:
    """``Chunks`` holds a grant on the path record: its record events, not its path frames."""
    other = Chunks(OTHER, Selector())
    _fed(other, events=[_path_event()])
    ((_, chunk),) = other.chunks
    assert [data["type"] for _, data in _frames(chunk)] == ["breadcrumb.created"]


def test_the_replay_frames_an_event_as_the_feed_does() -> None:
    feed, event = Fanout(), _path_event()
    live = Chunks(OWNER, Selector())
    _fed(live, events=[event])
    replaying = SseConnection(feed, Selector(), OWNER, queue_size=5, paths=True)
    assert replaying._frame(1, json.dumps(event).encode()) == live.chunks[0][1]
    other = SseConnection(
        feed, Selector(), OTHER, queue_size=5, paths=True, granted=frozenset({PATH})
    )
    assert [d["type"] for _, d in _frames(other._frame(1, json.dumps(event).encode()) or b"")] == [
        "breadcrumb.created"
    ]


def test_rcrt_framing_retypes_the_record_frame_and_keeps_the_path_frame() -> None:
    everything = Chunks(OWNER, Selector())
    _fed(everything, events=[_path_event()])
    chunk = rcrt_frame(1, everything.chunks[0][1])
    assert chunk is not None
    assert [(i, d["type"]) for i, d in _frames(chunk)] == [
        (None, "path_started"),
        ("1", "breadcrumb.updated"),
    ]


def test_last_frame_splits_a_chunk_before_its_last_frame() -> None:
    assert last_frame(b"id: 1\ndata: {}\n\n") == (b"", b"id: 1\ndata: {}\n\n")
    assert last_frame(b"data: {}\n\nid: 1\ndata: {}\n\n") == (
        b"data: {}\n\n",
        b"id: 1\ndata: {}\n\n",
    )
