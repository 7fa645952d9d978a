"""The processing vocabulary: the stages a record goes through and the states of each.

- ``embedded``: the record's vector (API, write time; the retry job after a failure).
- ``keyed``: its keyword pointers (API, write time).
- ``chunked``: the vectors of a long record's chunks (API, write time).
- ``edged``: its edges (the worker, after the write's event; the retry job if that never
  happened).
- ``labelled``: its domain labels, where the tenant defines domains (API, write time).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

EMBEDDED: Final = "embedded"
KEYED: Final = "keyed"
CHUNKED: Final = "chunked"
EDGED: Final = "edged"
LABELLED: Final = "labelled"
STAGES: Final = (EMBEDDED, KEYED, CHUNKED, EDGED, LABELLED)

DONE: Final = "done"
PENDING: Final = "pending"
FAILED: Final = "failed"
NOT_NEEDED: Final = "not_needed"
STATES: Final = (DONE, PENDING, FAILED, NOT_NEEDED)
# What the retry job looks at (rows with a due ``next_attempt_at`` in one of these states).
OPEN_STATES: Final = (PENDING, FAILED)

MAX_ERROR_CHARS = 500


@dataclass(frozen=True)
class Outcome:
    """What a write found for one stage of its record. ``due_in_s``: when the retry job
    should look at a pending stage (none: not before someone marks it)."""

    state: str
    error: str | None = None
    due_in_s: float | None = None


DONE_OUTCOME = Outcome(DONE)
NOT_NEEDED_OUTCOME = Outcome(NOT_NEEDED)


def failed(error: BaseException | str) -> Outcome:
    return Outcome(FAILED, describe(error), due_in_s=0.0)


def describe(error: BaseException | str) -> str:
    """An error as stored and grouped in coverage: its type and message, bounded."""
    if isinstance(error, str):
        text = error
    else:
        message = str(error) or "(no message)"
        text = f"{type(error).__name__}: {message}"
    return text[:MAX_ERROR_CHARS]


def check_stage(stage: str) -> str:
    if stage not in STAGES:
        raise ValueError(f"unknown processing stage {stage!r}; one of {', '.join(STAGES)}")
    return stage
