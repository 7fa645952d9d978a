"""One assembly as the log stores it, read from the assembled context's own data (its
``explain`` and ``timings_ms``), and the single INSERT that stores it."""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import insert, text
from sqlalchemy.ext.asyncio import AsyncSession

from cairn.db.models import assemblies

# A log entry's commit need not wait for the WAL flush: a crash may lose the last
# entries, never corrupt them.
ASYNCHRONOUS_COMMIT = text("SET LOCAL synchronous_commit TO off")

# Where an assembly was asked for.
WORKER = "worker"  # an event triggered it (cairn worker)
ASSEMBLE = "assemble"  # POST /contexts/assemble
QUERY = "query"  # POST /contexts/query (written nowhere but here)

# An on-demand query is kept this long in the log; the full text stays with the client.
QUERY_TEXT_CHARS = 2000


@dataclass(frozen=True, slots=True)
class AssemblyEntry:
    owner_id: uuid.UUID
    agent_id: str
    origin: str
    session_tag: str | None
    trigger_id: uuid.UUID | None
    query_text: str | None
    domain: str | None
    seed_counts: dict[str, int]
    selected_ids: list[uuid.UUID]
    token_count: int
    token_budget: int
    timings_ms: dict[str, float]
    cache_hit: bool = False
    degraded: list[str] = field(default_factory=list)

    @property
    def total_ms(self) -> float:
        return float(self.timings_ms.get("total", sum(self.timings_ms.values())))

    def values(self) -> dict[str, Any]:
        """The table row's columns (``id`` and ``created_at`` are the database's)."""
        return {
            "owner_id": self.owner_id, "agent_id": self.agent_id, "origin": self.origin,
            "session_tag": self.session_tag, "trigger_id": self.trigger_id,
            "query_text": self.query_text, "domain": self.domain,
            "seed_counts": self.seed_counts, "selected_ids": self.selected_ids,
            "token_count": self.token_count, "token_budget": self.token_budget,
            "timings_ms": self.timings_ms, "total_ms": self.total_ms,
            "cache_hit": self.cache_hit, "degraded": self.degraded,
        }  # fmt: skip


def entry_of(
    owner_id: uuid.UUID,
    agent_id: str,
    origin: str,
    context: Mapping[str, Any],
    *,
    session_tag: str | None,
    trigger_id: uuid.UUID | None = None,
    query_text: str | None = None,
    timings_ms: Mapping[str, float] | None = None,
    cache_hit: bool = False,
    degraded: Sequence[str] = (),
) -> AssemblyEntry:
    """The entry of an assembled context (``assemble``'s ``context`` or an on-demand
    answer): the seeds counted per source, the selected ids in their order, the domain the
    trigger was classified into (``explain.signals.domain``, absent without domains).
    ``timings_ms`` replaces the context's own timings (they may leave out the write)."""
    explain: Mapping[str, Any] = context.get("explain") or {}
    counts = Counter(str(seed.get("source")) for seed in explain.get("seeds", ()))
    signal = (explain.get("signals") or {}).get("domain") or {}
    return AssemblyEntry(
        owner_id=owner_id, agent_id=agent_id, origin=origin, session_tag=session_tag,
        trigger_id=trigger_id,
        query_text=None if query_text is None else query_text[:QUERY_TEXT_CHARS],
        domain=signal.get("name"), seed_counts=dict(counts),
        selected_ids=[uuid.UUID(item["record_id"]) for item in explain.get("selected", ())],
        token_count=int(context.get("token_count", 0)),
        token_budget=int(context.get("token_budget", 0)),
        timings_ms=dict(timings_ms if timings_ms is not None else context.get("timings_ms", {})),
        cache_hit=cache_hit, degraded=list(degraded),
    )  # fmt: skip


async def record_assembly(session: AsyncSession, entry: AssemblyEntry) -> None:
    """One INSERT in the caller's transaction. Sent on the session's connection, not as a
    session execute: the answer cache (context.answers) treats every session write as a
    change of the tenant's data, which a log row is not."""
    connection = await session.connection()
    await connection.execute(insert(assemblies).values(**entry.values()))
