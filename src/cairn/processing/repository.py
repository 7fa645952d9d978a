"""Writes of processing state: the write path's outcomes, ``mark_*`` for the other stages,
and the retry job's queue. Every write names the owner; under a tenant session row-level
security holds as well."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, func, select, text, tuple_, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from cairn.db.models import record_processing as rp
from cairn.processing.stages import (
    DONE,
    FAILED,
    NOT_NEEDED,
    OPEN_STATES,
    PENDING,
    Outcome,
    check_stage,
    describe,
)


@dataclass(frozen=True)
class Due:
    """One stage of one record the retry job claimed."""

    owner_id: uuid.UUID
    breadcrumb_id: uuid.UUID
    stage: str
    attempts: int
    leased_until: datetime


def _after(seconds: float | None) -> Any:
    return None if seconds is None else func.now() + timedelta(seconds=seconds)


def _row(owner_id: uuid.UUID, record_id: uuid.UUID, stage: str, outcome: Outcome) -> Any:
    done = outcome.state == DONE
    return {
        "owner_id": owner_id,
        "breadcrumb_id": record_id,
        "stage": check_stage(stage),
        "state": outcome.state,
        "attempts": 1 if done or outcome.state == FAILED else 0,
        "done_at": func.now() if done else None,
        "last_error": outcome.error,
        "next_attempt_at": _after(outcome.due_in_s),
        "updated_at": func.now(),
    }


async def record_outcomes(
    session: AsyncSession,
    owner_id: uuid.UUID,
    record_id: uuid.UUID,
    outcomes: Mapping[str, Outcome],
) -> None:
    """A write's stages, in one statement: the content is new, so each row starts again
    (attempts from this write on). Plain SQL over arrays: on every write, so one prepared
    statement whatever the number of stages."""
    if not outcomes:
        return
    params = {"owner": owner_id, "record": record_id, **outcome_params(outcomes)}
    await session.execute(_WRITE_OUTCOMES, params)


def outcomes_upsert_sql(owner: str, record: str, source: str = "") -> str:
    """The upsert of a write's stages for ``record`` of ``owner`` (SQL expressions), from
    ``source`` (a ``FROM`` item followed by a comma, or nothing): also a step of the
    one-statement replacement of a generated record (cairn.breadcrumbs.replace)."""
    return (
        "INSERT INTO record_processing AS p (owner_id, breadcrumb_id, stage, state, attempts,"
        " done_at, last_error, next_attempt_at, updated_at)"
        f" SELECT {owner}, {record}, s.stage, s.state,"
        f" CASE WHEN s.state IN ('{DONE}', '{FAILED}') THEN 1 ELSE 0 END,"
        f" CASE WHEN s.state = '{DONE}' THEN now() END, s.error,"
        " now() + s.due * interval '1 second', now()"
        f" FROM {source} unnest(CAST(:stages AS text[]), CAST(:states AS text[]),"
        " CAST(:errors AS text[]), CAST(:dues AS float8[])) AS s(stage, state, error, due)"
        " ON CONFLICT (owner_id, breadcrumb_id, stage) DO UPDATE SET state = excluded.state,"
        " attempts = excluded.attempts, done_at = excluded.done_at,"
        " last_error = excluded.last_error, next_attempt_at = excluded.next_attempt_at,"
        " updated_at = excluded.updated_at"
    )


def outcome_params(outcomes: Mapping[str, Outcome]) -> dict[str, list[Any]]:
    """``outcomes_upsert_sql``'s array parameters, each stage name checked."""
    stages = [(check_stage(stage), outcome) for stage, outcome in outcomes.items()]
    return {
        "stages": [stage for stage, _ in stages],
        "states": [outcome.state for _, outcome in stages],
        "errors": [outcome.error for _, outcome in stages],
        "dues": [outcome.due_in_s for _, outcome in stages],
    }


_WRITE_OUTCOMES = text(outcomes_upsert_sql(":owner", ":record"))

_KEY = ["owner_id", "breadcrumb_id", "stage"]
_MUTABLE = {"state", "attempts", "done_at", "last_error", "next_attempt_at", "updated_at"}


