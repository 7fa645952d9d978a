"""The debug-paths benchmark's corpus is fit to measure with: enough sessions, every kind of
scenario, every step and session annotated with values the machine could produce, and the
stored JSON the same as its builder writes (benchmarks/quality/debug_paths.py)."""

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
    recurring_groups,
)

# The benchmark's modules import each other as top-level modules.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "quality"))
from debug_paths import replay
from debug_paths_corpus import OUT, sessions

SCENARIOS = {
    "pytest",
    "assertion",
    "import-error",
    "fixture",
    "npm",
    "jest",
    "cargo",
    "build",
    "test",
    "traceback",
    "http-500",
    "curl",
    "httpx",
    "flaky",
    "pivot",
    "abandoned",
    "no-problem",
    "hypothesis",
    "discovery",
    "revert",
    "git",
    "recurring",
    "two-paths",
}


@pytest.fixture(scope="module")
def corpus() -> list[dict[str, Any]]:
    return list(json.loads(OUT.read_text()))


def test_the_stored_corpus_is_what_its_builder_writes(corpus: list[dict[str, Any]]) -> None:
    assert corpus == json.loads(json.dumps(sessions(), ensure_ascii=False))


def test_at_least_thirty_sessions_with_unique_ids(corpus: list[dict[str, Any]]) -> None:
    check_sessions(corpus)


def test_every_kind_of_scenario_is_present(corpus: list[dict[str, Any]]) -> None:
    check_scenarios(corpus, SCENARIOS)


def test_every_step_is_a_record_with_an_expectation(corpus: list[dict[str, Any]]) -> None:
    check_steps(corpus)


def test_session_expectations_agree_with_the_steps(corpus: list[dict[str, Any]]) -> None:
    check_expectations(corpus)


def test_recurring_errors_recur_across_sessions(corpus: list[dict[str, Any]]) -> None:
    assert recurring_groups(corpus) >= 4


def test_the_replay_follows_a_scripted_session() -> None:
    """The benchmark's replay itself: an error, a fix, three green runs resolve it."""
    fail = "FAILED tests/test_a.py::test_x - assert 1 == 2\n1 failed in 0.01s"
    step = [
        {
            "record": {
                "title": "ran pytest",
                "context": {"command": "pytest", "exit_code": 1, "output": fail},
            },
            "gap": 1,
        },
        {"record": {"title": "edit a.py", "context": {"tool": "edit_file"}}, "gap": 1},
        *[
            {
                "record": {
                    "title": "ran pytest",
                    "context": {"command": "pytest", "exit_code": 0, "output": "3 passed in 0.01s"},
                },
                "gap": 1,
            }
        ]
        * 3,
    ]
    outcome = replay({"id": "x", "paths": [], "steps": step})
    assert [s["got"] for s in outcome.steps] == [
        ["error"],
        ["attempt"],
        ["success"],
        ["success"],
        ["success", "resolution"],
    ]
    assert [p.end for p in outcome.paths] == ["resolved"]
    assert outcome.paths[0].fix == "edit a.py (`edit_file`)"


def test_every_resolved_session_recurs_once_with_other_details() -> None:
    """The prior-fix measure's recurrences (debug_paths_recurrences.py): stored as written,
    one per session that ends resolved, each an error of the group that session resolved,
    in other words than the session's own (another machine, checkout or run)."""
    from debug_paths_corpus import RECURRENCES, RECURRENCES_OUT, UNRELATED, UNRELATED_OUT

    from cairn.paths.signals import Kind, classify

    assert json.loads(RECURRENCES_OUT.read_text()) == json.loads(json.dumps(RECURRENCES))
    assert json.loads(UNRELATED_OUT.read_text()) == json.loads(json.dumps(UNRELATED))
    assert all(classify(record).kind is Kind.ERROR for record in UNRELATED)
    by_id = {s["id"]: s for s in sessions()}
    resolved = {sid for sid, s in by_id.items() if any(p["end"] == "resolved" for p in s["paths"])}
    assert sorted(r["of"] for r in RECURRENCES) == sorted(resolved)
    for recurrence in RECURRENCES:
        session = by_id[recurrence["of"]]
        assert recurrence["group"] in {
            p["group"] for p in session["paths"] if p["end"] == "resolved"
        }
        assert classify(recurrence["record"]).kind is Kind.ERROR
        outputs = {step["record"]["context"].get("output") for step in session["steps"]}
        assert recurrence["record"]["context"]["output"] not in outputs
