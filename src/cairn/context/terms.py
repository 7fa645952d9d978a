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
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from cairn.transforms.cache import LRU

COMMON_SHARE = 0.05
COMMON_MIN_RECORDS = 50
SAMPLE = 2000
TTL_S = 300.0
OWNERS = 1000

_COMMON = text(
    """
    WITH sample AS MATERIALIZED (
        SELECT search_vector, entity_keywords FROM breadcrumbs WHERE owner_id = :owner
        ORDER BY id LIMIT :sample  -- ids are random (uuid4): a uniform, repeatable sample
    ),
    threshold AS (
        SELECT greatest(:min_records, ceil(CAST(:share AS float8) * count(*))) AS records
        FROM sample
    )
    SELECT 'lexeme' AS kind, word.lexeme AS term
    FROM sample, unnest(sample.search_vector) AS word
    GROUP BY word.lexeme HAVING count(*) >= (SELECT records FROM threshold)
    UNION ALL
    SELECT 'keyword', keyword
    FROM sample, unnest(sample.entity_keywords) AS keyword
    GROUP BY keyword HAVING count(*) >= (SELECT records FROM threshold)
    """
)


@dataclass(frozen=True, slots=True)
class Common:
    """An owner's common lexemes and keyword pointers."""

    lexemes: frozenset[str]
    keywords: frozenset[str]


class CommonWords:
    """Each owner's common words, counted at most once per ``ttl`` seconds per process."""

    def __init__(self, ttl: float = TTL_S, clock: Callable[[], float] = time.monotonic) -> None:
        self._owners: LRU[uuid.UUID, tuple[float, Common]] = LRU(OWNERS)
        self._ttl = ttl
        self._clock = clock

    async def of(self, session: AsyncSession, owner_id: uuid.UUID) -> Common:
        now = self._clock()
        cached = self._owners.get(owner_id)
        if cached is not None and cached[0] > now:
            return cached[1]
        params = {
            "owner": owner_id,
            "sample": SAMPLE,
            "share": COMMON_SHARE,
            "min_records": COMMON_MIN_RECORDS,
        }
        rows = (await session.execute(_COMMON, params)).all()
        common = Common(
            frozenset(term for kind, term in rows if kind == "lexeme"),
            frozenset(term for kind, term in rows if kind == "keyword"),
        )
        self._owners.put(owner_id, (now + self._ttl, common))
        return common
