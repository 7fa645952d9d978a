"""The second held-out debug-paths corpus is fit to measure with: the stored JSON is what its
builder writes, it is new (no session id and no error record shared with any other corpus
beside it), it covers the ecosystems and situations it was written for, and every session's
annotations agree with its own steps. Its scores are the benchmark's business, not a test's."""

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
from debug_paths_heldout2 import OUT, sessions

SCENARIOS = {
    # Python
    "pytest",
    "fixture",
    "mypy",
    "ruff",
    "pip",
    "poetry",
    "django",
    "flask",
    "traceback",
    # JavaScript / TypeScript
    "npm",
    "pnpm",
    "next",
    "playwright",
    "node",
    "unhandled-rejection",
    # Rust, Go, JVM, native
    "cargo",
    "borrow-checker",
    "clippy",
    "panic",
    "go",
    "gradle",
    "kotlin",
    "maven",
    "junit",
    "cmake",
    "linker",
    # Infrastructure, databases, HTTP
    "ansible",
    "helm",
    "systemd",
    "nginx",
    "ssh",
    "psql",
    "deadlock",
    "curl",
    "httpie",
    "http-4xx",
    "http-500",
    "mcp-tool",
    # Situations
    "flaky",
    "pivot",
    "two-pivots",
    "abandoned",
    "no-problem",
    "unrelated-success",
    "revert",
    "hypothesis",
    "discovery",
    "recurring",
    "recurring-same-session",
    "two-paths",
    "noise",
}
PROBLEMS = (["error"], ["failure"], ["pivot"])
IDLE_MINUTES = 30  # the benchmark's abandon-after


@pytest.fixture(scope="module")
def corpus() -> list[dict[str, Any]]:
    return list(json.loads(OUT.read_text()))


@pytest.fixture(scope="module")
def others() -> list[dict[str, Any]]:
    """Every other session corpus stored beside this one (the tuned set and the first
    held-out set; the prior-fix measure's recurrences and unrelated errors are not sessions)."""
    corpora = [p for p in sorted(OUT.parent.glob("*.json")) if p != OUT]
    found = [s for p in corpora for s in json.loads(p.read_text()) if "id" in s]
    assert found, "no other corpus to compare with"
    return found


def test_the_stored_corpus_is_what_its_builder_writes(corpus: list[dict[str, Any]]) -> None:
    assert corpus == json.loads(json.dumps(sessions(), ensure_ascii=False))


def test_at_least_thirty_new_sessions(
    corpus: list[dict[str, Any]], others: list[dict[str, Any]]
) -> None:
    check_sessions(corpus, others)


def test_every_kind_of_scenario_is_present(corpus: list[dict[str, Any]]) -> None:
    check_scenarios(corpus, SCENARIOS)


def test_every_step_is_a_record_with_an_expectation(corpus: list[dict[str, Any]]) -> None:
    check_steps(corpus)
    for s in corpus:
        for step in s["steps"]:
            assert set(step) <= {"record", "expect", "gap", "group", "judgement"}, s["id"]
            if "judgement" in step:
                assert isinstance(step["judgement"], str) and step["judgement"], s["id"]


def test_session_expectations_agree_with_the_steps(corpus: list[dict[str, Any]]) -> None:
    """Besides the common checks: a resolution comes with a success."""
    check_expectations(corpus)
    for s in corpus:
        for step in s["steps"]:
            assert (step["expect"] in PROBLEMS) == ("group" in step), (s["id"], step["record"])
            if "resolution" in step["expect"]:
                assert step["expect"] == ["success", "resolution"], s["id"]


def test_waypoints_follow_the_state_machine(corpus: list[dict[str, Any]]) -> None:
    """Nothing is recorded outside a path (before the first error, after a resolution, after
    an abandoning gap); a failure repeats the error in hand and a pivot changes it; an
    abandoned path ends on a gap or quiet over the idle time, an active one does not."""
    for s in corpus:
        ends: list[str] = []
        current: str | None = None
        for step in s["steps"]:
            where = (s["id"], step["record"]["title"])
            if current is not None and step["gap"] > IDLE_MINUTES:
                ends.append("abandoned")
                current = None
            kind = step["expect"][:1]
            if kind == ["error"]:
                assert current is None, where
                current = step["group"]
            elif current is None:
                assert step["expect"] == [], where
            elif kind == ["failure"]:
                assert step["group"] == current, where
            elif kind == ["pivot"]:
                assert step["group"] != current, where
                current = step["group"]
            if "resolution" in step["expect"]:
                ends.append("resolved")
                current = None
        if current is not None:
            ends.append("abandoned" if s.get("quiet", 5) > IDLE_MINUTES else "active")
        assert ends == [p["end"] for p in s["paths"]], s["id"]


def test_each_fix_is_named_by_the_last_attempt_before_the_success_run(
    corpus: list[dict[str, Any]],
) -> None:
    """A resolved path's ``fix`` is in the title of its last attempt (or revert) before the
    run of successes that resolved it, the step a "what fixed it" would quote."""
    for s in corpus:
        resolved = iter(p for p in s["paths"] if p["end"] == "resolved")
        steps = s["steps"]
        for end, step in enumerate(steps):
            if "resolution" not in step["expect"]:
                continue
            want = next(resolved)
            problem = max(i for i in range(end) if steps[i]["expect"] in PROBLEMS)
            run_start = next(
                i for i in range(problem, end + 1) if steps[i]["expect"][:1] == ["success"]
            )
            acts = [
                steps[i]["record"]["title"]
                for i in range(problem, run_start)
                if steps[i]["expect"] in (["attempt"], ["revert"])
            ]
            assert acts, s["id"]
            assert want["fix"].lower() in acts[-1].lower(), (s["id"], want["fix"], acts[-1])


def test_recurring_errors_recur_across_sessions(corpus: list[dict[str, Any]]) -> None:
    sessions_per_group: dict[str, set[str]] = {}
    for s in corpus:
        for step in s["steps"]:
            if "group" in step:
                sessions_per_group.setdefault(step["group"], set()).add(s["id"])
    assert sum(len(ids) > 1 for ids in sessions_per_group.values()) >= 5
