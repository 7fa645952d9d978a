"""The LLM summariser's pass over a resolved path: the worker's ``summarise_paths`` step, on
the events of ``debug.path.v1`` records, so that a path resolved by the worker and one
resolved through the API are treated alike.

Three phases, so that no transaction (nor the session's lock) is held while the LLM thinks:
read the path and its waypoints (:func:`pending`), ask the LLM outside any transaction
(:func:`ask`), then write the outcome in a new transaction under the session's lock, only if
the path is still resolved and has none (:func:`record_outcome`). The outcome is written
either way (the LLM's summary, or the failure's reason with the recorded summary standing),
so each resolution is sent once: a redelivered event, or the event of the outcome's own
write, finds it and stops.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from prometheus_client import Counter, Histogram
from sqlalchemy.ext.asyncio import AsyncSession

from cairn.breadcrumbs import repository as breadcrumbs
from cairn.breadcrumbs.generated import GeneratedWriter
from cairn.paths import repository
from cairn.paths.machine import Status
from cairn.paths.store import StoredPath, SummaryOutcome, note_of, path_from_context, write_path
from cairn.paths.summariser import Summariser, SummariserFailed
from cairn.paths.summary import Resolution, WaypointNote, summarise

log = logging.getLogger(__name__)

MAX_MODEL = 200  # the schema's maxLength of summariser.model

SUMMARIES = Counter(
    "cairn_path_summaries_total",
    "Resolved debug paths sent to the LLM summariser, by whose summary they keep (llm, or "
    "extractive: the request failed, the reason is on the path)",
    ["by"],
)
SUMMARY_SECONDS = Histogram(
    "cairn_path_summariser_seconds",
    "Time of one request to the LLM summariser, failures included",
    buckets=(0.5, 1, 2, 5, 10, 20, 30, 60),
)


@dataclass(frozen=True, slots=True)
class Asked:
    """What the LLM made of a path: its summary (None when it failed) and the outcome."""

    outcome: SummaryOutcome
    summary: Resolution | None = None


def awaits_summary(record: Mapping[str, Any]) -> bool:
    """Whether a record (an event or a row) is a resolved path the summariser has not seen."""
    context = record.get("context") or {}
    return (
        record.get("schema_name") == repository.PATH_SCHEMA
        and context.get("status") == Status.RESOLVED.value
        and not context.get("summariser")
    )


async def pending(
    session: AsyncSession, owner_id: uuid.UUID, path_id: uuid.UUID
) -> tuple[StoredPath, list[WaypointNote]] | None:
    """The path and its waypoints, if it still awaits a summary."""
    row = await breadcrumbs.get(session, owner_id, path_id)
    if row is None or not awaits_summary(row):
        return None
    waypoints = await repository.waypoints_of(session, owner_id, path_id)
    return path_from_context(path_id, row["context"]), [note_of(c) for c in waypoints]


async def ask(summariser: Summariser, path: StoredPath, notes: Sequence[WaypointNote]) -> Asked:
    """The LLM's summary of the path, or why there is none; never raises for the LLM's sake."""
    recorded = path.resolution or summarise(notes)
    try:
        with SUMMARY_SECONDS.time():
            summary = await summariser.refine(notes, recorded)
    except SummariserFailed as failed:
        log.warning("summariser: path %s keeps its summary: %s", path.id, failed)
        SUMMARIES.labels("extractive").inc()
        return Asked(SummaryOutcome("extractive", _now(), error=failed.reason))
    SUMMARIES.labels("llm").inc()
    return Asked(SummaryOutcome("llm", _now(), model=summariser.model[:MAX_MODEL]), summary)


async def record_outcome(writer: GeneratedWriter, path_id: uuid.UUID, asked: Asked) -> bool:
    """Write the outcome onto the path under its session's lock; False when the path is no
    longer resolved or another worker wrote an outcome first (its stays)."""
    session, owner = writer.session, writer.principal.owner_id
    row = await breadcrumbs.get(session, owner, path_id)
    if row is None or not awaits_summary(row):
        return False
    await repository.lock_session(session, owner, row["context"]["session"])
    row = await breadcrumbs.get(session, owner, path_id)  # again, now that the lock orders it
    if row is None or not awaits_summary(row):
        return False
    current = path_from_context(path_id, row["context"])
    updated = replace(current, summariser=asked.outcome)
    if asked.summary is not None:  # the LLM's summary, Cairn's kept beside it
        updated = replace(updated, resolution=asked.summary, replaced=current.resolution)
    await write_path(writer, updated)
    return True


def _now() -> datetime:
    return datetime.now(UTC)
