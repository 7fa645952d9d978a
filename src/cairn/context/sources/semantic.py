"""``context_sources.semantic``: hybrid search around the trigger — cosine similarity to the
trigger's embedding fused with BM25 over the records' text — restricted to the agent's
schemas (a real filter) and, with ``scope: session``, to the trigger's session. Filtered
searches rank the filtered subset exactly (pgvector would post-filter an HNSW scan of the
whole table and silently return fewer rows) — or, when a tenant's subset is large, take the
vector nominations from an HNSW index of the searched schemas alone (context.sources.nearest);
the owner's common words (context.terms) nominate no candidates.
``GET /breadcrumbs/search?mode=hybrid`` ranks with the same query, exactly (:func:`rank_hybrid`).
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Sequence
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from cairn.context.agents import SemanticSource
from cairn.context.model import Seed
from cairn.context.records import LIVE, NOT_EXCLUDED, isolated_sql
from cairn.context.sources import nearest
from cairn.context.sources.base import (
    Rows,
    SeedBatch,
    SeedCost,
    SeedQuery,
    SeedRequest,
    run_alone,
)
from cairn.context.terms import Common, CommonWords
from cairn.context.trigger import Probe, as_probe

NAME = "semantic"

# Fusion of the two signals for semantic seeds: cosine similarity, and BM25 over the
# records' stored lexemes (`search_vector`: PostgreSQL's English stemming; IDF and length
# norms from the searched subset), scaled by the best BM25 score of the search. The
# lexical part fills a share of what the cosine leaves to 1, so the score stays within
# [cosine, 1] and `min_similarity` keeps its meaning for records that share no word with
# the trigger, while a record that names the trigger's rare words rises above merely
# similar ones. (RCRT's thresholds, ~0.75, were set on its pad-token-inflated cosines;
# correctly pooled MiniLM puts a clearly relevant document near 0.6.) Weight and the
# temporal edge cost were tuned on the LoCoMo split (benchmarks/quality/locomo.py).
LEXICAL_WEIGHT = 0.7
BM25_K1 = 1.2
BM25_B = 0.75
# Above this many records the lexical score is computed over the candidates only (the
# vector neighbours and keyword-pointer matches), not the whole filtered subset.
LEXICAL_EXHAUSTIVE_ROWS = 5000
NEAR_MISSES = 20


class Semantic:
    name = NAME
    cost = SeedCost(base=0.0, span=1.0)

    async def query(self, request: SeedRequest) -> SeedQuery | SeedBatch:
        agent = request.agent.semantic
        scaled = dataclasses.replace(
            agent, min_similarity=agent.min_similarity * request.similarity_scale
        )
        return await semantic_query(
            request.session, request.owner_id, request.trigger.probe, scaled,
            request.pointers, request.sessions, request.excluded,
            common_words=request.common_words, isolated=request.isolated,
        )  # fmt: skip

    async def seeds(self, request: SeedRequest) -> SeedBatch:
        return await run_alone(request.session, await self.query(request))


SOURCE = Semantic()


async def semantic_seeds(
    session: AsyncSession,
    owner_id: uuid.UUID,
    trigger: uuid.UUID | Probe,
    source: SemanticSource,
    pointers: Sequence[str],
    session_tags: Sequence[str],
    excluded: frozenset[str],
    *,
    common_words: CommonWords | None = None,
    isolated: frozenset[str] = frozenset(),
) -> SeedBatch:
    """Hybrid search around the trigger; ``below_threshold`` lists the best near misses
    (at most ``NEAR_MISSES``: the explanation names why the closest ones are out, not every
    record of the subset). ``common_words`` is the process's cache (a fresh one counts)."""
    query = await semantic_query(
        session, owner_id, trigger, source, pointers, session_tags, excluded,
        common_words=common_words, isolated=isolated,
    )  # fmt: skip
    return await run_alone(session, query)


async def semantic_query(
    session: AsyncSession,
    owner_id: uuid.UUID,
    trigger: uuid.UUID | Probe,
    source: SemanticSource,
    pointers: Sequence[str],
    session_tags: Sequence[str],
    excluded: frozenset[str],
    *,
    common_words: CommonWords | None = None,
    isolated: frozenset[str] = frozenset(),
) -> SeedQuery | SeedBatch:
    """``semantic_seeds`` as a query (the owner's common words are read first, if the
    process's cache does not hold them)."""
    if not source.enabled:
        return SeedBatch([])
    words = common_words or CommonWords()
    common = await words.of(session, owner_id)
    near = await _near(session, owner_id, source, excluded)
    if near is not None:  # the subset's own posting lists are read (context.terms)
        common |= await words.costly(session, owner_id, near)
    hybrid = _hybrid_sql(
        owner_id, as_probe(trigger), source, pointers, common, session_tags, excluded, isolated,
        near=near,
    )  # fmt: skip
    if hybrid is None:
        return SeedBatch([])
    return SeedQuery(*hybrid, read=lambda rows: _read(source, rows))


