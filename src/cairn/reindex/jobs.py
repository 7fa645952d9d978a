"""Queries on ``reindex_jobs`` and on the records a job selects.

A job selects the records of its tenant that existed when it was created, of its schema
(if any) and updated at or after ``since`` (if any), and walks them in id order: ``cursor``
is the last id done. Every statement names the tenant, so the runners may use the schema
owner's sessions, which see every tenant.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import (
    ColumnElement,
    DateTime,
    Text,
    cast,
    func,
    insert,
    literal,
    or_,
    select,
    text,
    true,
    update,
)
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncSession

from cairn.breadcrumbs.repository import RECORD_COLUMNS
from cairn.db.models import breadcrumbs, reindex_jobs

CLI, HINTS = "cli", "hints"
PENDING, RUNNING, DONE = "pending", "running", "done"
COUNTS = ("done", "changed", "embedded", "edges", "failed")

Job = Mapping[Any, Any]


@dataclass(frozen=True, slots=True)
class Selection:
    """Which records a job reindexes, besides its tenant."""

    schema_name: str | None = None
    since: datetime | None = None


@dataclass(slots=True)
class Tally:
    """What one batch did; added to the job's counts when the batch commits."""

    done: int = 0
    changed: int = 0
    embedded: int = 0
    edges: int = 0
    failed: int = 0
    failures: list[dict[str, str]] = field(default_factory=list)


def _selected(job: Job) -> list[ColumnElement[bool]]:
    b = breadcrumbs.c
    return [
        b.owner_id == job["owner_id"],
        b.created_at <= job["created_at"],
        b.schema_name == job["schema_name"] if job["schema_name"] is not None else true(),
        b.updated_at >= job["since"] if job["since"] is not None else true(),
    ]


async def next_records(session: AsyncSession, job: Job, limit: int) -> Sequence[Job]:
    """The next ``limit`` records of the job after its cursor, in id order."""
    b = breadcrumbs.c
    after = b.id > job["cursor"] if job["cursor"] is not None else true()
    query = select(*RECORD_COLUMNS).where(*_selected(job), after).order_by(b.id).limit(limit)
    return (await session.execute(query)).mappings().all()


async def count_selected(session: AsyncSession, job: Job) -> int:
    query = select(func.count()).select_from(breadcrumbs).where(*_selected(job))
    return int(await session.scalar(query) or 0)


async def create_cli_jobs(
    session: AsyncSession, selection: Selection, owners: Sequence[uuid.UUID] | None
) -> list[uuid.UUID]:
    """One job per tenant (of ``owners``, else all) holding records the selection takes."""
    b = breadcrumbs.c
    where = [
        b.schema_name == selection.schema_name if selection.schema_name is not None else true(),
        b.updated_at >= selection.since if selection.since is not None else true(),
        b.owner_id.in_(owners) if owners is not None else true(),
    ]
    counts = select(
        func.gen_random_uuid(), b.owner_id, func.count(), *_filter_literals(selection)
    ).where(*where).group_by(b.owner_id)  # fmt: skip
    statement = insert(reindex_jobs).from_select(
        ["id", "owner_id", "total", "schema_name", "since", "origin"], counts
    )
    result = await session.execute(statement.returning(reindex_jobs.c.id))
    return list(result.scalars())


def _filter_literals(selection: Selection) -> list[Any]:
    return [
        cast(literal(selection.schema_name), Text),
        cast(literal(selection.since), DateTime(timezone=True)),
        literal(CLI),
    ]


async def enqueue_hints_job(session: AsyncSession, owner_id: uuid.UUID, schema_name: str) -> None:
    """A job for every record of ``schema_name``, unless one is already waiting to start."""
    statement = (
        pg_insert(reindex_jobs)
        .values(id=uuid.uuid4(), owner_id=owner_id, schema_name=schema_name, origin=HINTS)
        .on_conflict_do_nothing(
            index_elements=["owner_id", "schema_name"],
            index_where=text("state = 'pending' AND origin = 'hints'"),
        )
    )
    await session.execute(statement)


async def unfinished_cli_jobs(
    session: AsyncSession, owners: Sequence[uuid.UUID] | None = None
) -> Sequence[Job]:
    j = reindex_jobs.c
    query = select(reindex_jobs).where(
        j.origin == CLI, j.state != DONE, j.owner_id.in_(owners) if owners else true()
    )
    return (await session.execute(query.order_by(j.created_at, j.id))).mappings().all()


async def newest(session: AsyncSession, owner_id: uuid.UUID, limit: int) -> Sequence[Job]:
    j = reindex_jobs.c
    leased = (j.lease_owner.is_not(None) & (j.lease_expires_at > func.now())).label("leased")
    query = (
        select(reindex_jobs, leased)
        .where(j.owner_id == owner_id)
        .order_by(j.created_at.desc(), j.id.desc())
        .limit(limit)
    )
    return (await session.execute(query)).mappings().all()


async def by_ids(session: AsyncSession, ids: Sequence[uuid.UUID]) -> Sequence[Job]:
    j = reindex_jobs.c
    query = select(reindex_jobs).where(j.id.in_(ids)).order_by(j.created_at, j.id)
    return (await session.execute(query)).mappings().all()


