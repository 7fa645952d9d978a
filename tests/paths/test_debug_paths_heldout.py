"""The held-out debug-paths corpus is fit to measure with: the stored JSON is what its builder
writes, it is new (no session or record shared with the corpus the rules were tuned on), it
covers the ecosystems it was written for, and every session's annotations agree with its
steps. Its scores are the benchmark's business, not a test's."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.paths.corpus_checks import (
    check_expectations,
    check_scenarios,
    check_sessions,
    check_steps,
)

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


@pytest.fixture(scope="module")
def corpus() -> list[dict[str, Any]]:
    return list(json.loads(OUT.read_text()))


def test_the_stored_corpus_is_what_its_builder_writes(corpus: list[dict[str, Any]]) -> None:
    assert corpus == json.loads(json.dumps(sessions(), ensure_ascii=False))


def test_at_least_thirty_new_sessions(corpus: list[dict[str, Any]]) -> None:
    """No session id and no error output shared with the corpus the rules were tuned on."""
    check_sessions(corpus, json.loads(TUNED.read_text()))


def test_every_kind_of_scenario_is_present(corpus: list[dict[str, Any]]) -> None:
    check_scenarios(corpus, SCENARIOS)


def test_every_step_is_a_record_with_an_expectation(corpus: list[dict[str, Any]]) -> None:
    check_steps(corpus)


def test_session_expectations_agree_with_the_steps(corpus: list[dict[str, Any]]) -> None:
    """Besides the common checks: a resolution comes with a success."""
    check_expectations(corpus)
    for s in corpus:
        for step in s["steps"]:
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
