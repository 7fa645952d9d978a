"""``/assemblies``: the tenant's assembly log, newest first, and per-agent figures.

Curators only, like the other operational logs (``/worker/dead``, ``/dlq``): an entry names
any agent's queries and what was selected for it, across agents."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

from fastapi import APIRouter, Query

from cairn.api.deps import PrincipalDep, SessionDep, require_role
from cairn.assemblies import repository
from cairn.assemblies.repository import EntryFilter
from cairn.assemblies.schemas import AgentStats, AssemblyLogEntry, AssemblyPage, AssemblyStats
from cairn.errors import InvalidInput
from cairn.principal import Role

router = APIRouter(prefix="/assemblies", tags=["assemblies"])
CURATOR = require_role(Role.CURATOR)

AGENT_ID = r"^[^\s]{1,200}$"
SESSION = r"^(session:)?[^\s]{1,200}$"
CURSOR = r"^[1-9][0-9]{0,17}$"  # an entry id: below 2**63

AgentQuery = Annotated[str | None, Query(pattern=AGENT_ID)]
SinceQuery = Annotated[datetime | None, Query(description="ISO 8601; no zone: UTC")]


@router.get("", dependencies=[CURATOR])
async def list_assemblies(
    db: SessionDep,
    principal: PrincipalDep,
    agent_id: AgentQuery = None,
    session: Annotated[str | None, Query(pattern=SESSION)] = None,
    since: SinceQuery = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    cursor: Annotated[str | None, Query(pattern=CURSOR)] = None,
) -> AssemblyPage:
    """Assemblies newest first; ``session`` with or without its ``session:`` prefix;
    ``cursor``: a page's ``next_cursor``."""
    flt = EntryFilter(
        agent_id=agent_id,
        session_tag=None if session is None else "session:" + session.removeprefix("session:"),
        since=_utc(since),
        before_id=None if cursor is None else int(cursor),
    )
    rows = await repository.newest(db, principal.owner_id, flt, limit + 1)
    items = [AssemblyLogEntry.model_validate(dict(row)) for row in rows[:limit]]
    more = len(rows) > limit
    return AssemblyPage(items=items, next_cursor=str(items[-1].id) if more else None)


@router.get("/stats", dependencies=[CURATOR])
async def assembly_stats(
    db: SessionDep, principal: PrincipalDep, since: SinceQuery = None
) -> AssemblyStats:
    """Per agent since ``since`` (default: every retained entry): how many assemblies, the
    median and 99th percentile of their milliseconds, the mean tokens and budget use."""
    start = _utc(since)
    rows = await repository.per_agent(db, principal.owner_id, start)
    return AssemblyStats(since=start, agents=[AgentStats.model_validate(dict(r)) for r in rows])


def _utc(moment: datetime | None) -> datetime | None:
    if moment is None:
        return None
    try:
        return moment.astimezone(UTC) if moment.tzinfo else moment.replace(tzinfo=UTC)
    except (OverflowError, ValueError) as error:
        raise InvalidInput("since: not a representable time") from error
