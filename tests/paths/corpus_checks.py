"""The checks every annotated debug-path corpus passes (the tuned set and the held-out
sets): enough sessions, each step a record with an expectation, the paths' annotations
agreeing with the steps. Each corpus's test module adds what is its own."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from cairn.paths.machine import Waypoint

Corpus = list[dict[str, Any]]
SCHEMAS = {"tool.call.v1", "tool.response.v1", "agent.note.v1"}
ENDS = {"resolved", "abandoned", "active"}
WAYPOINTS = {w.value for w in Waypoint}


def check_sessions(corpus: Corpus, others: Corpus | None = None) -> None:
    """At least thirty sessions with unique ids; none of their ids, and no error step's
    record, shared with ``others`` (the corpora written before)."""
    others = others or []
    ids = Counter(s["id"] for s in corpus)
    assert len(corpus) >= 30
    assert [i for i, n in ids.items() if n > 1] == []
    assert set(ids) & {s["id"] for s in others} == set()
    seen = {json.dumps(step["record"], sort_keys=True) for s in others for step in s["steps"]}
    shared = [
        (s["id"], step["record"]["title"])
        for s in corpus
        for step in s["steps"]
        if "group" in step and json.dumps(step["record"], sort_keys=True) in seen
    ]
    assert shared == []


def check_scenarios(corpus: Corpus, scenarios: set[str]) -> None:
    present = {kind for s in corpus for kind in s["kinds"]}
    assert scenarios - present == set()
    assert sum(not s["paths"] for s in corpus) >= 3  # sessions with no problem at all
    assert {p["end"] for s in corpus for p in s["paths"]} == ENDS


def check_steps(corpus: Corpus) -> None:
    for s in corpus:
        assert s["steps"], s["id"]
        for step in s["steps"]:
            record = step["record"]
            assert record["schema_name"] in SCHEMAS, s["id"]
            assert record["title"] and isinstance(record["tags"], list), s["id"]
            assert isinstance(record["context"], dict), s["id"]
            assert set(step["expect"]) <= WAYPOINTS, (s["id"], step["expect"])
            assert isinstance(step["gap"], int) and step["gap"] >= 0, s["id"]


def check_expectations(corpus: Corpus) -> None:
    """A path per expected starting error, in order, with the error's group; as many
    resolutions as resolved paths; only error, failure and pivot steps name a group."""
    for s in corpus:
        starts = [step for step in s["steps"] if step["expect"][:1] == ["error"]]
        assert [step.get("group") for step in starts] == [p["group"] for p in s["paths"]], s["id"]
        for p in s["paths"]:
            assert p["end"] in ENDS, s["id"]
        resolutions = sum("resolution" in step["expect"] for step in s["steps"])
        assert resolutions == sum(p["end"] == "resolved" for p in s["paths"]), s["id"]
        for step in s["steps"]:
            reports_error = step["expect"][:1] in (["error"], ["failure"], ["pivot"])
            assert reports_error == ("group" in step), (s["id"], step["record"]["title"])


def recurring_groups(corpus: Corpus) -> int:
    """How many error groups occur in more than one session."""
    sessions_per_group: dict[str, set[str]] = {}
    for s in corpus:
        for step in s["steps"]:
            if "group" in step:
                sessions_per_group.setdefault(step["group"], set()).add(s["id"])
    return sum(len(ids) > 1 for ids in sessions_per_group.values())
