"""The coverage figures as SQL: counts per stage and state, per schema and per session tag
prefix, the commonest errors, and islands. ``owner`` None: every tenant (the gauges, on a
system session); otherwise one tenant (and row-level security too, on a tenant session).
Only live records count (no expired ``ttl``)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from cairn.context.model import SESSION_PREFIX
from cairn.processing.stages import FAILED

CONTEXT_SCHEMA = "agent.context.v1"
# A session tag's prefix: the tag without its last segment after a ``-``, ``:``, ``_``,
# ``/`` or ``.`` (``session:locomo-conv-26-s3`` → ``session:locomo-conv-26``); a session id
# without one is its own prefix.
_SESSION_ID = f"substr(tag, {len(SESSION_PREFIX) + 1})"
_PREFIX = (
    f"'{SESSION_PREFIX}' || coalesce(nullif(regexp_replace({_SESSION_ID},"
    f" '[-_/.:][^-_/.:]*$', ''), ''), {_SESSION_ID})"
)
_LIVE = "(b.ttl IS NULL OR b.ttl > now())"


def _owned(alias: str, owner: uuid.UUID | None) -> str:
    return f"{alias}.owner_id = :owner" if owner is not None else "true"


def _params(owner: uuid.UUID | None, **more: Any) -> dict[str, Any]:
    return {"owner": owner, **more} if owner is not None else more


async def _rows(
    session: AsyncSession, sql: str, owner: uuid.UUID | None, **more: Any
) -> Sequence[Any]:
    return (await session.execute(text(sql), _params(owner, **more))).all()


async def records_by_schema(session: AsyncSession, owner: uuid.UUID | None) -> Sequence[Any]:
    """(schema_name, records)."""
    sql = (
        "SELECT b.schema_name, count(*) FROM breadcrumbs b"
        f" WHERE {_owned('b', owner)} AND {_LIVE} GROUP BY 1"
    )
    return await _rows(session, sql, owner)


async def states_by_schema(session: AsyncSession, owner: uuid.UUID | None) -> Sequence[Any]:
    """(schema_name, stage, state, records)."""
    sql = (
        "SELECT b.schema_name, p.stage, p.state, count(*) FROM record_processing p"
        " JOIN breadcrumbs b ON b.id = p.breadcrumb_id"
        f" WHERE {_owned('p', owner)} AND {_LIVE} GROUP BY 1, 2, 3"
    )
    return await _rows(session, sql, owner)


# Each record's session tag prefixes, the tags unnested once: a record counts once per
# prefix, however many of its session tags share it.
_SESSIONS = (
    "WITH tagged AS MATERIALIZED (SELECT DISTINCT b.id, {prefix} AS prefix FROM breadcrumbs b,"
    " unnest(b.tags) AS tag WHERE {owned} AND {live} AND tag LIKE '{session}%')"
)


def _sessions_cte(owner: uuid.UUID | None) -> str:
    return _SESSIONS.format(
        prefix=_PREFIX, owned=_owned("b", owner), live=_LIVE, session=SESSION_PREFIX
    )


async def by_session(session: AsyncSession, owner: uuid.UUID | None) -> tuple[list[Any], list[Any]]:
    """(session tag prefix, records) and (session tag prefix, stage, state, records), from
    one statement: unnesting every record's tags is the costly part, done once for both."""
    sql = _sessions_cte(owner) + (
        " SELECT prefix, NULL AS stage, NULL AS state, count(*) FROM tagged GROUP BY 1"
        " UNION ALL SELECT t.prefix, p.stage, p.state, count(*) FROM tagged t"
        " JOIN record_processing p ON p.breadcrumb_id = t.id GROUP BY 1, 2, 3"
    )
    rows = await _rows(session, sql, owner)
    records = [(prefix, count) for prefix, stage, _, count in rows if stage is None]
    states = [row for row in rows if row[1] is not None]
    return records, states


async def common_errors(
    session: AsyncSession, owner: uuid.UUID | None, *, per_stage: int
) -> Sequence[Any]:
    """(stage, last_error, records): the commonest errors of failed stages, per stage."""
    sql = (
        "SELECT stage, last_error, n FROM (SELECT p.stage, p.last_error, count(*) AS n,"
        " row_number() OVER (PARTITION BY p.stage ORDER BY count(*) DESC, p.last_error) AS r"
        " FROM record_processing p JOIN breadcrumbs b ON b.id = p.breadcrumb_id"
        f" WHERE {_owned('p', owner)} AND {_LIVE} AND p.state = '{FAILED}'"
        " GROUP BY 1, 2) ranked WHERE r <= :per_stage ORDER BY stage, n DESC, last_error"
    )
    return await _rows(session, sql, owner, per_stage=per_stage)


_ISLANDS = (
    "FROM breadcrumbs b WHERE {owned} AND {live}"
    f" AND b.schema_name IS DISTINCT FROM '{CONTEXT_SCHEMA}'"
    " AND NOT EXISTS (SELECT 1 FROM breadcrumb_edges e WHERE e.from_id = b.id)"
    " AND NOT EXISTS (SELECT 1 FROM breadcrumb_edges e WHERE e.to_id = b.id)"
)


async def islands(
    session: AsyncSession, owner: uuid.UUID | None, *, sample: int
) -> tuple[int, list[uuid.UUID]]:
    """Records (but assembled contexts, which never have edges) with no edge at all: how
    many, and the oldest few."""
    where = _ISLANDS.format(owned=_owned("b", owner), live=_LIVE)
    if sample <= 0:
        (count,) = (await _rows(session, f"SELECT count(*) {where}", owner))[0]
        return int(count), []
    # One scan for both: the count over every island rides on each of the oldest few.
    oldest = f"SELECT b.id, count(*) OVER () {where} ORDER BY b.created_at, b.id LIMIT :sample"
    rows = await _rows(session, oldest, owner, sample=sample)
    return (int(rows[0][1]) if rows else 0), [row[0] for row in rows]


async def record_states(
    session: AsyncSession, owner: uuid.UUID, record_id: uuid.UUID
) -> Sequence[Any] | None:
    """The processing rows of one live record of ``owner``: (stage, state, attempts, done_at,
    last_error, next_attempt_at, updated_at); None when there is no such record."""
    found = await session.execute(
        text(f"SELECT 1 FROM breadcrumbs b WHERE b.id = :id AND b.owner_id = :owner AND {_LIVE}"),
        {"id": record_id, "owner": owner},
    )
    if found.first() is None:
        return None
    rows = await session.execute(
        text(
            "SELECT stage, state, attempts, done_at, last_error, next_attempt_at, updated_at"
            " FROM record_processing WHERE owner_id = :owner AND breadcrumb_id = :id"
        ),
        {"id": record_id, "owner": owner},
    )
    return list(rows)
