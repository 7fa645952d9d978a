"""A fresh embedded PostgreSQL + NATS holding the corpus: migrations, COPY, the records'
blocks, then HNSW.

Loading goes around the HTTP API on purpose (COPY is ~1000x faster than POSTs that each
embed): the rows carry what the write path would have stored (checksum, size, llm_text,
keyword pointers, embedding). The HNSW index is dropped before the COPY and built after
it with a large ``maintenance_work_mem`` — building it row by row is several times slower.
The worker stores each written record's rendered block (context.block_store); records
loaded by COPY get theirs from the same backfill an operator runs after a restore.
"""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

import asyncpg
from pgvector.asyncpg import register_vector

from cairn.breadcrumbs.validation import canonical_json, checksum
from cairn.config import Settings
from cairn.context.block_store import backfill
from cairn.context.sources import nearest
from cairn.context.tokens import TokenCounter, ensure_tokenizer_files
from cairn.db.engine import create_engine, create_session_factory
from cairn.db.migrate import upgrade
from cairn.db.roles import DEFAULT_APP_ROLE, AppRole
from cairn.runtime import EmbeddedNats, EmbeddedPostgres
from cairn.transforms import Transforms

from .corpus import OWNER, Corpus
from .recall import SEMANTIC_SCHEMAS

HNSW = (
    "CREATE INDEX ix_breadcrumbs_embedding_hnsw ON breadcrumbs"
    " USING hnsw (embedding vector_cosine_ops)"
)
COLUMNS = [
    "id",
    "owner_id",
    "schema_name",
    "title",
    "description",
    "tags",
    "context",
    "llm_hints",
    "version",
    "checksum",
    "size_bytes",
    "created_at",
    "updated_at",
    "created_by",
    "updated_by",
    "llm_text",
    "embedding",
    "entity_keywords",
]


@dataclass
class Services:
    root: Path
    postgres: EmbeddedPostgres
    nats: EmbeddedNats
    database_url: str = ""  # the superuser's: it loads, migrates and runs cross-tenant jobs
    nats_url: str = ""

    @property
    def app_url(self) -> str:
        """The application role's URL, as ``cairn up`` serves and works: requests and
        assemblies run under row-level security, as in every deployment."""
        return self.postgres.url_for(DEFAULT_APP_ROLE)

    def __enter__(self) -> Services:
        shutil.rmtree(self.root, ignore_errors=True)
        self.root.mkdir(parents=True)
        self.database_url = self.postgres.start()
        self.nats_url = self.nats.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.nats.stop()
        self.postgres.stop()
        shutil.rmtree(self.root, ignore_errors=True)


def services(root: Path) -> Services:
    return Services(root, EmbeddedPostgres(root / "pg"), EmbeddedNats(root / "nats"))


async def load(corpus: Corpus, database_url: str, dsn: str) -> dict[str, float]:
    """Migrate, COPY every record and edge, build HNSW, VACUUM (ANALYZE); returns the seconds
    each took."""
    timings: dict[str, float] = {}
    started = time.perf_counter()
    engine = create_engine(database_url, Settings())
    await upgrade(engine, app_role=AppRole(DEFAULT_APP_ROLE))
    await engine.dispose()
    timings["migrate_s"] = time.perf_counter() - started
    connection = await asyncpg.connect(dsn)
    await register_vector(connection)
    try:
        await connection.execute(
            "INSERT INTO tenants (id, name) VALUES ($1, 'default') ON CONFLICT DO NOTHING", OWNER
        )
        await connection.execute("DROP INDEX IF EXISTS ix_breadcrumbs_embedding_hnsw")
        started = time.perf_counter()
        await connection.copy_records_to_table(
            "breadcrumbs", records=_breadcrumb_rows(corpus), columns=COLUMNS
        )
        timings["copy_breadcrumbs_s"] = time.perf_counter() - started
        started = time.perf_counter()
        ids = [row["id"] for row in corpus.rows]
        edges = (
            (OWNER, ids[int(e["from"])], ids[int(e["to"])], int(e["type"]), float(e["weight"]))
            for e in corpus.edges
        )
        await connection.copy_records_to_table(
            "breadcrumb_edges",
            records=edges,
            columns=["owner_id", "from_id", "to_id", "edge_type", "weight"],
        )
        timings["copy_edges_s"] = time.perf_counter() - started
        started = time.perf_counter()
        await store_blocks(database_url, len(corpus.rows))
        timings["blocks_s"] = time.perf_counter() - started
        started = time.perf_counter()
        await connection.execute("SET maintenance_work_mem = '1GB'")
        await connection.execute("SET max_parallel_maintenance_workers = 1")
        await connection.execute(HNSW)
        timings["hnsw_build_s"] = time.perf_counter() - started
        started = time.perf_counter()
        # The default agent's semantic index, which a running Cairn builds once the searched
        # subset is large (context.sources.nearest); a small one is searched exactly anyway.
        literal = nearest.schema_list(SEMANTIC_SCHEMAS)
        assert literal is not None
        for _name, ddl in nearest.index_ddls(literal):
            await connection.execute(ddl)
        timings["semantic_index_s"] = time.perf_counter() - started
        started = time.perf_counter()
        # What autovacuum does to freshly loaded tables soon after: statistics, and the
        # visibility map that lets index-only scans skip the heap (the edge walk's indexes).
        await connection.execute("VACUUM (ANALYZE)")
        timings["vacuum_analyze_s"] = time.perf_counter() - started
    finally:
        await connection.close()
    return {key: round(value, 2) for key, value in timings.items()}


async def store_blocks(database_url: str, total: int) -> int:
    """Every record's block, as the worker stores it when a record is written."""
    settings = Settings(database_url=database_url)
    options = settings.context
    tokenizers = ensure_tokenizer_files(options.tokenizer_dir or settings.data_dir / "tokenizers")
    counter = TokenCounter.from_dir(tokenizers, options.encoding)
    engine = create_engine(database_url, settings)
    done = [0]

    def progress(records: int) -> None:
        done[0] += records
        if done[0] % 50_000 < records or done[0] == total:
            print(f"blocks: {done[0]:,} of {total:,} records", flush=True)

    try:
        sessions = create_session_factory(engine)
        transforms = Transforms(settings.transforms)
        return await backfill(sessions, OWNER, transforms, counter, batch=2000, progress=progress)
    finally:
        await engine.dispose()


def _breadcrumb_rows(corpus: Corpus):  # type: ignore[no-untyped-def]
    for row in corpus.rows:
        payload = canonical_json(row["context"])
        vector = corpus.vector_of(row)
        yield (
            row["id"],
            OWNER,
            row["schema_name"],
            row["title"],
            row["description"],
            row["tags"],
            json.dumps(row["context"]),
            None if row["llm_hints"] is None else json.dumps(row["llm_hints"]),
            1,
            checksum(payload),
            len(payload),
            row["created_at"],
            row["created_at"],
            "bench",
            "bench",
            row["llm_text"],
            vector,
            row["entity_keywords"],
        )
