"""One assembly as the log stores it, read from the assembled context's own data (its
``explain`` and ``timings_ms``), and the single INSERT that stores it."""

from __future__ import annotations

import json
import time
import uuid
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import text

from cairn.breadcrumbs.replace import Rider

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


# The entry as a step of the assembly's write (cairn.breadcrumbs.replace.Rider). Its
# ``write`` time is the Python before the statement was sent plus the database's clock from
# the statement's arrival to this row, which comes after the record's own steps: the reply
# and the commit are not in it (nor were they when the entry was its own statement).
_WRITTEN_SQL = (
    "INSERT INTO assemblies (owner_id, agent_id, origin, session_tag, trigger_id, query_text,"
    " domain, seed_counts, selected_ids, token_count, token_budget, timings_ms, total_ms,"
    " cache_hit, degraded)"
    " SELECT CAST(:rider_owner AS uuid), CAST(:rider_agent AS text),"
    " CAST(:rider_origin AS text), CAST(:rider_session AS text), CAST(:rider_trigger AS uuid),"
    " CAST(:rider_query AS text), CAST(:rider_domain AS text), CAST(:rider_seeds AS jsonb),"
    " CAST(:rider_selected AS uuid[]), CAST(:rider_tokens AS integer),"
    " CAST(:rider_budget AS integer),"
    " CAST(:rider_timings AS jsonb) || jsonb_build_object('write', w.ms, 'total', w.total),"
    " w.total, CAST(:rider_cache_hit AS boolean), CAST(:rider_degraded AS text[])"
    " FROM (SELECT m.ms, m.ms + round(CAST(:rider_total AS numeric), 3) AS total FROM ("
    "SELECT round(CAST(:rider_before_ms AS numeric) + 1000 * extract(epoch FROM"
    " clock_timestamp() - statement_timestamp()), 3) AS ms) AS m) AS w"
)


def written_with(entry: AssemblyEntry, started: float) -> Rider:
    """``entry`` logged by the assembly's write, which began at ``started``
    (``time.perf_counter``); the entry's timings are the phases before the write."""

    def params() -> dict[str, object]:
        values = entry.values()
        return {
            "rider_owner": entry.owner_id, "rider_agent": entry.agent_id,
            "rider_origin": entry.origin, "rider_session": entry.session_tag,
            "rider_trigger": entry.trigger_id, "rider_query": entry.query_text,
            "rider_domain": entry.domain, "rider_seeds": json.dumps(entry.seed_counts),
            "rider_selected": entry.selected_ids, "rider_tokens": entry.token_count,
            "rider_budget": entry.token_budget, "rider_timings": json.dumps(values["timings_ms"]),
            "rider_total": entry.total_ms, "rider_cache_hit": entry.cache_hit,
            "rider_degraded": entry.degraded,
            "rider_before_ms": (time.perf_counter() - started) * 1000.0,
        }  # fmt: skip

    return Rider(_WRITTEN_SQL, params)
