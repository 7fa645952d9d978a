"""Processing state per record: which stages (embedded, keyed, chunked, edged, labelled)
each record went through, when, and what failed; a retry job with backoff; coverage.

The public surface for the write path, the worker and the other stages: the stage and
state names, ``mark_done``, ``mark_failed``, ``mark_pending``, ``mark_not_needed`` and
``record_outcomes``.
"""

from cairn.processing.repository import (
    mark_done,
    mark_failed,
    mark_not_needed,
    mark_pending,
    record_outcomes,
)
from cairn.processing.stages import (
    CHUNKED,
    DONE,
    EDGED,
    EMBEDDED,
    FAILED,
    KEYED,
    LABELLED,
    NOT_NEEDED,
    PENDING,
    STAGES,
    STATES,
    Outcome,
)

__all__ = [
    "CHUNKED",
    "DONE",
    "EDGED",
    "EMBEDDED",
    "FAILED",
    "KEYED",
    "LABELLED",
    "NOT_NEEDED",
    "PENDING",
    "STAGES",
    "STATES",
    "Outcome",
    "mark_done",
    "mark_failed",
    "mark_not_needed",
    "mark_pending",
    "record_outcomes",
]
