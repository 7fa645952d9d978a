"""Vector nominations of the semantic source from a partial HNSW index per searched schema set.

pgvector (0.6) filters *after* an HNSW scan, so the whole-table index returns a few of the
rows asked for when the schema filter keeps ~5% of a tenant's records; the exact ranking of
the filtered subset reads every record of it (~6,000 heap rows and distances at 100k
records, most of the source's time). An HNSW index whose predicate is the schema list
holds only the searched records: its scan returns the nearest of them, and only the tenant
and liveness filters are applied after it.

- The index is made when a tenant's subset first reaches ``NEAR_SEARCH_ROWS`` (below it the
  exact ranking is both cheaper and exact), in the background and ``CONCURRENTLY``; one
  index per sorted schema list, named by its hash, shared by every tenant (the query keeps
  filtering by owner, and row-level security applies as to every query).
- Beside it, two GIN indexes with the same predicate (the records' keyword pointers and
  lexemes): the keyword and full-text nominations read posting lists of the searched
  records alone, not every schema's intersected with the tenant's subset (at 1M records a
  trigger's words matched 14,000-22,000 records of all schemas, and the tenant's subset was a
  60,000-row bitmap of its own); and a btree on the tenant and id, from which the common
  words of the searched records are counted over a sample of them (context.terms) without
  sorting the subset. The four are built together; the index set is usable when all four
  are valid (a set built before the btree existed gets it at its next check).
- Until the index is valid, and for a tenant's subset under the threshold (a bounded count,
  per tenant and minute), the subset is ranked exactly as before. The query falls back to
  the exact ranking when the index scan yields fewer than the pool (other tenants' or
  expired records took its candidates), so a stale cache costs time, never rows.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import re
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, create_async_engine
from sqlalchemy.pool import NullPool

log = logging.getLogger(__name__)

# A tenant's filtered subset of at least this many records is searched through the index.
NEAR_SEARCH_ROWS = 2000
# How long a missing or unusable index is trusted to stay so before the catalog is read again.
RECHECK_SECONDS = 60.0
INDEX_PREFIX = "ix_breadcrumbs_semantic_"
BUILD_MEMORY = "256MB"
EF_FACTOR = 4
# Schema names that go into the index predicate (and the query, which must state the same
# list for the planner to prove the partial index applies) as literals.
_SAFE_NAME = re.compile(r"[A-Za-z0-9_.:/@+-]{1,200}")

_VALID = text(
    "SELECT i.indisvalid AND i.indisready FROM pg_class c"
    " JOIN pg_index i ON i.indexrelid = c.oid WHERE c.relname = :name"
)
# Whether every index of a schema set is valid.
_ALL_VALID = text(
    "SELECT count(*) FILTER (WHERE i.indisvalid AND i.indisready) = :n FROM pg_class c"
    " JOIN pg_index i ON i.indexrelid = c.oid WHERE c.relname = ANY(:names)"
)


_TRY_LOCK = text("SELECT pg_try_advisory_lock(:key)")
_UNLOCK = text("SELECT pg_advisory_unlock(:key)")


def ef_search(pool: int) -> int:
    """The HNSW scan returns at most ``ef_search`` rows; ``EF_FACTOR`` times the pool keeps
    the last of the pool's nearest from being missed (a missed candidate changes BM25's
    statistics over the candidates, and so every fused score)."""
    return min(1000, max(40, EF_FACTOR * pool))


def schema_list(schemas: Sequence[str]) -> str | None:
    """The schemas as a sorted SQL array literal, or None if a name is not safe to inline."""
    names = sorted(set(schemas))
    if not names or not all(_SAFE_NAME.fullmatch(name) for name in names):
        return None
    return "ARRAY[" + ", ".join(f"'{name}'" for name in names) + "]::text[]"


def index_name(literal: str) -> str:
    return INDEX_PREFIX + hashlib.sha1(literal.encode()).hexdigest()[:16]


# The indexes beside the HNSW one: name suffix, method and what they index. The GIN ones
# serve the word nominations; the btree the sample of the searched records whose common
# words nominate nothing (context.terms), the first of them by id without sorting them all.
_BESIDE = (
    ("_keywords", "gin (entity_keywords)"),
    ("_lexemes", "gin (search_vector)"),
    ("_ids", "btree (owner_id, id)"),
)


def index_names(literal: str) -> tuple[str, ...]:
    """The schema set's indexes: the HNSW one first, then its GIN ones and its btree."""
    name = index_name(literal)
    return (name, *(name + suffix for suffix, _ in _BESIDE))


def index_ddl(literal: str) -> str:
    return (
        f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {index_name(literal)} ON breadcrumbs"
        f" USING hnsw (embedding vector_cosine_ops) WHERE schema_name = ANY({literal})"
    )


