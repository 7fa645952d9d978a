"""Coverage: how far every live record got through each stage, from the SQL counts of
``queries``. Shared by ``GET /coverage`` (one tenant) and the gauges (every tenant)."""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from cairn.processing import queries
from cairn.processing.schemas import Breakdown, CommonError, Coverage, Islands, StageFigures
from cairn.processing.stages import STAGES

NO_SCHEMA = "-"
MAX_SESSION_PREFIXES = 50
ERRORS_PER_STAGE = 5
ISLAND_SAMPLE = 10

Counts = Mapping[tuple[str, str], int]  # (stage, state) → records


def figures(records: int, counts: Counts) -> dict[str, StageFigures]:
    """Per stage: the states' counts, the records with none (untracked), and the share done
    of the records that need the stage."""
    out: dict[str, StageFigures] = {}
    for stage in STAGES:
        states = {state: n for (s, state), n in counts.items() if s == stage}
        figure = StageFigures(**states)
        figure.untracked = max(records - sum(states.values()), 0)
        needed = records - figure.not_needed
        figure.percent = round(100.0 * figure.done / needed, 1) if needed > 0 else 100.0
        out[stage] = figure
    return out


def _grouped(rows: Iterable[Any]) -> dict[str, dict[tuple[str, str], int]]:
    grouped: dict[str, dict[tuple[str, str], int]] = defaultdict(dict)
    for key, stage, state, count in rows:
        grouped[key or NO_SCHEMA][(stage, state)] = int(count)
    return grouped


def _breakdowns(
    records: Iterable[Any], states: Iterable[Any], *, keep: int | None = None
) -> dict[str, Breakdown]:
    totals = {key or NO_SCHEMA: int(count) for key, count in records}
    grouped = _grouped(states)
    largest = sorted(totals, key=lambda key: (-totals[key], key))[:keep]
    return {
        key: Breakdown(records=totals[key], stages=figures(totals[key], grouped[key]))
        for key in largest
    }


def _overall(by_schema: Mapping[str, Breakdown], states: Iterable[Any]) -> tuple[int, Counts]:
    counts: dict[tuple[str, str], int] = defaultdict(int)
    for _, stage, state, count in states:
        counts[(stage, state)] += int(count)
    return sum(part.records for part in by_schema.values()), counts


async def coverage(session: AsyncSession, owner: uuid.UUID | None) -> Coverage:
    """Every figure of ``GET /coverage`` for ``owner`` (None: every tenant)."""
    schema_states = await queries.states_by_schema(session, owner)
    by_schema = _breakdowns(await queries.records_by_schema(session, owner), schema_states)
    records, counts = _overall(by_schema, schema_states)
    session_records, session_states = await queries.by_session(session, owner)
    by_session = _breakdowns(session_records, session_states, keep=MAX_SESSION_PREFIXES)
    errors = await queries.common_errors(session, owner, per_stage=ERRORS_PER_STAGE)
    count, ids = await queries.islands(session, owner, sample=ISLAND_SAMPLE)
    return Coverage(
        records=records,
        stages=figures(records, counts),
        errors=[CommonError(stage=s, error=e or "", records=int(n)) for s, e, n in errors],
        by_schema=by_schema,
        by_session=by_session,
        islands=Islands(count=count, ids=ids),
    )
