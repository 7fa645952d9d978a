"""Why each piece is in the context and why the rest is not, and how long each phase took —
collected as data (JSON-ready) for the ``agent.context.v1`` record, not as log lines."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any
from uuid import UUID

from cairn.context.model import Budget, Dropped, Record, Rendered, Seed, Selected, Selection

EXPLAIN_TITLE_CHARS = 80
_COST_DIGITS = 4


class Timer:
    """Wall time per named phase, in milliseconds; a phase entered twice adds up."""

    def __init__(self, clock: Callable[[], float] = time.perf_counter) -> None:
        self._clock = clock
        self._ms: dict[str, float] = {}

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        started = self._clock()
        try:
            yield
        finally:
            elapsed = (self._clock() - started) * 1000.0
            self._ms[name] = self._ms.get(name, 0.0) + elapsed

    def as_dict(self) -> dict[str, float]:
        """``{phase: ms}`` in the order phases first ran, plus ``total``."""
        timings = {name: round(ms, 3) for name, ms in self._ms.items()}
        timings["total"] = round(sum(self._ms.values()), 3)
        return timings


def build_explain(
    *,
    seeds: Sequence[Seed],
    selection: Selection,
    rendered: Rendered,
    budget: Budget,
    records: Mapping[UUID, Record],
    upstream_dropped: Sequence[Dropped] = (),
    signals: Mapping[str, Any] | None = None,
    graph_dropped: Sequence[Dropped] = (),
) -> dict[str, Any]:
    """Every seed; every record in the text (with its section); every candidate left out,
    with the stage that left it out: ``seeds`` (``upstream_dropped``: blacklist, threshold,
    duplicates found while seeding, isolated domains), ``graph`` (``graph_dropped``: records
    of isolated domains the walk reached), ``select`` (the pathfinder) or ``render`` (trimmed to
    bring the exact count under budget). ``signals``: what the trigger said (context.signals)."""
    trimmed = set(rendered.trimmed)
    sections = {item.record_id: item.section for item in rendered.items}
    explained: dict[str, Any] = {} if signals is None else {"signals": dict(signals)}
    return explained | {
        "budget": {"tokens": budget.tokens, "source": budget.source.value},
        "token_count": rendered.token_count,
        "trigger_over_budget": selection.trigger_over_budget,
        "seeds": [_seed(seed) for seed in seeds],
        "selected": [
            _selected(item, sections[item.record_id], records.get(item.record_id))
            for item in selection.selected
            if item.record_id not in trimmed
        ],
        "dropped": [
            *(_dropped(item, "seeds") for item in upstream_dropped),
            *(_dropped(item, "graph") for item in graph_dropped),
            *(_dropped(item, "select") for item in selection.dropped),
            *(_trimmed(item) for item in selection.selected if item.record_id in trimmed),
        ],
    }


def _seed(seed: Seed) -> dict[str, Any]:
    return {
        "record_id": str(seed.record_id),
        "source": seed.source,
        "score": round(seed.score, _COST_DIGITS),
        "detail": seed.detail,
    }


def _selected(item: Selected, section: str, record: Record | None) -> dict[str, Any]:
    return {
        "record_id": str(item.record_id),
        "schema_name": record.schema_name if record else None,
        "title": record.title[:EXPLAIN_TITLE_CHARS] if record else None,
        "section": section,
        "source": item.source,
        "seed_score": None if item.seed_score is None else round(item.seed_score, _COST_DIGITS),
        "path_cost": round(item.path_cost, _COST_DIGITS),
        "tokens": item.tokens,
        "via": None if item.via is None else str(item.via),
        "hops": item.hops,
    }


def _dropped(item: Dropped, stage: str) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "record_id": str(item.record_id),
        "reason": item.reason.value,
        "stage": stage,
        "tokens": item.tokens,
        "path_cost": None if item.path_cost is None else round(item.path_cost, _COST_DIGITS),
    }
    if item.duplicate_of is not None:
        entry["duplicate_of"] = str(item.duplicate_of)
    if item.evidence is not None:
        entry["evidence"] = item.evidence
    return entry


def _trimmed(item: Selected) -> dict[str, Any]:
    return {
        "record_id": str(item.record_id),
        "reason": "over_budget",
        "stage": "render",
        "tokens": item.tokens,
        "path_cost": round(item.path_cost, _COST_DIGITS),
    }