def index_ddls(literal: str) -> list[tuple[str, str]]:
    """(name, statement) of each of the schema set's indexes, the HNSW one first."""
    where = f"WHERE schema_name = ANY({literal})"
    beside = [
        (
            index_name(literal) + suffix,
            f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {index_name(literal)}{suffix}"
            f" ON breadcrumbs USING {indexed} {where}",
        )
        for suffix, indexed in _BESIDE
    ]
    return [(index_name(literal), index_ddl(literal)), *beside]


_Key = tuple[str, str]  # the database (its URL) and the schema list


@dataclass
class NearIndexes:
    """Which partial indexes are valid, per database, and the builds under way.
    ``owner_url``: the schema owner's database URL, which may create indexes (the
    application role may not); None: the searching session's own engine builds them."""

    owner_url: str | None = None
    _ready: set[_Key] = field(default_factory=set)
    _checked: dict[_Key, float] = field(default_factory=dict)  # catalog, until ready
    _builds: dict[_Key, asyncio.Task[None]] = field(default_factory=dict)
    # Per tenant: whether its subset was large when last counted, and until when to trust it.
    _large: dict[tuple[_Key, uuid.UUID], tuple[bool, float]] = field(default_factory=dict)

    async def usable(
        self,
        session: AsyncSession,
        owner_id: uuid.UUID,
        schemas: Sequence[str],
        subset: Callable[[], Awaitable[int]],
    ) -> str | None:
        """The schema list literal to search with: the tenant's subset (``subset``: its
        size, up to ``NEAR_SEARCH_ROWS``) is large and the index valid. Else None, and a
        build starts if the subset is large and the index missing. Each is read again after
        ``RECHECK_SECONDS`` at most; a stale answer costs time, never rows (the query falls
        back to the exact ranking when the scan comes back short)."""
        literal = schema_list(schemas)
        engine = session.bind
        if literal is None or not isinstance(engine, AsyncEngine):
            return None
        key, now = (str(engine.url), literal), time.monotonic()
        large, until = self._large.get((key, owner_id), (False, 0.0))
        if now >= until:
            large = await subset() >= NEAR_SEARCH_ROWS
            self._large[(key, owner_id)] = (large, now + RECHECK_SECONDS)
        if not large:
            return None
        if key in self._ready:
            return literal
        if now < self._checked.get(key, 0.0):
            return None
        self._checked[key] = now + RECHECK_SECONDS
        names = list(index_names(literal))
        if await session.scalar(_ALL_VALID, {"names": names, "n": len(names)}):
            self._ready.add(key)
            return literal
        build = self._builds.get(key)
        if build is None or build.done():
            self._builds[key] = asyncio.create_task(self._build(self.owner_url or engine, key))
        return None

    async def wait(self) -> None:
        """Until the builds under way have ended (tests, benchmarks)."""
        await asyncio.gather(*self._builds.values(), return_exceptions=True)

    async def _build(self, where: AsyncEngine | str, key: tuple[str, str]) -> None:
        """The schema set's indexes, built without blocking writes, by one process at a time
        (an advisory lock): an invalid index left by a build that failed or was interrupted,
        which ``IF NOT EXISTS`` would keep, is dropped first."""
        literal = key[1]
        name = index_name(literal)
        started = time.perf_counter()
        engine = create_async_engine(where, poolclass=NullPool) if isinstance(where, str) else where
        try:
            async with engine.connect() as connection:
                auto = await connection.execution_options(isolation_level="AUTOCOMMIT")
                lock = {"key": _lock_key(name)}
                if not (await auto.execute(_TRY_LOCK, lock)).scalar():
                    return  # another process builds it
                try:
                    # The graph of a large subset fits in memory: a build several times faster.
                    await auto.exec_driver_sql(f"SET maintenance_work_mem = '{BUILD_MEMORY}'")
                    for each, ddl in index_ddls(literal):
                        if (await auto.execute(_VALID, {"name": each})).scalar() is False:
                            await auto.exec_driver_sql(f"DROP INDEX CONCURRENTLY IF EXISTS {each}")
                        await auto.exec_driver_sql(ddl)
                finally:
                    await auto.execute(_UNLOCK, lock)
        except Exception:  # the exact ranking goes on; the next check retries
            log.warning("semantic index %s for %s not built", name, literal, exc_info=True)
            return
        finally:
            if isinstance(where, str):
                await engine.dispose()
        self._ready.add(key)
        seconds = time.perf_counter() - started
        log.info("semantic index %s for %s built in %.1f s", name, literal, seconds)


def _lock_key(name: str) -> int:
    """A signed 64-bit advisory lock key from the index name."""
    return int.from_bytes(hashlib.sha1(name.encode()).digest()[:8], "big", signed=True)


# The process's view (the roots give it the schema owner's URL: ``configure``).
INDEXES = NearIndexes()


