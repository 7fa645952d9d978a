"""The worker-overhead benchmark's workload is the one it describes: the records asked for,
over the sessions asked for, about a quarter of them error or test output, each session's
records arriving in their order (benchmarks/debug_paths_overhead.py)."""

from __future__ import annotations

import random
from collections import Counter

from benchmarks.debug_paths_overhead import CONCURRENT, arrival, sessions, stats


def test_the_records_are_spread_over_the_sessions() -> None:
    made = sessions(2_000, 40, random.Random(1))
    assert len(made) == 40
    assert sum(len(s) for s in made) == 2_000
    assert {len(s) for s in made} == {50}
    for index, body in enumerate(made):
        assert {r["tags"][-1] for r, _ in body} == {f"session:bench-{index:04d}"}


def test_about_a_quarter_is_error_or_test_output() -> None:
    kinds = Counter(kind for s in sessions(2_000, 40, random.Random(2)) for _, kind in s)
    share = (kinds["error output"] + kinds["test or success output"]) / 2_000
    assert 0.15 <= share <= 0.35, kinds
    assert kinds["note"] and kinds["tool call"] and kinds["quiet response"]


def test_each_session_arrives_in_order_and_interleaved() -> None:
    made = sessions(600, 12, random.Random(3))
    order = arrival(made, random.Random(4))
    assert len(order) == 600
    for index, body in enumerate(made):
        assert [r for i, r, _ in order if i == index] == [r for r, _ in body]
    first = [i for i, _, _ in order[: CONCURRENT * 3]]
    assert len(set(first)) > 1


def test_stats_are_percentiles_of_the_samples() -> None:
    result = stats([float(n) for n in range(1, 101)])
    assert result["n"] == 100 and result["p50"] == 51.0 and result["p99"] == 100.0
    assert result["max"] == 100.0 and result["mean"] == 50.5
    assert stats([]) == {"n": 0}
