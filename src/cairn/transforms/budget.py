"""The per-render budget: a deadline, a step count and a cap on produced text.

A sandbox decides what a template may *touch*; it cannot stop a template from looping for
an hour or doubling a string until memory runs out. Every loop body, macro call, filter,
growing operator and output write of a compiled template, and every node a JSONPath query
visits, calls into the active budget, so hostile work ends with :class:`RenderLimitExceeded`
within one step of the limit instead of taking the process down.
"""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, TypeVar

from cairn.config import TransformSettings

T = TypeVar("T")


class RenderLimitExceeded(Exception):
    """A render ran out of time, steps or room; the caller falls back to the raw context."""


# A busy machine may preempt a render; its wall-clock time may stretch this far.
WALL_FACTOR = 10


@dataclass(slots=True)
class Budget:
    """Time is the render thread's CPU time (``render_ms``) minus garbage collections it
    happened to run, so renders on a busy machine are not cut short for waiting or for a
    collection of everyone's garbage; the wall clock, cheap to read, is checked every step
    and the CPU clock only when the wall-clock deadline has passed."""

    render_ms: float
    steps_left: int
    emitted_left: int
    max_value_chars: int
    max_output_chars: int
    deadline: float = 0.0
    wall_limit: float = 0.0
    cpu_started: float = 0.0
    gc_started: float = 0.0

    @classmethod
    def start(cls, settings: TransformSettings) -> Budget:
        budget = cls(
            render_ms=settings.render_ms,
            steps_left=settings.max_steps,
            emitted_left=settings.max_emitted_chars,
            max_value_chars=settings.max_value_chars,
            max_output_chars=settings.max_output_chars,
        )
        now, seconds = time.perf_counter(), settings.render_ms / 1000
        budget.deadline, budget.wall_limit = now + seconds, now + WALL_FACTOR * seconds
        budget.cpu_started, budget.gc_started = time.thread_time(), _gc_seconds()
        return budget

    def step(self) -> None:
        self.steps_left -= 1
        if self.steps_left < 0:
            raise RenderLimitExceeded("too many steps (loop iterations, calls or nodes)")
        now = time.perf_counter()
        if now > self.deadline:
            self._check_time(now)

    def _check_time(self, now: float) -> None:
        collecting = _gc_seconds() - self.gc_started
        left = self.render_ms / 1000 - (time.thread_time() - self.cpu_started - collecting)
        if left <= 0:
            raise RenderLimitExceeded(f"took longer than {self.render_ms:g} ms")
        if now - collecting > self.wall_limit:
            wall_ms = WALL_FACTOR * self.render_ms
            raise RenderLimitExceeded(f"took longer than {wall_ms:g} ms on a busy machine")
        self.deadline = now + left  # preempted or collecting: what is left of the budget

    def emit(self, chars: int) -> None:
        """Account for text written anywhere (output, macro and ``set`` block buffers)."""
        self.emitted_left -= chars
        if self.emitted_left < 0:
            raise RenderLimitExceeded("wrote too much text")

    def check_value(self, value: T) -> T:
        """``value`` unchanged, or an error when it is larger than any value may be."""
        if approx_size(value, self.max_value_chars) > self.max_value_chars:
            raise RenderLimitExceeded(f"a value grew beyond {self.max_value_chars} characters")
        return value


_gc = threading.local()  # seconds spent in garbage collections run by this thread


def _time_collections(phase: str, info: dict[str, Any]) -> None:
    if phase == "start":
        _gc.started = time.perf_counter()
    elif getattr(_gc, "started", None) is not None:
        _gc.total = getattr(_gc, "total", 0.0) + time.perf_counter() - _gc.started
        _gc.started = None


def _gc_seconds() -> float:
    if _time_collections not in gc.callbacks:  # installed by the first render, not on import
        gc.callbacks.append(_time_collections)
    total: float = getattr(_gc, "total", 0.0)
    return total


_active: ContextVar[Budget | None] = ContextVar("cairn_render_budget", default=None)


def active() -> Budget:
    budget = _active.get()
    if budget is None:  # only the engine renders, and it always opens a budget
        raise RenderLimitExceeded("rendering outside of a render budget")
    return budget


@contextmanager
def activated(budget: Budget) -> Iterator[Budget]:
    token = _active.set(budget)
    try:
        yield budget
    finally:
        _active.reset(token)


_SCALAR_SIZE = 8


def approx_size(value: Any, limit: int) -> int:
    """Roughly the characters ``value`` takes as text; stops counting once past ``limit``.

    Cheap enough to run before every operation that could turn a container into text: it
    never walks more than about ``limit`` characters' worth of nodes.
    """
    total = 0
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            total += len(item)
        elif isinstance(item, dict):
            total += 2 + len(item)
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            total += 2 + len(item)
            stack.extend(item)
        else:
            total += _SCALAR_SIZE
        if total > limit:
            return total
    return total
