"""``context_sources.paths``: prior fixes. When the trigger reports an error, the tenant's
**resolved** debug paths (``debug.path.v1``, see cairn.paths) that met the same error, or
a similar one, are seeds: the next agent that meets the error is told what fixed it.

Matching, cheapest first:

- **same error signature**: the path's signature (the error it resolved) or its root cause
  (the error it started from, unless the agent noted a discovery) equals the trigger's;
- **similar error**: the share of the words of the trigger's error line (its signature,
  masks left out) that the path's signature and root cause contain, at least
  ``min_similarity``, among the newest ``SCANNED`` resolved paths. PostgreSQL's own text
  parser splits both sides (``'simple'``: no stemming, an error's words are identifiers).
  Paths have no embedding, ``llm_text``, lexemes or keyword pointers
  (breadcrumbs.derived.NOT_EMBEDDED_SCHEMAS), and ``pg_trgm`` is not in the PostgreSQL
  that ``cairn up`` embeds, so the words are read from the path's context as it is
  scanned.

Both scan the tenant's resolved paths through the partial index of migration 0020: their
number grows with solved problems, not with records. Waypoints are not searched: they grow
with every tool call, and under row-level security no expression index can answer for them.

A resolved path is never the trigger's session's active one. Off unless the agent lists
the source; a trigger that reports no error seeds nothing (a conversation never does).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cairn.context.model import Record, Seed
from cairn.context.records import LIVE, NOT_EXCLUDED
from cairn.context.sources.base import (
    Rows,
    SeedBatch,
    SeedCost,
    SeedQuery,
    SeedRequest,
    run_alone,
)
from cairn.context.trigger import QUERY_SCHEMA
from cairn.paths.repository import PATH_SCHEMA
from cairn.paths.signals import Kind, classify

NAME = "paths"
DEFAULT_LIMIT = 3
MAX_LIMIT = 20
# Three of every four words of the trigger's error line: a short line (``KeyError:
# 'user_id'``) must match in full, a long one may differ in a word it names.
DEFAULT_MIN_SIMILARITY = 0.75
_MASKS = re.compile(r"<(?:path|n|id)>")  # cairn.paths.signature's placeholders
SAME = "same error signature"
SIMILAR = "similar error"


@dataclass(frozen=True, slots=True)
class PathsConfig:
    limit: int = DEFAULT_LIMIT
    min_similarity: float = DEFAULT_MIN_SIMILARITY


def parse(raw: Any) -> PathsConfig | None:
    """The agent's ``context_sources.paths``; None when absent or disabled."""
    if not isinstance(raw, Mapping) or raw.get("enabled") is False:
        return None
    limit, similarity = raw.get("limit"), raw.get("min_similarity")
    return PathsConfig(
        limit=max(1, min(limit, MAX_LIMIT)) if isinstance(limit, int) else DEFAULT_LIMIT,
        min_similarity=float(similarity)
        if isinstance(similarity, int | float) and not isinstance(similarity, bool)
        else DEFAULT_MIN_SIMILARITY,
    )


def enabled(context_sources: Mapping[str, Any]) -> bool:
    """Whether an agent's assemblies carry prior fixes (and their section)."""
    return parse(context_sources.get(NAME)) is not None


def trigger_signature(record: Record, query_text: str = "") -> str | None:
    """The error signature the trigger reports, if it reports an error (a query's own words
    are read as the text of a note)."""
    if record.schema_name == QUERY_SCHEMA:
        signal = classify({"title": "", "context": {"text": query_text}})
    else:
        signal = classify({"title": record.title, "tags": record.tags, "context": record.context})
    return signal.signature if signal.kind is Kind.ERROR else None


