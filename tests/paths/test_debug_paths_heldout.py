"""The held-out debug-paths corpus is fit to measure with: the stored JSON is what its builder
writes, it is new (no session or record shared with the corpus the rules were tuned on), it
covers the ecosystems it was written for, and every session's annotations agree with its
steps. Its scores are the benchmark's business, not a test's."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from cairn.paths.machine import Waypoint

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "quality"))
from debug_paths_corpus import OUT as TUNED
from debug_paths_heldout import OUT, sessions

SCENARIOS = {
    "go",
    "vitest",
    "jest",
    "rspec",
    "gradle",
    "junit",
    "maven",
    "mypy",
    "typescript",
    "eslint",
    "docker",
    "terraform",
    "kubectl",
    "segfault",
    "make",
    "linker",
    "migration",
    "timeout",
    "flaky",
    "pivot",
    "interleaved",
    "abandoned",
    "no-problem",
    "hypothesis",
    "discovery",
    "revert",
    "noise",
    "mcp-tool",
    "recurring",
    "two-paths",
}
SCHEMAS = {"tool.call.v1", "tool.response.v1", "agent.note.v1"}
ENDS = {"resolved", "abandoned", "active"}
WAYPOINTS = {w.value for w in Waypoint}


@pytest.fixture(scope="module")
def corpus() -> list[dict[str, Any]]:
    return list(json.loads(OUT.read_text()))


def test_the_stored_corpus_is_what_its_builder_writes(corpus: list[dict[str, Any]]) -> None:
    assert corpus == json.loads(json.dumps(sessions(), ensure_ascii=False))


def test_at_least_thirty_new_sessions(corpus: list[dict[str, Any]]) -> None:
    """No session id and no error output shared with the corpus the rules were tuned on."""
    tuned = json.loads(TUNED.read_text())
    ids = Counter(s["id"] for s in corpus)
    assert len(corpus) >= 30
    assert [i for i, n in ids.items() if n > 1] == []
    assert set(ids) & {s["id"] for s in tuned} == set()
    # Error outputs are all new (a clean `tsc --noEmit` prints nothing anywhere).
    seen = {json.dumps(step["record"], sort_keys=True) for s in tuned for step in s["steps"]}
    shared = [
        (s["id"], step["record"]["title"])
        for s in corpus
        for step in s["steps"]
        if "group" in step and json.dumps(step["record"], sort_keys=True) in seen
    ]
    assert shared == []


def test_every_kind_of_scenario_is_present(corpus: list[dict[str, Any]]) -> None:
    present = {kind for s in corpus for kind in s["kinds"]}
    assert SCENARIOS - present == set()
    assert sum(not s["paths"] for s in corpus) >= 3
    assert {p["end"] for s in corpus for p in s["paths"]} == ENDS


def test_every_step_is_a_record_with_an_expectation(corpus: list[dict[str, Any]]) -> None:
    for s in corpus:
        assert s["steps"], s["id"]
        for step in s["steps"]:
            record = step["record"]
            assert record["schema_name"] in SCHEMAS, s["id"]
            assert record["title"] and isinstance(record["tags"], list), s["id"]
            assert isinstance(record["context"], dict), s["id"]
            assert set(step["expect"]) <= WAYPOINTS, (s["id"], step["expect"])
            assert isinstance(step["gap"], int) and step["gap"] >= 0, s["id"]


def test_session_expectations_agree_with_the_steps(corpus: list[dict[str, Any]]) -> None:
    """A path per expected starting error, in order and with its group; a resolved path has
    its resolving step; only error, failure and pivot steps name an error group; a resolution
    comes with a success."""
    for s in corpus:
        starts = [step for step in s["steps"] if step["expect"][:1] == ["error"]]
        assert [step.get("group") for step in starts] == [p["group"] for p in s["paths"]], s["id"]
        resolutions = sum("resolution" in step["expect"] for step in s["steps"])
        assert resolutions == sum(p["end"] == "resolved" for p in s["paths"]), s["id"]
        for step in s["steps"]:
            reports_error = step["expect"][:1] in (["error"], ["failure"], ["pivot"])
            assert reports_error == ("group" in step), (s["id"], step["record"]["title"])
            if "resolution" in step["expect"]:
                assert step["expect"] == ["success", "resolution"], s["id"]


def test_no_waypoint_outside_a_path(corpus: list[dict[str, Any]]) -> None:
    """Steps before the first error, after a resolution and in sessions with no problem
    record nothing; an abandoning gap is over the benchmark's 30 idle minutes."""
    for s in corpus:
        open_ = False
        for step in s["steps"]:
            if step["gap"] > 30:
                open_ = False
            if step["expect"][:1] == ["error"]:
                assert not open_, (s["id"], step["record"]["title"])
                open_ = True
            elif not open_:
                assert step["expect"] == [], (s["id"], step["record"]["title"])
            if "resolution" in step["expect"]:
                open_ = False
        abandoned = [p for p in s["paths"] if p["end"] == "abandoned"]
        if abandoned and abandoned[-1] is s["paths"][-1]:
            assert s.get("quiet", 5) > 30, s["id"]


def test_recurring_errors_recur_across_sessions(corpus: list[dict[str, Any]]) -> None:
    sessions_per_group: dict[str, set[str]] = {}
    for s in corpus:
        for step in s["steps"]:
            if "group" in step:
                sessions_per_group.setdefault(step["group"], set()).add(s["id"])
    assert sum(len(ids) > 1 for ids in sessions_per_group.values()) >= 6