async def claim(
    session: AsyncSession,
    runner: str,
    lease_s: float,
    *,
    origin: str,
    among: Sequence[uuid.UUID] | None = None,
    dead_holders: Sequence[str] = (),
) -> Job | None:
    """Take the lease of the oldest unfinished job nobody holds (or whose holder let its
    lease expire, or is one of ``dead_holders``); None when there is none."""
    j = reindex_jobs.c
    free = or_(j.lease_owner.is_(None), j.lease_expires_at < func.now())
    if dead_holders:
        free = or_(free, j.lease_owner.in_(dead_holders))
    chosen = j.id.in_(among) if among is not None else true()
    candidate = (
        select(j.id)
        .where(j.origin == origin, j.state != DONE, free, chosen, ~_sibling_running())
        .order_by(j.created_at, j.id)
        .limit(1)
        .with_for_update(skip_locked=True)
        .scalar_subquery()
    )
    statement = (
        update(reindex_jobs)
        .where(j.id == candidate)
        .values(
            _lease(runner, lease_s)
            | {"state": RUNNING, "started_at": func.coalesce(j.started_at, func.now())}
        )
        .returning(reindex_jobs)
    )
    job: Job | None = (await session.execute(statement)).mappings().one_or_none()
    if job is not None and job["cursor"] is None and job["done"] == 0:
        total = await count_selected(session, job)
        await session.execute(update(reindex_jobs).where(j.id == job["id"]).values(total=total))
        job = {**job, "total": total}
    return job


def _sibling_running() -> ColumnElement[bool]:
    """Another job of the same tenant and schema under a live lease: the two would rewrite
    the same records side by side, so the later one waits for it."""
    j, other = reindex_jobs.c, reindex_jobs.alias("other").c
    return (
        select(other.id)
        .where(
            other.owner_id == j.owner_id,
            other.schema_name.is_not_distinct_from(j.schema_name),
            other.id != j.id,
            other.state == RUNNING,
            other.lease_expires_at > func.now(),
        )
        .exists()
    )


def _lease(runner: str, lease_s: float) -> dict[str, Any]:
    return {
        "lease_owner": runner,
        "lease_expires_at": func.now() + func.make_interval(0, 0, 0, 0, 0, 0, lease_s),
        "heartbeat_at": func.now(),
        "updated_at": func.now(),
    }


async def heartbeat(session: AsyncSession, job_id: uuid.UUID, runner: str, lease_s: float) -> bool:
    """Renew the lease; False when another runner holds it now."""
    j = reindex_jobs.c
    statement = (
        update(reindex_jobs)
        .where(j.id == job_id, j.lease_owner == runner)
        .values(**_lease(runner, lease_s))
    )
    return bool(getattr(await session.execute(statement), "rowcount", 0))


async def lock_held(
    session: AsyncSession, job_id: uuid.UUID, runner: str, cursor: uuid.UUID | None
) -> Job | None:
    """Lock the job for a batch's commit: only while ``runner`` holds the lease and the
    cursor is where the batch started (a batch is never committed twice)."""
    j = reindex_jobs.c
    at = j.cursor == cursor if cursor is not None else j.cursor.is_(None)
    query = select(reindex_jobs).where(j.id == job_id, j.lease_owner == runner, at)
    return (await session.execute(query.with_for_update())).mappings().one_or_none()


async def advance(
    session: AsyncSession,
    job: Job,
    cursor: uuid.UUID,
    tally: Tally,
    *,
    lease_s: float,
    failures_kept: int,
) -> Job:
    """Move the cursor past a batch and add its counts (in the batch's transaction, on the
    job row :func:`lock_held` locked)."""
    j = reindex_jobs.c
    values: dict[str, Any] = {name: getattr(j, name) + getattr(tally, name) for name in COUNTS}
    values |= _lease(job["lease_owner"], lease_s) | {"cursor": cursor}
    if tally.failures and failures_kept:
        values["failures"] = [*job["failures"], *tally.failures][-failures_kept:]
    statement = update(reindex_jobs).where(j.id == job["id"]).values(values)
    advanced: Job = (await session.execute(statement.returning(reindex_jobs))).mappings().one()
    return advanced


async def finish(session: AsyncSession, job_id: uuid.UUID, runner: str) -> Job | None:
    j = reindex_jobs.c
    statement = (
        update(reindex_jobs)
        .where(j.id == job_id, j.lease_owner == runner)
        .values(state=DONE, finished_at=func.now(), updated_at=func.now(), lease_owner=None)
        .returning(reindex_jobs)
    )
    finished: Job | None = (await session.execute(statement)).mappings().one_or_none()
    return finished


async def release(session: AsyncSession, job_id: uuid.UUID, runner: str) -> None:
    """Give the lease back (a runner that stops cleanly): the next one need not wait."""
    j = reindex_jobs.c
    statement = (
        update(reindex_jobs)
        .where(j.id == job_id, j.lease_owner == runner)
        .values(lease_owner=None, lease_expires_at=None, updated_at=func.now())
    )
    await session.execute(statement)


def same_selection(job: Job, selection: Selection) -> bool:
    return bool(job["schema_name"] == selection.schema_name and job["since"] == selection.since)
