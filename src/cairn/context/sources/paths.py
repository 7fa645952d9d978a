"""``context_sources.paths``: prior fixes. When the trigger reports an error, the tenant's
**resolved** debug paths (``debug.path.v1``, see cairn.paths) that met the same error, or
a similar one, are seeds: the next agent that meets the error is told what fixed it.

Matching, cheapest first:

- **same error signature**: the path's signature, or that of any of its problem waypoints
  (an error it pivoted away from is still an error it got past), equals the trigger's —
  an index probe each (migration 0020);
- **similar error**: the share of the words of the trigger's error line (its signature,
  masks left out) that the path's signature or root cause contains, at least
  ``min_similarity``. PostgreSQL's own text parser splits both sides (``'simple'``: no
  stemming, an error's words are identifiers). Paths have no embedding, ``llm_text``,
  lexemes or keyword pointers (breadcrumbs.derived.NOT_EMBEDDED_SCHEMAS), and ``pg_trgm``
  is not in the PostgreSQL that ``cairn up`` embeds, so the words are read from the
  path's context as it is scanned: the tenant's resolved paths, through the partial index
  of 0020 — their number grows with solved problems, not with records.

A resolved path is never the trigger's session's active one. Off unless the agent lists
the source; a trigger that reports no error seeds nothing (a conversation never does).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import text

from cairn.context.model import Record, Seed
from cairn.context.records import LIVE, NOT_EXCLUDED
from cairn.context.sources.base import SeedBatch, SeedCost, SeedRequest
from cairn.context.trigger import QUERY_SCHEMA
from cairn.paths.repository import PATH_SCHEMA, WAYPOINT_SCHEMA
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
_PRIOR_FIXES = f"""
    WITH probe AS MATERIALIZED (SELECT to_tsvector('simple', :words) AS tsv),
    same AS (
        SELECT id FROM breadcrumbs
        WHERE owner_id = :owner AND schema_name = '{PATH_SCHEMA}'
          AND context->>'status' = 'resolved' AND context->>'signature' = :signature
        UNION
        SELECT CAST(context->>'path_id' AS uuid) FROM breadcrumbs
        WHERE owner_id = :owner AND schema_name = '{WAYPOINT_SCHEMA}'
          AND context->>'signature' = :signature AND {LIVE}
    ),
    scored AS (
        SELECT id, context->>'signature' AS signature, id IN (SELECT id FROM same) AS exact,
               (length(probe.tsv) - length(ts_delete(
                   probe.tsv, tsvector_to_array(to_tsvector('simple', {_PATH_WORDS})))))
               / greatest(length(probe.tsv), 1)::float AS similarity,
               context->>'resolved_at' AS resolved_at
        FROM breadcrumbs, probe
        WHERE owner_id = :owner AND schema_name = '{PATH_SCHEMA}'
          AND context->>'status' = 'resolved' AND {LIVE} AND {NOT_EXCLUDED}
    )
    SELECT id, signature, exact, similarity FROM scored
    WHERE exact OR similarity >= :floor
    ORDER BY exact DESC, similarity DESC, resolved_at DESC NULLS LAST, id
    LIMIT :limit
"""
NEAR_MISSES = 5


class Paths:
    name = NAME
    # A fix for the very error at hand comes before almost everything else.
    cost = SeedCost(base=0.01, span=0.4)

    async def seeds(self, request: SeedRequest) -> SeedBatch:
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
        }  # fmt: skip
        rows = (await request.session.execute(text(_PRIOR_FIXES), params)).all()
        seeds: list[Seed] = []
        below: list[tuple[uuid.UUID, float]] = []
        for path_id, matched, exact, similarity in rows:
            score = 1.0 if exact else float(similarity)
            if not exact and score < config.min_similarity:
                below.append((path_id, round(score, 4)))
            elif len(seeds) < config.limit:
                seeds.append(Seed(path_id, NAME, score, _detail(path_id, exact, score, matched)))
        return SeedBatch(seeds, below)


def words_of(signature: str) -> str:
    """The signature's words for the text parser: its masks are no words."""
    return _MASKS.sub(" ", signature)


def _detail(path_id: uuid.UUID, exact: bool, score: float, matched: str | None) -> str:
    if exact:
        return f"prior fix: path {path_id}, {SAME}"
    return f"prior fix: path {path_id}, {SIMILAR} (similarity {score:.2f} to {matched!r})"


SOURCE = Paths()
