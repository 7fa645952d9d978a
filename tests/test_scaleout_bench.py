"""The scale-out and SSE benchmarks measure what they say: triggers go round the sessions,
the knee is the highest rate kept up with, and a subscriber that parses after the round
still times each frame by the read that completed it."""

from __future__ import annotations

import asyncio
import sys
import uuid
from pathlib import Path
from types import SimpleNamespace
from typing import Any

# The benchmark's modules import each other as top-level modules.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from scaleout import trigger_plan
from scaleout_report import knee

from events import Subscriber


def _corpus(sessions: dict[str, int]) -> Any:
    rows: list[dict[str, Any]] = []
    for session, messages in sessions.items():
        for n in range(messages):
            tags = ["user:message", f"session:{session}"]
            rows.append(
                {"id": uuid.uuid4(), "schema_name": "user.message.v1", "title": n, "tags": tags}
            )
        rows.append({"id": uuid.uuid4(), "schema_name": "agent.response.v1", "tags": []})
    triggers = [i for i, row in enumerate(rows) if row["schema_name"] == "user.message.v1"]
    return SimpleNamespace(rows=rows, triggers=triggers)


def test_triggers_go_round_the_sessions_each_message_once() -> None:
    corpus = _corpus({"a": 3, "b": 1, "c": 2})
    plan = trigger_plan(corpus)
    by_id = {str(row["id"]): row for row in corpus.rows}
    seen = [
        (by_id[e["breadcrumb_id"]]["tags"][1], by_id[e["breadcrumb_id"]]["title"]) for e in plan
    ]
    assert seen == [
        ("session:a", 0), ("session:b", 0), ("session:c", 0),
        ("session:a", 1), ("session:c", 1),
        ("session:a", 2),
    ]  # fmt: skip
    assert len({e["event_id"] for e in plan}) == len(plan)
    assert all(e["type"] == "breadcrumb.created" for e in plan)


def _round(rate: float, completed_per_s: float, p99: float, completed: int = 100) -> Any:
    return {
        "rate_offered": rate,
        "triggers": 100,
        "completed": completed,
        "completed_per_s": completed_per_s,
        "e2e_ms": {"p99": p99},
    }


def test_knee_is_the_highest_rate_kept_up_with() -> None:
    rounds = [_round(10, 10, 80), _round(20, 19.5, 120), _round(40, 24, 5000)]
    assert knee(rounds) == 20
    assert knee([_round(10, 6, 900)]) is None  # too slow
    assert knee([_round(10, 10, 2500)]) is None  # all done, behind a backlog
    assert knee([_round(10, 10, 80, completed=99)]) is None  # one trigger never answered


async def test_deferred_subscriber_times_each_frame_by_the_read_that_completed_it() -> None:
    arrivals: dict[str, list[float]] = {}
    ready = asyncio.Event()
    subscriber = Subscriber(arrivals, ready)
    subscriber.data_received(
        b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nd\r\n: connected\n\n\r\n"
    )
    assert ready.is_set()
    frame = b'data: {"breadcrumb_id":"x"}\n\n'
    chunk = b"%x\r\n" % len(frame) + frame + b"\r\n"
    subscriber.data_received(chunk[:20])
    first_half_read = subscriber.read[-1][0]
    subscriber.data_received(chunk[20:])
    completed_read = subscriber.read[-1][0]
    assert arrivals == {}  # nothing parsed while the round runs
    subscriber.settle()
    assert arrivals == {"x": [completed_read]}
    assert completed_read > first_half_read