# The scan's ef_search, set for the rest of the transaction (as SET LOCAL) without a round
# trip of its own: an uncorrelated sub-select in the WHERE clause is a one-time filter, which
# the executor evaluates before it asks the index scan for its first row (when pgvector reads
# the setting).
_SET_EF = "SELECT set_config('hnsw.ef_search', CAST(:ef_search AS text), true)"

# The guard's second scan (pgvector's largest ef_search).
WIDE_EF_SEARCH = 1000
_SET_WIDE_EF = "SELECT set_config('hnsw.ef_search', CAST(:ef_wide AS text), true)"

_SIMILARITY = (
    "greatest(1 - (embedding <=> (SELECT embedding FROM probe)), chunk_similarity) AS similarity"
)


def scored_sql(where: str, near: str | None) -> str:
    """The ``scored`` CTE of the semantic query: each searched record's similarity (its own
    vector's or its best chunk's). Exact (``near`` None): every record of the subset, one
    pass. Near: the index's ``:pool`` nearest, the best chunk-bearing records and the
    keyword and full-text nominations (``by_keyword``, ``by_text``), scored with the
    distances their scans computed (the chunk-bearing ones by primary-key lookups) — unless
    the index scan came back short (other tenants' or expired records took its candidates),
    when the subset is scored exactly as without an index. A full pool can still be the
    wrong one (the graph search did not reach the trigger's neighbourhood: at 1M records
    ~0.4% of benchmark triggers got none of their 10 nearest): when a nominated record is
    nearer than the pool's farthest, the scan is repeated with ef_search
    ``WIDE_EF_SEARCH`` and its pool scored too."""
    exact = f"""scored AS MATERIALIZED (
            SELECT id, {_SIMILARITY}
            FROM breadcrumbs LEFT JOIN chunk_best ON chunk_of = id WHERE {where}
        )"""
    if near is None:
        return exact
    return f"""nearest AS MATERIALIZED (
            SELECT id, embedding <=> (SELECT embedding FROM probe) AS distance FROM breadcrumbs
            WHERE {where} AND ({_SET_EF}) IS NOT NULL
            ORDER BY embedding <=> (SELECT embedding FROM probe) LIMIT :pool
        ),
        mode AS MATERIALIZED (SELECT (SELECT count(*) FROM nearest) >= :pool AS near),
        -- The scan's and the word nominations' records come with their distances (each
        -- computed once, from the same expression); only the best chunk-bearing records
        -- are looked up for theirs.
        picked AS (
            SELECT id, distance FROM nearest UNION SELECT id, distance FROM by_keyword
            UNION SELECT id, distance FROM by_text
        ),
        chunked AS (
            SELECT chunk_of AS id FROM chunk_best JOIN breadcrumbs ON id = chunk_of
            WHERE {where} ORDER BY chunk_similarity DESC LIMIT :pool
        ),
        near_scored AS MATERIALIZED (
            SELECT id, distance, greatest(1 - distance, chunk_similarity) AS similarity
            FROM picked LEFT JOIN chunk_best ON chunk_of = id WHERE (SELECT near FROM mode)
            UNION ALL
            SELECT id, embedding <=> (SELECT embedding FROM probe) AS distance, {_SIMILARITY}
            FROM chunked JOIN breadcrumbs USING (id) LEFT JOIN chunk_best ON chunk_of = id
            WHERE {where} AND (SELECT near FROM mode) AND id NOT IN (SELECT id FROM picked)
        ),
        -- The guard: a nominated record nearer than the pool's farthest proves the scan
        -- missed it (its graph search did not reach that neighbourhood); the scan is then
        -- repeated with the widest beam.
        missed AS MATERIALIZED (
            SELECT EXISTS (
                SELECT 1 FROM near_scored
                WHERE distance < (SELECT max(distance) FROM nearest)
                  AND id NOT IN (SELECT id FROM nearest)
            ) AS missed
        ),
        wider AS MATERIALIZED (
            SELECT id FROM breadcrumbs
            WHERE {where} AND (SELECT missed FROM missed) AND ({_SET_WIDE_EF}) IS NOT NULL
            ORDER BY embedding <=> (SELECT embedding FROM probe) LIMIT :pool
        ),
        scored AS MATERIALIZED (
            SELECT id, {_SIMILARITY}
            FROM breadcrumbs LEFT JOIN chunk_best ON chunk_of = id
            WHERE {where} AND NOT (SELECT near FROM mode)
            UNION ALL
            SELECT id, similarity FROM near_scored
            UNION ALL
            SELECT id, {_SIMILARITY}
            FROM wider JOIN breadcrumbs USING (id) LEFT JOIN chunk_best ON chunk_of = id
            WHERE {where} AND id NOT IN (SELECT id FROM near_scored)
        )"""
