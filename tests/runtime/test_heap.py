"""The collector's tuning for long-running processes: its thresholds, and every collection
timed on /metrics."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from cairn.runtime import heap


def _pauses(generation: str) -> float:
    return heap.PAUSES.labels(generation)._sum.get()  # type: ignore[attr-defined,no-any-return]


def _count(generation: str) -> float:
    metric = heap.PAUSES.labels(generation)
    return sum(bucket.get() for bucket in metric._buckets)  # type: ignore[attr-defined]


@pytest.fixture
def restored() -> Iterator[None]:
    """The test session's own collector, as it was (the tuning is process-wide)."""
    thresholds, callbacks = gc.get_threshold(), list(gc.callbacks)
    try:
        yield
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)
        gc.callbacks[:] = callbacks


def test_tuned_collector_times_full_collections(restored: None) -> None:
    heap.tune_collector()
    heap.tune_collector()  # twice, as `cairn up` may: one callback, not two
    assert gc.callbacks.count(heap._time_collection) == 1
    assert gc.get_threshold() == heap.THRESHOLDS

    count, paused = _count("2"), _pauses("2")
    gc.collect(2)
    assert _count("2") == count + 1
    assert _pauses("2") > paused


def test_a_tuned_process_freezes_what_its_start_built(restored: None) -> None:
    """``settle`` (the app's lifespan and the worker call it once started) moves what is
    alive then out of the collector's sight, in a process its entry point tuned only."""
    heap.settle()  # the test session is no tuned process: nothing is frozen
    assert gc.get_freeze_count() == 0
    heap.tune_collector()
    started = [[n] for n in range(1000)]  # what a start leaves after the tuning (tracked)
    frozen = gc.get_freeze_count()
    heap.settle()
    assert gc.get_freeze_count() >= frozen + len(started)
