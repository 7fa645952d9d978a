"""The render budget: CPU time, not waiting, counts against a render."""

from __future__ import annotations

import gc
import time

import pytest

from cairn.config import TransformSettings
from cairn.transforms.budget import Budget, RenderLimitExceeded, approx_size


def test_a_preempted_render_gets_the_rest_of_its_cpu_time() -> None:
    budget = Budget.start(TransformSettings(render_ms=50))
    budget.deadline = 0.0  # the wall clock ran out while another thread had the CPU
    budget.step()
    assert budget.deadline > time.perf_counter()


def test_the_wall_clock_is_still_bounded_on_a_busy_machine() -> None:
    budget = Budget.start(TransformSettings(render_ms=50))
    budget.deadline = budget.wall_limit = 0.0
    with pytest.raises(RenderLimitExceeded, match="500 ms on a busy machine"):
        budget.step()


def test_garbage_collection_during_a_render_does_not_count() -> None:
    garbage = [[i] for i in range(100_000)]
    budget = Budget.start(TransformSettings(render_ms=5))
    started = time.thread_time()
    while time.thread_time() - started < 0.03:  # 30 ms of CPU, all of it collecting
        gc.collect()
    budget.deadline = 0.0
    budget.step()
    assert garbage


def test_burning_cpu_ends_at_the_limit() -> None:
    budget = Budget.start(TransformSettings(render_ms=5))
    with pytest.raises(RenderLimitExceeded, match="took longer than 5 ms"):
        while True:
            budget.step()


def test_approx_size_counts_text_and_stops_past_the_limit() -> None:
    # {"ab": ["cde", 1]}: braces and 1 entry, "ab", brackets and 2 items, "cde", a number
    assert approx_size({"ab": ["cde", 1]}, 100) == 3 + 2 + 4 + 3 + 8
    assert approx_size(["x" * 50] * 10, 100) == 12 + 50 + 50  # stops after the second item
