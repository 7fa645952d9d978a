"""Which of the trigger's words are worth nominating search candidates by.

The semantic source nominates candidates three ways: the nearest vectors, the records
sharing a keyword pointer with the trigger, the records matching its lexemes. The last two
come from GIN indexes, which are cheap for a word few records hold and costly (and useless)
for one most records hold: "user", "message" or "need" match a third of a chat corpus, and a
record sharing only them with the trigger is no lexical match. What a lookup costs is the
length of the word's posting list, over every schema. So a lexeme or pointer held by at
least ``COMMON_SHARE`` of a sample of ``SAMPLE`` of the owner's records (the first by id:
ids are random), and by at least ``COMMON_MIN_RECORDS`` of them, nominates nothing; BM25
still counts it for the records nominated otherwise.

The common words are counted per owner in one aggregate over the sample (row-level
security scopes the query to the owner), and kept for ``TTL_S`` per process.

A search through a schema set's partial indexes (context.sources.nearest) reads the
posting lists of the searched records alone, and there the share of the whole tenant is
the wrong measure: knowledge records are a few percent of a chat tenant, so a word most of
them hold is rare in the tenant and still nominates most of the subset. Each nominated
record costs a heap row, its distance, its rank and its shared pointers (~3.5 us): at 100k
records one trigger's keywords matched 4,084 of the 6,010 searched records, 15 of the seed
statement's 20 ms (benchmarks/results/tails.md). So such a search also leaves out the
words common among the searched records by the same rule, counted over a sample of them,
when more than ``NOMINATION_MAX_RECORDS`` of them hold the word (``CommonWords.costly``):
both uninformative there and costly to read. The second condition keeps a small subset's
words (reading a few hundred records is cheap), the first a large one's words held by
fewer than ``COMMON_SHARE`` of it (they still single records out). BM25 counts every word.
"""

from __future__ import annotations

import functools
import time
import uuid
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Row, TextClause, text
from sqlalchemy.ext.asyncio import AsyncSession

from cairn.transforms.cache import LRU

COMMON_SHARE = 0.05
COMMON_MIN_RECORDS = 50
SAMPLE = 2000
TTL_S = 300.0
# The searched records' own common words are counted less often: a word's share of
# thousands of records moves slowly.
SUBSET_TTL_S = 3600.0
OWNERS = 1000
NOMINATION_MAX_RECORDS = 500

# The lexemes and keyword pointers ``threshold`` or more records of ``sample`` hold.
_HELD = """
    SELECT 'lexeme' AS kind, word.lexeme AS term
    FROM sample, unnest(sample.search_vector) AS word
    GROUP BY word.lexeme HAVING count(*) >= (SELECT records FROM threshold)
    UNION ALL
    SELECT 'keyword', keyword
    FROM sample, unnest(sample.entity_keywords) AS keyword
    GROUP BY keyword HAVING count(*) >= (SELECT records FROM threshold)
"""
_COMMON = text(
    f"""
    WITH sample AS MATERIALIZED (
        SELECT search_vector, entity_keywords FROM breadcrumbs WHERE owner_id = :owner
        ORDER BY id LIMIT :sample  -- ids are random (uuid4): a uniform, repeatable sample
    ),
    threshold AS (
        SELECT greatest(:min_records, ceil(CAST(:share AS float8) * count(*))) AS records
        FROM sample
    )
    {_HELD}"""
)


@functools.cache
def _costly(literal: str) -> TextClause:
    """The words of the records of a schema list (``literal``, as the partial indexes name
    it: the planner then reads the sample from their btree, the first by id, without
    sorting the subset) that both rules leave out: held by COMMON_SHARE of the sample (and
    at least COMMON_MIN_RECORDS of it), and by more than :max_records of the whole subset
    as the sample's share of it estimates."""
    subset = f"owner_id = :owner AND schema_name = ANY({literal})"
    return text(
        f"""
        WITH sample AS MATERIALIZED (
            SELECT search_vector, entity_keywords FROM breadcrumbs WHERE {subset}
            ORDER BY id LIMIT :sample
        ),
        threshold AS (
            SELECT greatest(
                       :min_records, ceil(CAST(:share AS float8) * count(*)),
                       floor(CAST(:max_records AS float8) * count(*) / greatest(
                           (SELECT count(*) FROM breadcrumbs WHERE {subset}), 1)) + 1
                   ) AS records
            FROM sample
        )
        {_HELD}"""
    )


@dataclass(frozen=True, slots=True)
class Common:
    """An owner's common lexemes and keyword pointers."""

    lexemes: frozenset[str]
    keywords: frozenset[str]

    def __or__(self, other: Common) -> Common:
        return Common(self.lexemes | other.lexemes, self.keywords | other.keywords)


def _common(rows: Sequence[Row[Any]]) -> Common:
    return Common(
        frozenset(row.term for row in rows if row.kind == "lexeme"),
        frozenset(row.term for row in rows if row.kind == "keyword"),
    )


class CommonWords:
    """Each owner's common words, counted at most once per ``ttl`` seconds per process (its
    searched subsets' at most once per ``subset_ttl``)."""

    def __init__(
        self,
        ttl: float = TTL_S,
        clock: Callable[[], float] = time.monotonic,
        subset_ttl: float = SUBSET_TTL_S,
    ) -> None:
        self._owners: LRU[Hashable, tuple[float, Common]] = LRU(OWNERS)
        self._ttl, self._subset_ttl = ttl, subset_ttl
        self._clock = clock

    async def of(self, session: AsyncSession, owner_id: uuid.UUID) -> Common:
        params = {
            "owner": owner_id,
            "sample": SAMPLE,
            "share": COMMON_SHARE,
            "min_records": COMMON_MIN_RECORDS,
        }
        return await self._counted(session, owner_id, _COMMON, params, self._ttl)

    async def costly(self, session: AsyncSession, owner_id: uuid.UUID, literal: str) -> Common:
        """The words common among the owner's records of the schema list ``literal`` (the
        partial indexes' own, context.sources.nearest; as ``of`` counts them, over a sample
        of those records) and held by more than ``NOMINATION_MAX_RECORDS`` of them, as the
        sample estimates."""
        params = {
            "owner": owner_id,
            "sample": SAMPLE,
            "share": COMMON_SHARE,
            "min_records": COMMON_MIN_RECORDS,
            "max_records": NOMINATION_MAX_RECORDS,
        }
        key = (owner_id, literal)
        return await self._counted(session, key, _costly(literal), params, self._subset_ttl)

    async def _counted(
        self,
        session: AsyncSession,
        key: Hashable,
        query: TextClause,
        params: dict[str, Any],
        ttl: float,
    ) -> Common:
        now = self._clock()
        cached = self._owners.get(key)
        if cached is not None and cached[0] > now:
            return cached[1]
        common = _common((await session.execute(query, params)).all())
        self._owners.put(key, (now + ttl, common))
        return common
