"""The embedded PostgreSQL against the real bundled binaries."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import asyncpg
import pytest

from cairn.runtime import EmbeddedPostgres, EmbeddedServerError


@contextmanager
def scratch_dir() -> Iterator[Path]:
    """A directory outside pytest's tmp tree.

    As root, PostgreSQL runs as the user ``pgserver``, which must traverse every parent of
    its data dir; any pytest session starting meanwhile resets /tmp/pytest-of-root to 0700.
    """
    path = Path(tempfile.mkdtemp(prefix="cairn-test-pg-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def postgres() -> Iterator[EmbeddedPostgres]:
    with scratch_dir() as path, EmbeddedPostgres(path / "data", fast=True) as server:
        yield server


@pytest.fixture
def own_postgres() -> Iterator[EmbeddedPostgres]:
    with scratch_dir() as path:
        server = EmbeddedPostgres(path / "data", fast=True)
        yield server
        server.stop()


async def fetchval(dsn: str, query: str) -> object:
    conn = await asyncpg.connect(dsn)
    try:
        return await conn.fetchval(query)
    finally:
        await conn.close()


async def test_accepts_asyncpg_over_tcp(postgres: EmbeddedPostgres) -> None:
    assert postgres.dsn.startswith("postgresql://postgres@127.0.0.1:")
    assert postgres.url == postgres.dsn.replace("postgresql://", "postgresql+asyncpg://")

    assert await fetchval(postgres.dsn, "SELECT current_database()") == "cairn"


async def test_vector_extension_is_installed(postgres: EmbeddedPostgres) -> None:
    distance = await fetchval(postgres.dsn, "SELECT '[1,2,3]'::vector <=> '[1,2,4]'::vector")

    assert isinstance(distance, float)
    assert 0 < distance < 0.05


async def test_hnsw_index_builds(postgres: EmbeddedPostgres) -> None:
    conn = await asyncpg.connect(postgres.dsn)
    try:
        await conn.execute("CREATE TABLE items (id int PRIMARY KEY, embedding vector(3))")
        await conn.execute(
            "INSERT INTO items SELECT i, ARRAY[i, i % 7, 1]::vector FROM generate_series(1, 200) i"
        )
        await conn.execute("CREATE INDEX ON items USING hnsw (embedding vector_cosine_ops)")
        await conn.execute("SET enable_seqscan = off")
        rows = await conn.fetch(
            "EXPLAIN SELECT id FROM items ORDER BY embedding <=> '[5,5,1]' LIMIT 3"
        )
    finally:
        await conn.close()

    assert any("items_embedding_idx" in row[0] for row in rows)


def test_second_start_returns_the_same_url(postgres: EmbeddedPostgres) -> None:
    assert postgres.start() == postgres.url


async def test_stop_then_start_keeps_data(own_postgres: EmbeddedPostgres) -> None:
    own_postgres.start()
    await fetchval(own_postgres.dsn, "CREATE TABLE kept AS SELECT 42 AS answer")
    own_postgres.stop()

    own_postgres.start()

    assert await fetchval(own_postgres.dsn, "SELECT answer FROM kept") == 42


async def test_start_after_kill_recovers(own_postgres: EmbeddedPostgres) -> None:
    own_postgres.start()
    await fetchval(own_postgres.dsn, "CREATE TABLE kept AS SELECT 7 AS answer")
    own_postgres.kill()
    assert (own_postgres.data_dir / "postmaster.pid").exists()

    own_postgres.start()

    assert await fetchval(own_postgres.dsn, "SELECT answer FROM kept") == 7


async def test_a_restart_keeps_the_port(own_postgres: EmbeddedPostgres) -> None:
    own_postgres.start()
    port = own_postgres.port
    own_postgres.stop()
    own_postgres.start()
    assert own_postgres.port == port
    own_postgres.kill()  # its socket lock file stays behind, naming a dead postmaster
    assert not own_postgres.running

    own_postgres.start()

    assert own_postgres.port == port and own_postgres.running
    assert await fetchval(own_postgres.dsn, "SELECT 1") == 1


def test_stop_is_idempotent(own_postgres: EmbeddedPostgres) -> None:
    own_postgres.stop()  # never started
    own_postgres.start()
    own_postgres.stop()
    own_postgres.stop()


async def test_long_data_dir_uses_a_short_socket_dir() -> None:
    with scratch_dir() as path:
        server = EmbeddedPostgres(path / ("d" * 100), database="Long_Name", fast=True)
        assert not server.socket_dir.is_relative_to(server.data_dir)
        with server:
            assert await fetchval(server.dsn, "SELECT current_database()") == "Long_Name"
        assert not server.socket_dir.exists()


def test_url_before_start_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(EmbeddedServerError):
        _ = EmbeddedPostgres(tmp_path).url


def test_rejects_an_unsafe_database_name(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        EmbeddedPostgres(tmp_path, database="x'; DROP")