_WORDS = "regexp_replace({text}, '<(path|n|id)>', ' ', 'g')"
_PATH_WORDS = _WORDS.format(
    text="coalesce(context->>'signature', '') || ' ' || coalesce(context->>'root_cause', '')"
)
_RESOLVED = f"""
    SELECT id, context FROM breadcrumbs
    WHERE owner_id = :owner AND schema_name = '{PATH_SCHEMA}'
      AND context->>'status' = 'resolved' AND {LIVE} AND {NOT_EXCLUDED}
"""
# Two scans of the tenant's resolved paths, newest first (the partial index of 0020): every
# one compared by signature, the newest ``:scanned`` by their words too. Under row-level
# security no index can answer ``context->>...`` (not leakproof), so the equality is a
# filter; the words cost a text parse per path, hence the bound.
_PRIOR_FIXES = f"""
    WITH probe AS MATERIALIZED (SELECT to_tsvector('simple', :words) AS tsv),
    same AS MATERIALIZED (
        SELECT id, context FROM ({_RESOLVED} ORDER BY updated_at DESC) AS resolved
        WHERE context->>'signature' = :signature OR context->>'root_cause' = :signature
        LIMIT :limit
    ),
    recent AS (
        SELECT id, context FROM ({_RESOLVED} ORDER BY updated_at DESC LIMIT :scanned) AS newest
        WHERE id NOT IN (SELECT id FROM same)
    ),
    scored AS (
        SELECT id, context, true AS exact, 1.0::float AS similarity FROM same
        UNION ALL
        SELECT id, context, false,
               (length(probe.tsv) - length(ts_delete(
                   probe.tsv, tsvector_to_array(to_tsvector('simple', {_PATH_WORDS})))))
               / greatest(length(probe.tsv), 1)::float
        FROM recent, probe
    )
    SELECT id, context->>'signature' AS signature, exact, similarity FROM scored
    WHERE exact OR similarity >= :floor
    ORDER BY exact DESC, similarity DESC, context->>'resolved_at' DESC NULLS LAST, id
    LIMIT :limit
"""
# Paths whose words are compared: the newest fixes (a tenant's first thousand resolved
# paths cost ~15 ms to parse on the shared test machine; see the module docstring).
SCANNED = 1000
NEAR_MISSES = 5


class Paths:
    name = NAME
    # A fix for the very error at hand comes before almost everything else.
    cost = SeedCost(base=0.01, span=0.4)

    async def seeds(self, request: SeedRequest) -> SeedBatch:
        return await run_alone(request.session, await self.query(request))

    async def query(self, request: SeedRequest) -> SeedQuery | SeedBatch:
        config = parse(request.agent.context_sources.get(NAME))
        if config is None:
            return SeedBatch([])
        signature = trigger_signature(request.trigger.record, request.trigger.text)
        if signature is None:
            return SeedBatch([])
        params = {
            "owner": request.owner_id, "signature": signature, "words": words_of(signature),
            "excluded": sorted(request.excluded),
            "floor": config.min_similarity / 2, "limit": config.limit + NEAR_MISSES,
            "scanned": SCANNED,
        }  # fmt: skip
        return SeedQuery(_PRIOR_FIXES, params, lambda rows: _read(config, rows))


def _read(config: PathsConfig, rows: Rows) -> SeedBatch:
    seeds: list[Seed] = []
    below: list[tuple[uuid.UUID, float]] = []
    for row in rows:
        path_id, exact = row["id"], row["exact"]
        score = 1.0 if exact else float(row["similarity"])
        if not exact and score < config.min_similarity:
            below.append((path_id, round(score, 4)))
        elif len(seeds) < config.limit:
            detail = _detail(path_id, exact, score, row["signature"])
            seeds.append(Seed(path_id, NAME, score, detail))
    return SeedBatch(seeds, below)


def words_of(signature: str) -> str:
    """The signature's words for the text parser: its masks are no words."""
    return _MASKS.sub(" ", signature)


def _detail(path_id: uuid.UUID, exact: bool, score: float, matched: str | None) -> str:
    if exact:
        return f"prior fix: path {path_id}, {SAME}"
    return f"prior fix: path {path_id}, {SIMILAR} (similarity {score:.2f} to {matched!r})"


SOURCE = Paths()