async def _upsert_tried(
    session: AsyncSession,
    owner_id: uuid.UUID,
    record_ids: Iterable[uuid.UUID],
    stage: str,
    outcome: Outcome,
) -> None:
    """One more attempt of ``stage`` for each record, with ``outcome``."""
    rows = [_row(owner_id, record_id, stage, outcome) for record_id in record_ids]
    if not rows:
        return
    statement = insert(rp).values(rows)
    changed: dict[str, Any] = {
        name: statement.excluded[name] for name in _MUTABLE if name != "attempts"
    }
    # ``done_at``: when the stage was last done, kept through later failures.
    changed["done_at"] = func.coalesce(statement.excluded.done_at, rp.c.done_at)
    tried = outcome.state in (DONE, FAILED)
    changed["attempts"] = rp.c.attempts + 1 if tried else rp.c.attempts
    await session.execute(statement.on_conflict_do_update(index_elements=_KEY, set_=changed))


async def mark_done(
    session: AsyncSession, owner_id: uuid.UUID, record_ids: Sequence[uuid.UUID], stage: str
) -> None:
    """``stage`` succeeded for these records (in the caller's transaction)."""
    await _upsert_tried(session, owner_id, record_ids, stage, Outcome(DONE))


async def mark_failed(
    session: AsyncSession,
    owner_id: uuid.UUID,
    record_id: uuid.UUID,
    stage: str,
    error: str | BaseException,
    *,
    retry_in_s: float = 0.0,
) -> None:
    """``stage`` failed for this record; the retry job tries again after ``retry_in_s``."""
    outcome = Outcome(FAILED, describe(error), due_in_s=retry_in_s)
    await _upsert_tried(session, owner_id, [record_id], stage, outcome)


async def mark_pending(
    session: AsyncSession,
    owner_id: uuid.UUID,
    record_ids: Sequence[uuid.UUID],
    stage: str,
    *,
    due_in_s: float = 0.0,
) -> None:
    """``stage`` must run again for these records (what it depends on changed)."""
    await _upsert_tried(session, owner_id, record_ids, stage, Outcome(PENDING, None, due_in_s))


async def mark_not_needed(
    session: AsyncSession, owner_id: uuid.UUID, record_ids: Sequence[uuid.UUID], stage: str
) -> None:
    """``stage`` does not apply to these records (now)."""
    await _upsert_tried(session, owner_id, record_ids, stage, Outcome(NOT_NEEDED))


async def claim_due(session: AsyncSession, *, limit: int, lease_s: float) -> list[Due]:
    """The oldest due stages of every tenant, each leased for ``lease_s`` (another process,
    or this one after a crash, takes it up once the lease runs out)."""
    key = tuple_(rp.c.owner_id, rp.c.breadcrumb_id, rp.c.stage)
    due = (
        select(rp.c.owner_id, rp.c.breadcrumb_id, rp.c.stage)
        .where(rp.c.next_attempt_at <= func.now(), rp.c.state.in_(OPEN_STATES))
        .order_by(rp.c.next_attempt_at)
        .limit(limit)
        .with_for_update(skip_locked=True)
    )
    statement = (
        update(rp)
        .where(key.in_(due))
        .values(next_attempt_at=_after(lease_s))
        .returning(*(rp.c[name] for name in _DUE_COLUMNS))
    )
    rows = (await session.execute(statement)).all()
    return [Due(*row) for row in rows]


_DUE_COLUMNS = ("owner_id", "breadcrumb_id", "stage", "attempts", "next_attempt_at")


async def record_retry(
    session: AsyncSession, due: Due, outcome: Outcome, *, next_in_s: float | None
) -> bool:
    """The retry job's result for a claimed stage, unless a write settled it meanwhile
    (its lease is gone: a write started the row again)."""
    done = outcome.state == DONE
    tried = outcome.state in (DONE, FAILED)
    statement = (
        update(rp)
        .where(
            and_(
                rp.c.owner_id == due.owner_id,
                rp.c.breadcrumb_id == due.breadcrumb_id,
                rp.c.stage == due.stage,
                rp.c.next_attempt_at == due.leased_until,
            )
        )
        .values(
            state=outcome.state,
            attempts=rp.c.attempts + int(tried),
            done_at=func.now() if done else rp.c.done_at,
            last_error=outcome.error if not done else None,
            next_attempt_at=_after(next_in_s) if outcome.state == FAILED else None,
            updated_at=func.now(),
        )
    )
    result = await session.execute(statement)
    return bool(getattr(result, "rowcount", 0))