async def _near(
    session: AsyncSession, owner_id: uuid.UUID, source: SemanticSource, excluded: frozenset[str]
) -> str | None:
    """The schema list to search through its partial HNSW index (context.sources.nearest),
    or None: the subset is ranked exactly. A session-scoped search stays exact (its subset
    is one session's records, which the index would have to filter after the scan)."""
    if source.scope != "global" or not source.schemas:
        return None
    where, params = _subset(owner_id, source, (), excluded, None)
    count = text(f"SELECT count(*) FROM (SELECT 1 FROM breadcrumbs WHERE {where} LIMIT :n) s")
    params |= {"trigger": uuid.UUID(int=0), "n": nearest.NEAR_SEARCH_ROWS}

    async def subset() -> int:
        return int(await session.scalar(count, params) or 0)

    return await nearest.INDEXES.usable(session, owner_id, source.schemas, subset)


def _subset(
    owner_id: uuid.UUID,
    source: SemanticSource,
    session_tags: Sequence[str],
    excluded: frozenset[str],
    near: str | None,
) -> tuple[str, dict[str, Any]]:
    """The filter of the searched records, and its parameters. With ``near`` the schemas
    are the index predicate's literal list (the planner proves the partial index applies
    from the same expression; a parameter would hide it from a generic plan)."""
    clauses = ["owner_id = :owner", "id <> :trigger", LIVE, NOT_EXCLUDED]
    params: dict[str, Any] = {"owner": owner_id, "excluded": sorted(excluded)}
    if near is not None:
        clauses.append(f"schema_name = ANY({near})")
    elif source.schemas:
        clauses.append("schema_name = ANY(:schemas)")
        params["schemas"] = list(source.schemas)
    if source.scope == "session":
        clauses.append("tags && :session_tags")
        params["session_tags"] = list(session_tags)
    return " AND ".join(clauses), params


def _read(source: SemanticSource, rows: Rows) -> SeedBatch:
    seeds: list[Seed] = []
    below: list[tuple[uuid.UUID, float]] = []
    isolated_ids: list[uuid.UUID] = []
    # The query already keeps at most `limit` seeds and NEAR_MISSES misses (and as many
    # isolated candidates), best first.
    for row in rows:
        score = float(row["score"])
        if row.get("isolated"):
            isolated_ids.append(row["id"])
            continue
        if score < source.min_similarity:
            below.append((row["id"], round(score, 4)))
            continue
        similarity, lexical = float(row["similarity"] or 0), float(row["lexical"])
        detail = f"similarity {similarity:.3f}, lexical {lexical:.2f}"
        seeds.append(Seed(row["id"], NAME, score, detail))
    return SeedBatch(seeds, below, isolated_ids)


async def rank_hybrid(
    session: AsyncSession,
    owner_id: uuid.UUID,
    probe: Probe,
    source: SemanticSource,
    pointers: Sequence[str],
    scope_tags: Sequence[str],
    *,
    common_words: CommonWords | None = None,
) -> list[dict[str, Any]]:
    """The semantic seeds' ranking as a search (``GET /breadcrumbs/search?mode=hybrid``):
    rows of ``id, similarity, lexical, score``, best first, nothing excluded."""
    common = await (common_words or CommonWords()).of(session, owner_id)
    hybrid = _hybrid_sql(owner_id, probe, source, pointers, common, scope_tags, frozenset())
    if hybrid is None:
        return []
    sql, params = hybrid
    rows = [dict(row) for row in (await session.execute(text(sql), params)).mappings().all()]
    for row in rows:
        row["lexical"], row["score"] = float(row["lexical"]), float(row["score"])
    return rows


