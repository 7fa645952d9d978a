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
