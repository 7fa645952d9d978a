"""``context_sources.signals``: records that name what the trigger names — the files and
modules it mentions (context.signals) — found by their text or by a ``file:<path>`` /
``module:<name>`` tag. Seed 003's "pull knowledge by the task's signals": a gotcha whose
location is ``src/app/db.py`` is pulled by a task that mentions that file, however little
the two texts are otherwise alike.

The match is PostgreSQL's own: its text parser keeps a path (``src/app/db.py``) or a dotted
name (``app.db``) as one lexeme in ``search_vector``, so the terms are parsed the same way
and looked up in the GIN index. A path also matches by its last part (``db.py``); a record
that names only the full path is not found by a trigger that names only the file name.
Off unless the agent lists the source.

Score: ``0.5 + 0.5 * matched / mentioned``, where each file or module the trigger mentions
counts 1 and a match by a file's last part only counts half — one shared file is a reason
to look, all of them a strong one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cairn.context.model import Seed
from cairn.context.records import LIVE, NOT_EXCLUDED
from cairn.context.sources.base import (
    Rows,
    SeedBatch,
    SeedCost,
    SeedQuery,
    SeedRequest,
    run_alone,
)

NAME = "signals"
DEFAULT_LIMIT = 10
MAX_LIMIT = 100


@dataclass(frozen=True, slots=True)
class SignalsConfig:
    limit: int = DEFAULT_LIMIT
    schemas: tuple[str, ...] = ()


def parse(raw: Any) -> SignalsConfig | None:
    """The agent's ``context_sources.signals``; None when absent or disabled."""
    if not isinstance(raw, Mapping) or raw.get("enabled") is False:
        return None
    limit = raw.get("limit")
    schemas = raw.get("schemas") if isinstance(raw.get("schemas"), list) else None
    return SignalsConfig(
        limit=max(1, min(limit, MAX_LIMIT)) if isinstance(limit, int) else DEFAULT_LIMIT,
        schemas=tuple(s for s in schemas if isinstance(s, str))
        if isinstance(schemas, list)
        else (),
    )


BY_NAME_ONLY = 0.5


def terms_of(files: Sequence[str], modules: Sequence[str]) -> dict[str, float]:
    """What to look up, with what a match is worth: each file as written and by its last
    part, each module."""
    terms: dict[str, float] = {}
    for path in [*files, *modules]:
        terms[path] = 1.0
    for path in files:
        terms.setdefault(path.rstrip("/").rsplit("/", 1)[-1], BY_NAME_ONLY)
    return {term: weight for term, weight in terms.items() if term}


def _tsquery_operand(term: str) -> str:
    return "'" + term.replace("\\", "\\\\").replace("'", "''") + "'"


_MATCHES = """
    WITH terms AS (
        SELECT term, to_tsquery('english', operand) AS query
        FROM unnest(CAST(:terms AS text[]), CAST(:operands AS text[])) AS t(term, operand)
    ),
    found AS (
        SELECT id, updated_at FROM breadcrumbs
        WHERE {where}
          AND (search_vector @@ to_tsquery('english', :any_term) OR tags && :tags)
        ORDER BY ts_rank(search_vector, to_tsquery('english', :any_term)) DESC,
                 updated_at DESC, id
        LIMIT :limit
    )
    SELECT found.id,
           ARRAY(SELECT term FROM terms
                 WHERE b.search_vector @@ terms.query
                    OR b.tags && ARRAY['file:' || term, 'module:' || term]) AS matched
    FROM found JOIN breadcrumbs b USING (id)
    ORDER BY found.updated_at DESC, found.id
"""


class Signals:
    name = NAME
    cost = SeedCost(base=0.05, span=0.6)

    async def seeds(self, request: SeedRequest) -> SeedBatch:
        return await run_alone(request.session, await self.query(request))

    async def query(self, request: SeedRequest) -> SeedQuery | SeedBatch:
        config = parse(request.agent.context_sources.get(NAME))
        terms = terms_of(request.signals.files, request.signals.modules)
        if config is None or not terms:
            return SeedBatch([])
        clauses = ["owner_id = :owner", "id <> :trigger", LIVE, NOT_EXCLUDED]
        operands = [_tsquery_operand(term) for term in terms]
        mentioned = len(request.signals.files) + len(request.signals.modules)
        params: dict[str, Any] = {
            "owner": request.owner_id, "trigger": request.trigger.record.id,
            "excluded": sorted(request.excluded), "terms": list(terms), "operands": operands,
            "any_term": " | ".join(operands), "limit": config.limit,
            "tags": [f"{kind}:{term}" for term in terms for kind in ("file", "module")],
        }  # fmt: skip
        if config.schemas:
            clauses.append("schema_name = ANY(:schemas)")
            params["schemas"] = list(config.schemas)
        query = _MATCHES.format(where=" AND ".join(clauses))
        return SeedQuery(query, params, lambda rows: _read(terms, mentioned, rows))


def _read(terms: Mapping[str, float], mentioned: int, rows: Rows) -> SeedBatch:
    seeds = []
    for row in rows:
        record_id, matched = row["id"], row["matched"]
        share = min(1.0, sum(terms[term] for term in matched) / mentioned)
        detail = "names " + ", ".join(matched) if matched else "names a signal"
        seeds.append(Seed(record_id, NAME, min(1.0, 0.5 + 0.5 * share), detail))
    seeds.sort(key=lambda seed: -seed.score)  # stable: newest first among equals
    return SeedBatch(seeds)


SOURCE = Signals()