def _hybrid_sql(
    owner_id: uuid.UUID,
    probe: Probe,
    source: SemanticSource,
    pointers: Sequence[str],
    common: Common,
    session_tags: Sequence[str],
    excluded: frozenset[str],
    isolated: frozenset[str] = frozenset(),
    *,
    near: str | None = None,
) -> tuple[str, dict[str, Any]] | None:
    """The filtered subset ranked by the fused score: exactly, or with ``near`` (the schema
    list of a valid partial index) from the index's nominations. A session-scoped search scores
    every record of the session (up to ``LEXICAL_EXHAUSTIVE_ROWS``); a wider one scores the
    candidates — the vector neighbours (one pass over the subset), the records sharing an
    uncommon keyword pointer and those matching an uncommon lexeme (GIN lookups; see
    context.terms) — and takes BM25's document frequencies from them. Records of
    ``isolated`` domains are ranked but kept out of the seeds and near misses; the best of
    them come back flagged ``isolated``, for the explanation."""
    if source.scope == "session" and not session_tags:
        return None
    where, params = _subset(owner_id, source, session_tags, excluded, near)
    # array_to_tsvector rejects empty strings (no keyword or tag pointer is ever empty).
    pointers = [p for p in pointers if p]
    params |= {
        **probe.params(), "pointers": pointers, "pool": max(50, 4 * source.limit),
        "rare_pointers": [p for p in pointers if p not in common.keywords],
        "common_lexemes": sorted(common.lexemes),
    }  # fmt: skip
    params["exhaustive"] = source.scope == "session"
    params["exhaustive_rows"] = LEXICAL_EXHAUSTIVE_ROWS
    if near is not None:
        params["ef_search"] = str(nearest.ef_search(params["pool"]))
        params["ef_wide"] = str(nearest.WIDE_EF_SEARCH)
    query = f"""
        WITH probe AS ({probe.row_sql()}),
        terms AS (SELECT DISTINCT lexeme FROM probe, unnest(probe.tsv)),
        term_array AS MATERIALIZED (
            SELECT coalesce(array_agg(lexeme), '{{}}') AS lexemes FROM terms
        ),
        -- The trigger's informative lexemes OR-ed (websearch_to_tsquery never fails on odd
        -- input; 'simple' keeps the already stemmed lexemes as they are).
        term_query AS MATERIALIZED (
            SELECT websearch_to_tsquery('simple', coalesce(string_agg(lexeme, ' or '), ''))
                   AS query
            FROM terms WHERE NOT (lexeme = ANY(CAST(:common_lexemes AS text[])))
        ),
        -- The keyword pointers as a set: how many a record shares is how many its keywords
        -- remove from it (a binary search per keyword, where `&&` compares every pair).
        pointer_set AS MATERIALIZED (
            SELECT array_to_tsvector(CAST(:pointers AS text[])) AS tsv
        ),
        -- A long record's best chunk (breadcrumbs.chunks) counts when it beats the record's
        -- own vector; a tenant without long records has no chunk rows to read.
        chunk_best AS MATERIALIZED (
            SELECT breadcrumb_id AS chunk_of,
                   max(1 - (embedding <=> (SELECT embedding FROM probe))) AS chunk_similarity
            FROM breadcrumb_chunks WHERE owner_id = :owner GROUP BY breadcrumb_id
        ),
        -- The keyword and full-text nominations come from the GIN indexes, by the trigger's
        -- uncommon words only (context.terms): a common one would match most records. Both
        -- are read in one pass (a record holding a rare pointer mostly holds its lexeme too:
        -- one heap row and one distance each, not two); each keeps its own matches' order.
        nominations AS MATERIALIZED (
            SELECT id,
                   CASE WHEN entity_keywords && CAST(:rare_pointers AS text[])
                        THEN length(pointer_set.tsv)
                             - length(ts_delete(pointer_set.tsv, entity_keywords)) END AS shared,
                   CASE WHEN search_vector @@ (SELECT query FROM term_query)
                        THEN ts_rank(search_vector, (SELECT query FROM term_query)) END AS rank,
                   embedding <=> (SELECT embedding FROM probe) AS distance
            FROM breadcrumbs, pointer_set
            WHERE {where} AND (entity_keywords && CAST(:rare_pointers AS text[])
                               OR search_vector @@ (SELECT query FROM term_query))
        ),
        by_keyword AS (
            SELECT id, distance FROM nominations WHERE shared IS NOT NULL
            ORDER BY shared DESC, distance, id LIMIT :pool
        ),
        by_text AS (
            SELECT id, distance FROM nominations WHERE rank IS NOT NULL
            ORDER BY rank DESC, distance, id LIMIT :pool
        ),
        -- One pass over the subset computes the similarity alone: no vectors or lexemes are
        -- carried through (they would spill the CTE to disk at 100k records).
        {nearest.scored_sql(where, near)},
        by_vector AS (SELECT id FROM scored WHERE similarity IS NOT NULL
                      ORDER BY similarity DESC, id LIMIT :pool),
        candidates AS MATERIALIZED (
            SELECT id, similarity FROM scored
            WHERE (CAST(:exhaustive AS boolean)
                   AND (SELECT count(*) FROM scored) <= :exhaustive_rows)
               OR id IN (SELECT id FROM by_vector UNION SELECT id FROM by_keyword
                         UNION SELECT id FROM by_text)
        ),
        -- Lexemes are read again for the candidates only.
        documents AS MATERIALIZED (
            SELECT candidates.id, coalesce(breadcrumbs.search_vector, ''::tsvector) AS tsv
            FROM candidates JOIN breadcrumbs USING (id)
        ),
        -- BM25 in float8: numeric's ln() costs ~10 us a call, once per posting.
        stats AS (
            SELECT CAST(count(*) AS float8) AS n,
                   CAST(greatest(avg(length(tsv)), 1) AS float8) AS avgdl
            FROM documents
        ),
        -- Only the trigger's lexemes of each document are unnested (each with its positions
        -- array): the others are deleted from its tsvector first.
        postings AS (
            SELECT documents.id, word.lexeme, length(documents.tsv) AS dl,
                   CAST(coalesce(array_length(word.positions, 1), 1) AS float8) AS tf
            FROM documents, term_array,
                 unnest(ts_delete(documents.tsv,
                                  tsvector_to_array(ts_delete(documents.tsv, term_array.lexemes))))
                 AS word
            WHERE word.lexeme IN (SELECT lexeme FROM terms)
        ),
        frequency AS (
            SELECT lexeme, CAST(count(*) AS float8) AS df FROM postings GROUP BY lexeme
        ),
        lexical AS (
            SELECT postings.id,
                   sum(ln(1 + (stats.n - frequency.df + 0.5) / (frequency.df + 0.5))
                       * postings.tf * ({BM25_K1} + 1)
                       / (postings.tf
                          + {BM25_K1} * (1 - {BM25_B} + {BM25_B} * postings.dl / stats.avgdl))
                   ) AS score
            FROM postings JOIN frequency USING (lexeme) CROSS JOIN stats
            GROUP BY postings.id
        ),
        fused AS (
            SELECT candidates.id, candidates.similarity, coalesce(lexical.score, 0) AS lexical,
                   least(1.0, greatest(0.0, coalesce(candidates.similarity, 0))) AS cosine
            FROM candidates LEFT JOIN lexical USING (id)
            WHERE candidates.similarity IS NOT NULL OR lexical.score > 0
        ),
        best AS (SELECT coalesce(max(lexical), 0) AS top FROM fused),
        ranked AS MATERIALIZED (
            SELECT fused.id, fused.similarity, fused.lexical,
                   fused.cosine + {LEXICAL_WEIGHT} * (1 - fused.cosine)
                   * CASE WHEN best.top > 0 THEN fused.lexical / best.top ELSE 0 END AS score
            FROM fused CROSS JOIN best
        ),
        {_flagged(bool(isolated))},
        kept AS (
            (SELECT * FROM flagged WHERE NOT isolated AND score >= :min_score
             ORDER BY score DESC, id::text LIMIT :limit)
            UNION ALL
            (SELECT * FROM flagged WHERE NOT isolated AND score < :min_score
             ORDER BY score DESC, id::text LIMIT :near_misses)
            UNION ALL
            (SELECT * FROM flagged WHERE isolated ORDER BY score DESC, id::text LIMIT :near_misses)
        )
        SELECT id, similarity, lexical, score, isolated FROM kept ORDER BY score DESC, id::text
    """
    params["isolated"] = sorted(isolated)
    params.update(min_score=source.min_similarity, limit=source.limit, near_misses=NEAR_MISSES)
    return query, params


def _flagged(isolating: bool) -> str:
    """The ranked candidates with their ``isolated`` flag; without isolated domains the
    labels are not even read."""
    if not isolating:
        return "flagged AS (SELECT ranked.*, false AS isolated FROM ranked)"
    return (
        "flagged AS (SELECT ranked.*, "
        f"{isolated_sql('b')} AS isolated FROM ranked JOIN breadcrumbs b USING (id))"
    )
