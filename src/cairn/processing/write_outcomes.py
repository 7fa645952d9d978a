"""What a write means for each processing stage, decided from what it derived.

Kept apart from the write path so that the decision reads in one place: embedded and keyed
in the write's transaction, labelled where the tenant defines domains, edged pending until
the worker handles the write's event (due for the retry job only if the worker never does).
``chunked`` is recorded by the chunking step itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cairn.processing.stages import (
    DONE_OUTCOME,
    EDGED,
    EMBEDDED,
    KEYED,
    LABELLED,
    NOT_NEEDED_OUTCOME,
    PENDING,
    Outcome,
    failed,
)

# How long the worker has to build a write's edges before the retry job builds them.
EDGE_GRACE_S = 300.0


@dataclass(frozen=True)
class Derived:
    """The columns a write derived from its content, and the stages' outcomes."""

    columns: dict[str, Any]
    outcomes: dict[str, Outcome] = field(default_factory=dict)


def derived_outcomes(
    *, embedded: BaseException | bool | None, labelled: str | None
) -> dict[str, Outcome]:
    """Keywords and labels were computed again. ``embedded``: True (a new vector), an
    error (it failed), None (the text did not change: the stage stands as it was).
    ``labelled``: the domains version the labels were computed with (None: the tenant
    defines no domains)."""
    outcomes = unchanged_outcomes()
    if isinstance(embedded, BaseException):
        outcomes[EMBEDDED] = failed(embedded)
    elif embedded:
        outcomes[EMBEDDED] = DONE_OUTCOME
    outcomes[KEYED] = DONE_OUTCOME
    outcomes[LABELLED] = DONE_OUTCOME if labelled is not None else NOT_NEEDED_OUTCOME
    return outcomes


def unchanged_outcomes() -> dict[str, Outcome]:
    """A write that left the derived columns alone: its event still rebuilds the edges."""
    return {EDGED: Outcome(PENDING, due_in_s=EDGE_GRACE_S)}


def not_embedded_outcomes() -> dict[str, Outcome]:
    """An assembled context: keyword pointers from its tags only; never searched, linked or
    labelled."""
    return {
        EMBEDDED: NOT_NEEDED_OUTCOME,
        KEYED: DONE_OUTCOME,
        EDGED: NOT_NEEDED_OUTCOME,
        LABELLED: NOT_NEEDED_OUTCOME,
    }
