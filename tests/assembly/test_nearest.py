"""The semantic source through a partial HNSW index per schema set (context.sources.nearest),
against the real database: the index is built for a large subset, the planner uses it, the
seeds are those of the exact ranking, and a tenant whose records the shared index's scan
does not reach is ranked exactly."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import numpy as np
import pytest
from fastapi import FastAPI
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from cairn.context import terms
from cairn.context.agents import SemanticSource
from cairn.context.blacklist import excluded_schemas
from cairn.context.model import Seed
from cairn.context.sources import nearest, semantic as semantic_source
from cairn.context.sources.base import SeedQuery
from cairn.context.terms import Common, CommonWords
from cairn.context.trigger import Probe
from cairn.db.engine import tenant_session

NEAR_ROWS = 20
DIM = 384


@pytest.fixture
def indexes(monkeypatch: pytest.MonkeyPatch, app: FastAPI) -> Iterator[nearest.NearIndexes]:
    """A fresh view of the indexes, searching through them from ``NEAR_ROWS`` records."""
    fresh = nearest.NearIndexes(owner_url=app.state.resources.settings.system_database_url)
    monkeypatch.setattr(nearest, "INDEXES", fresh)
    monkeypatch.setattr(nearest, "NEAR_SEARCH_ROWS", NEAR_ROWS)
    yield fresh


def _unit(rng: np.random.Generator, base: np.ndarray, noise: float) -> list[float]:
    vector = base + noise * rng.standard_normal(DIM)
    return [float(x) for x in vector / np.linalg.norm(vector)]


async def _insert(
    db: AsyncEngine,
    owner: uuid.UUID,
    schema: str,
    vectors: list[list[float]],
    words: str,
    keywords: tuple[str, ...] = (),
) -> list[uuid.UUID]:
    """Records with the given embeddings (text ``words`` and the record's number), written
    as the schema owner (no embedder, no event)."""
    ids = [uuid.uuid4() for _ in vectors]
    async with db.begin() as connection:
        await connection.execute(
            text(
                "INSERT INTO breadcrumbs (id, owner_id, schema_name, title, tags, context,"
                " checksum, size_bytes, llm_text, embedding, entity_keywords)"
                " VALUES (:id, :owner, :schema, 'doc', '{}', '{}', 'sha256:test', 0, :text,"
                " CAST(:embedding AS vector), :keywords)"
            ),
            [
                {
                    "id": i,
                    "owner": owner,
                    "schema": schema,
                    "text": f"{words}{n}",
                    "embedding": str(v),
                    "keywords": list(keywords),
                }
                for n, (i, v) in enumerate(zip(ids, vectors, strict=True))
            ],
        )
    return ids


async def _seeds(app: FastAPI, owner: uuid.UUID, trigger: uuid.UUID, schema: str) -> list[Seed]:
    """The source's seeds. The tables of a test are small enough that the planner would sort
    rather than scan an index: sorting is made its last resort, so the index is used."""
    source = SemanticSource(enabled=True, schemas=(schema,), limit=5, min_similarity=0.0)
    factory = app.state.resources.session_factory
    async with tenant_session(factory, owner) as session:
        await session.execute(text("SET LOCAL enable_sort = off"))
        batch = await semantic_source.semantic_seeds(session, owner, trigger, source, [], [], NONE)
    return batch.seeds


async def _exact(app: FastAPI, owner: uuid.UUID, trigger: uuid.UUID, schema: str) -> list[Seed]:
    """The same search with the subset ranked exactly (no index)."""
    source = SemanticSource(enabled=True, schemas=(schema,), limit=5, min_similarity=0.0)
    factory = app.state.resources.session_factory
    async with tenant_session(factory, owner) as session:
        common = await CommonWords().of(session, owner)
        hybrid = semantic_source._hybrid_sql(owner, Probe(trigger), source, [], common, [], NONE)
        assert hybrid is not None
        rows = (await session.execute(text(hybrid[0]), hybrid[1])).mappings().all()
    return semantic_source._read(source, [dict(row) for row in rows]).seeds


NONE = excluded_schemas(None)


def _literal(schema: str) -> str:
    literal = nearest.schema_list([schema])
    assert literal is not None
    return literal


async def _index_valid(db: AsyncEngine, schema: str) -> bool | None:
    literal = nearest.schema_list([schema])
    assert literal is not None
    async with db.connect() as connection:
        found = await connection.execute(
            text(
                "SELECT i.indisvalid FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid"
                " WHERE c.relname = :name"
            ),
            {"name": nearest.index_name(literal)},
        )
        value = found.scalar()
        if value:  # the GIN indexes of the keyword and full-text nominations with it
            valid = await connection.execute(
                text(
                    "SELECT bool_and(i.indisvalid), count(*) FROM pg_class c"
                    " JOIN pg_index i ON i.indexrelid = c.oid WHERE c.relname = ANY(:names)"
                ),
                {"names": list(nearest.index_names(literal))},
            )
            assert tuple(valid.one()) == (True, len(nearest.index_names(literal)))
    return None if value is None else bool(value)


def _world(seed: int) -> tuple[np.random.Generator, str, np.ndarray]:
    """A test's random source, a schema of its own and the direction its vectors lie near."""
    rng = np.random.default_rng(seed)
    return rng, f"kb{uuid.uuid4().hex[:6]}.v1", rng.standard_normal(DIM)


async def test_a_large_subset_is_searched_through_its_index_with_the_exact_seeds(
    app: FastAPI, db: AsyncEngine, indexes: nearest.NearIndexes
) -> None:
    rng, schema, base = _world(7)
    owner = app.state.resources.default_tenant
    vectors = [_unit(rng, base, noise) for noise in np.linspace(0.02, 0.2, 80)]
    await _insert(db, owner, schema, vectors, "alpha")
    await _insert(db, owner, "other.v1", [_unit(rng, base, 0.01) for _ in range(5)], "decoy")
    (trigger,) = await _insert(db, owner, "user.message.v1", [_unit(rng, base, 0.0)], "ask")
    exact = await _exact(app, owner, trigger, schema)
    assert await _seeds(app, owner, trigger, schema) == exact  # no index yet: exact
    await indexes.wait()
    assert await _index_valid(db, schema) is True
    source = SemanticSource(enabled=True, schemas=(schema,), limit=5, min_similarity=0.0)
    factory = app.state.resources.session_factory
    async with tenant_session(factory, owner) as session:
        near = await semantic_source._near(session, owner, source, NONE)
        assert near is not None and near == nearest.schema_list([schema])
        common = await CommonWords().of(session, owner)
        hybrid = semantic_source._hybrid_sql(
            owner, Probe(trigger), source, [], common, [], NONE, near=near
        )
        assert hybrid is not None
        # A table this small is cheaper to sort; without sorting, only an index whose
        # predicate the query implies can order the subset.
        await session.execute(text("SET LOCAL enable_sort = off"))
        plan = "\n".join(
            row[0] for row in await session.execute(text("EXPLAIN ANALYZE " + hybrid[0]), hybrid[1])
        )
    scans = [
        line
        for line in plan.splitlines()
        if f"Index Scan using {nearest.index_name(near)} " in line
    ]
    # All the pool: the statement raised ef_search from its default (40) before the scan.
    assert "never executed" not in scans[0] and "rows=50 loops" in scans[0]
    # The guard's second, wider scan runs only when the first is proven to have missed.
    assert len(scans) == 2 and "never executed" in scans[1]
    seeds = await _seeds(app, owner, trigger, schema)
    assert [s.record_id for s in seeds] == [s.record_id for s in exact]
    assert [s.score for s in seeds] == pytest.approx([s.score for s in exact], abs=1e-9)


async def test_a_tenant_the_shared_index_scan_does_not_reach_is_ranked_exactly(
    app: FastAPI, db: AsyncEngine, indexes: nearest.NearIndexes, tenant: uuid.UUID
) -> None:
    rng, schema, base = _world(11)
    owner = app.state.resources.default_tenant
    # The default tenant's records crowd the trigger's neighbourhood in the shared index;
    # the other tenant's (fewer than the pool, more than NEAR_ROWS) are all farther.
    await _insert(db, owner, schema, [_unit(rng, base, 0.05) for _ in range(300)], "near")
    mine = await _insert(db, tenant, schema, [_unit(rng, base, 0.3) for _ in range(30)], "far")
    (trigger,) = await _insert(db, tenant, "user.message.v1", [_unit(rng, base, 0.0)], "ask")
    (warm,) = await _insert(db, owner, "user.message.v1", [_unit(rng, base, 0.0)], "ask")
    await _seeds(app, owner, warm, schema)  # the default tenant's subset starts the build
    await indexes.wait()
    assert await _index_valid(db, schema) is True
    seeds = await _seeds(app, tenant, trigger, schema)
    exact = await _exact(app, tenant, trigger, schema)
    assert len(seeds) == 5 and {s.record_id for s in seeds} <= set(mine)
    assert [s.record_id for s in seeds] == [s.record_id for s in exact]


async def test_a_small_subset_builds_no_index(
    app: FastAPI, db: AsyncEngine, indexes: nearest.NearIndexes
) -> None:
    rng, schema, base = _world(3)
    owner = app.state.resources.default_tenant
    await _insert(db, owner, schema, [_unit(rng, base, 0.1) for _ in range(NEAR_ROWS - 1)], "x")
    (trigger,) = await _insert(db, owner, "user.message.v1", [_unit(rng, base, 0.0)], "ask")
    assert await _seeds(app, owner, trigger, schema) == await _exact(app, owner, trigger, schema)
    await indexes.wait()
    assert await _index_valid(db, schema) is None


def test_schema_names_that_are_not_plain_stay_exact() -> None:
    assert nearest.schema_list(["note.v1", "knowledge.v1", "note.v1"]) == (
        "ARRAY['knowledge.v1', 'note.v1']::text[]"
    )
    assert nearest.schema_list(["it's.v1"]) is None
    assert nearest.schema_list([]) is None
    assert nearest.ef_search(50) == 200 and nearest.ef_search(800) == 1000


async def test_a_record_near_by_its_chunk_only_is_nominated_through_the_index(
    app: FastAPI, db: AsyncEngine, indexes: nearest.NearIndexes
) -> None:
    rng, schema, base = _world(5)
    owner = app.state.resources.default_tenant
    away = rng.standard_normal(DIM)
    await _insert(db, owner, schema, [_unit(rng, base, 0.1) for _ in range(60)], "near")
    (long,) = await _insert(db, owner, schema, [_unit(rng, away, 0.0)], "long")
    async with db.begin() as connection:
        await connection.execute(
            text(
                "INSERT INTO breadcrumb_chunks (owner_id, breadcrumb_id, ordinal, char_start,"
                " char_end, text, embedding) VALUES (:owner, :id, 0, 0, 10, 'a chunk',"
                " CAST(:embedding AS vector))"
            ),
            {"owner": owner, "id": long, "embedding": str(_unit(rng, base, 0.0))},
        )
    (trigger,) = await _insert(db, owner, "user.message.v1", [_unit(rng, base, 0.0)], "ask")
    await _seeds(app, owner, trigger, schema)  # starts the build
    await indexes.wait()
    seeds = await _seeds(app, owner, trigger, schema)
    assert seeds[0].record_id == long  # its chunk is the trigger's vector itself
    assert [s.record_id for s in seeds] == [
        s.record_id for s in await _exact(app, owner, trigger, schema)
    ]


async def test_the_schema_set_has_gin_indexes_of_its_keywords_and_lexemes(
    app: FastAPI, db: AsyncEngine, indexes: nearest.NearIndexes
) -> None:
    """The keyword and full-text nominations can read posting lists of the searched records
    alone (at scale the planner takes them: benchmarks/results/seeds_scale.md); a record
    only they nominate is found as by the exact ranking."""
    rng, schema, base = _world(13)
    owner = app.state.resources.default_tenant
    # The index's pool (50) fills with records at cosine ~0.55 to the trigger; one at ~0.25
    # shares the trigger's rare word: only the full-text nomination brings it in, and its
    # lexical score then ranks it first.
    await _insert(db, owner, schema, [_unit(rng, base, 1.5) for _ in range(60)], "plain")
    away = rng.standard_normal(DIM)
    (word,) = await _insert(db, owner, schema, [_unit(rng, 0.25 * base + away, 0.0)], "quetzal ")
    (trigger,) = await _insert(db, owner, "user.message.v1", [_unit(rng, base, 0.0)], "quetzal ")
    await _seeds(app, owner, trigger, schema)  # starts the build
    await indexes.wait()
    assert await _index_valid(db, schema) is True
    literal = nearest.schema_list([schema])
    assert literal is not None
    _hnsw, keywords, lexemes, ids = nearest.index_names(literal)
    async with db.connect() as connection:
        found = await connection.execute(
            text("SELECT indexname, indexdef FROM pg_indexes WHERE indexname = ANY(:names)"),
            {"names": [keywords, lexemes, ids]},
        )
        definitions = {name: definition for name, definition in found.all()}
    predicate = f"WHERE (schema_name = ANY (ARRAY['{schema}'::text]))"
    assert definitions[keywords].endswith(f"USING gin (entity_keywords) {predicate}")
    assert definitions[lexemes].endswith(f"USING gin (search_vector) {predicate}")
    assert definitions[ids].endswith(f"USING btree (owner_id, id) {predicate}")
    source = SemanticSource(enabled=True, schemas=(schema,), limit=5, min_similarity=0.0)
    factory = app.state.resources.session_factory
    async with tenant_session(factory, owner) as session:
        assert await semantic_source._near(session, owner, source, NONE) == literal
        batch = await semantic_source.semantic_seeds(session, owner, trigger, source, [], [], NONE)
    assert batch.seeds[0].record_id == word
    assert [s.record_id for s in batch.seeds] == [
        s.record_id for s in await _exact(app, owner, trigger, schema)
    ]


async def test_a_scan_that_missed_a_nominated_nearer_record_is_repeated_wider(
    app: FastAPI, db: AsyncEngine, indexes: nearest.NearIndexes
) -> None:
    """An HNSW scan whose search did not reach the trigger's neighbourhood returns a full
    pool of the wrong records, which no row count reveals. Here the scan is made to return
    the farthest records on purpose; one near record shares the trigger's rare word, so the
    full-text nomination scores it nearer than the pool's farthest: the proof of a miss, on
    which the statement scans again, wider, and its seeds are the exact ones."""
    rng, schema, base = _world(17)
    owner = app.state.resources.default_tenant
    await _insert(db, owner, schema, [_unit(rng, base, 1.5) for _ in range(80)], "plain")
    close = await _insert(db, owner, schema, [_unit(rng, base, 0.1) for _ in range(9)], "close")
    (shared,) = await _insert(db, owner, schema, [_unit(rng, base, 0.1)], "quetzal ")
    (trigger,) = await _insert(db, owner, "user.message.v1", [_unit(rng, base, 0.0)], "quetzal ")
    await _seeds(app, owner, trigger, schema)  # starts the build
    await indexes.wait()
    literal = nearest.schema_list([schema])
    source = SemanticSource(enabled=True, schemas=(schema,), limit=5, min_similarity=0.0)
    factory = app.state.resources.session_factory
    exact = await _exact(app, owner, trigger, schema)
    assert {s.record_id for s in exact} <= {shared, *close}
    async with tenant_session(factory, owner) as session:
        common = await CommonWords().of(session, owner)
        sql, params = semantic_source._hybrid_sql(
            owner, Probe(trigger), source, [], common, [], NONE, near=literal
        ) or ("", {})
        scan = "ORDER BY embedding <=> (SELECT embedding FROM probe) LIMIT :pool"
        assert sql.count(scan) == 2  # the scan, and the guard's wider one
        missing = sql.replace(scan, scan.replace("LIMIT", "DESC LIMIT"), 1)
        rows = (await session.execute(text(missing), params)).mappings().all()
    seeds = semantic_source._read(source, [dict(row) for row in rows]).seeds
    assert [s.record_id for s in seeds] == [s.record_id for s in exact]
    assert [s.score for s in seeds] == pytest.approx([s.score for s in exact], abs=1e-9)


async def test_both_word_nominations_keep_their_own_top_pool_from_one_pass(
    app: FastAPI, db: AsyncEngine
) -> None:
    """The keyword and full-text nominations read their records together; each must still
    be its own top pool: by shared pointers then distance, and by ts_rank then distance.
    More records match each than the pool (50), the two match different records, and the
    pointers shared and the words' occurrences vary, so a nomination ordered by the other's
    key, or over the other's matches, takes other records."""
    rng, schema, base = _world(19)
    owner = app.state.resources.default_tenant
    rows = []
    for n in range(120):
        keywords = [k for k, on in (("quetzal", n % 3 != 0), ("jacaranda", n % 4 == 0)) if on]
        words = " ".join(["quetzal"] * (n % 5 if n % 7 else 0) + ["plain"])
        rows.append((uuid.uuid4(), keywords, f"{words} {n}", _unit(rng, base, 1.0)))
    (trigger,) = [uuid.uuid4()]
    rows.append((trigger, ["quetzal"], "quetzal", _unit(rng, base, 0.0)))
    async with db.begin() as connection:
        await connection.execute(
            text(
                "INSERT INTO breadcrumbs (id, owner_id, schema_name, title, tags, context,"
                " checksum, size_bytes, llm_text, entity_keywords, embedding)"
                " VALUES (:id, :owner, :schema, 'doc', '{}', '{}', 'sha256:test', 0, :text,"
                " :keywords, CAST(:embedding AS vector))"
            ),
            [
                {
                    "id": i,
                    "owner": owner,
                    "schema": schema if i != trigger else "user.v1",
                    "text": words,
                    "keywords": keywords,
                    "embedding": str(vector),
                }
                for i, keywords, words, vector in rows
            ],
        )
        found = await connection.execute(
            text(
                "SELECT id, ts_rank(search_vector, websearch_to_tsquery('simple', 'quetzal'))"
                " AS rank, search_vector @@ websearch_to_tsquery('simple', 'quetzal') AS text,"
                " embedding <=> (SELECT embedding FROM breadcrumbs WHERE id = :trigger)"
                " AS distance FROM breadcrumbs WHERE schema_name = :schema"
            ),
            {"trigger": trigger, "schema": schema},
        )
        records = {row.id: row for row in found}
    keywords_of = {i: set(keywords) for i, keywords, _, _ in rows}
    pointers = ["quetzal", "jacaranda"]
    shared = {i: len(keywords_of[i] & set(pointers)) for i in records}
    by_keyword = sorted(
        (i for i in records if "quetzal" in keywords_of[i] or "jacaranda" in keywords_of[i]),
        key=lambda i: (-shared[i], records[i].distance, str(i)),
    )[:50]
    by_text = sorted(
        (i for i in records if records[i].text),
        key=lambda i: (-records[i].rank, records[i].distance, str(i)),
    )[:50]
    assert len(by_keyword) == len(by_text) == 50 and set(by_keyword) != set(by_text)
    source = SemanticSource(enabled=True, schemas=(schema,), limit=5, min_similarity=0.0)
    common = Common(frozenset(), frozenset())
    sql, params = semantic_source._hybrid_sql(
        owner, Probe(trigger), source, pointers, common, [], NONE
    ) or ("", {})
    last = sql.rindex("SELECT id, similarity, lexical, score, isolated FROM kept")
    sql = sql[:last] + (
        "SELECT 'keyword' AS nomination, id FROM by_keyword"
        " UNION ALL SELECT 'text', id FROM by_text"
    )
    async with tenant_session(app.state.resources.session_factory, owner) as session:
        nominated = (await session.execute(text(sql), params)).all()
    assert {i for kind, i in nominated if kind == "keyword"} == set(by_keyword)
    assert {i for kind, i in nominated if kind == "text"} == set(by_text)


async def test_the_words_common_and_costly_in_a_searched_schema_are_left_out_there_alone(
    app: FastAPI, db: AsyncEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``CommonWords.costly``: the words common among the schemas' records (by a sample of
    them) that more than NOMINATION_MAX_RECORDS of them hold (the sample's share scaled to
    the subset), whatever the rest of the tenant holds."""
    monkeypatch.setattr(terms, "NOMINATION_MAX_RECORDS", 10)
    monkeypatch.setattr(terms, "COMMON_MIN_RECORDS", 1)
    monkeypatch.setattr(terms, "COMMON_SHARE", 0.0)
    monkeypatch.setattr(terms, "SAMPLE", 15)
    rng, schema, base = _world(5)
    owner = app.state.resources.default_tenant
    wide, few, elsewhere = (f"zq{uuid.uuid4().hex[:8]}" for _ in range(3))
    await _insert(db, owner, schema, [_unit(rng, base, 0.1) for _ in range(30)], wide, (wide,))
    await _insert(db, owner, schema, [_unit(rng, base, 0.1) for _ in range(3)], few, (few,))
    vectors = [_unit(rng, base, 0.1) for _ in range(40)]
    await _insert(db, owner, "other.v1", vectors, elsewhere, (elsewhere,))
    factory = app.state.resources.session_factory

    async def costly() -> Common:
        async with tenant_session(factory, owner) as session:
            return await CommonWords().costly(session, owner, _literal(schema))

    # 15 of the 33 records sampled: at least 12 hold `wide` (30 of 33 in all: more than 10),
    # at most 3 hold `few` (3 in all), none `elsewhere` (40 records, of another schema).
    found = await costly()
    assert wide in found.keywords and few not in found.keywords
    assert elsewhere not in found.keywords
    # The text is the word and the record's number: `wide` itself is no lexeme of theirs.
    assert not any(word in lexeme for lexeme in found.lexemes for word in (wide, few))
    # Costly but not common: 30 of the 33 records are fewer than 95 % of them.
    monkeypatch.setattr(terms, "SAMPLE", 10**9)
    assert wide in (await costly()).keywords
    monkeypatch.setattr(terms, "COMMON_SHARE", 0.95)
    assert wide not in (await costly()).keywords


async def test_a_costly_word_nominates_nothing_through_the_index_and_still_does_exactly(
    app: FastAPI, db: AsyncEngine, indexes: nearest.NearIndexes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the schema set's index the nominations read the subset's posting lists: a
    word most of its records hold nominates nothing there (BM25 still counts it), though
    the tenant at large rarely holds it; the exact ranking keeps nominating by it."""
    monkeypatch.setattr(terms, "NOMINATION_MAX_RECORDS", 10)
    monkeypatch.setattr(terms, "COMMON_MIN_RECORDS", 20)
    rng, schema, base = _world(9)
    owner = app.state.resources.default_tenant
    wide, rare = f"zq{uuid.uuid4().hex[:8]}", f"zq{uuid.uuid4().hex[:8]}"
    await _insert(db, owner, schema, [_unit(rng, base, 0.1) for _ in range(40)], "doc", (wide,))
    await _insert(db, owner, schema, [_unit(rng, base, 0.3)], "doc", (wide, rare))
    # 41 holders of `wide` are under 5 % of a tenant of more than 820 records.
    fillers = [_unit(rng, base, 0.5) for _ in range(1000)]
    await _insert(db, owner, f"filler{uuid.uuid4().hex[:6]}.v1", fillers, "filler")
    (trigger,) = await _insert(db, owner, "user.message.v1", [_unit(rng, base, 0.0)], "ask")
    source = SemanticSource(enabled=True, schemas=(schema,), limit=5, min_similarity=0.0)
    factory = app.state.resources.session_factory

    async def rare_pointers() -> list[str]:
        async with tenant_session(factory, owner) as session:
            query = await semantic_source.semantic_query(
                session, owner, trigger, source, [wide, rare], [], NONE
            )
        assert isinstance(query, SeedQuery)
        return list(query.params["rare_pointers"])

    assert await rare_pointers() == [wide, rare]  # exact: the index is being built
    await indexes.wait()
    assert await _index_valid(db, schema) is True
    assert await rare_pointers() == [rare]


async def test_a_subsets_costly_words_are_counted_once_per_its_own_ttl(
    app: FastAPI, db: AsyncEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The subset's words are counted less often than the tenant's (``subset_ttl``)."""
    monkeypatch.setattr(terms, "NOMINATION_MAX_RECORDS", 10)
    monkeypatch.setattr(terms, "COMMON_MIN_RECORDS", 1)
    monkeypatch.setattr(terms, "COMMON_SHARE", 0.0)
    rng, schema, base = _world(13)
    owner = app.state.resources.default_tenant
    word = f"zq{uuid.uuid4().hex[:8]}"
    now = [0.0]
    words = CommonWords(ttl=10, clock=lambda: now[0], subset_ttl=100)
    factory = app.state.resources.session_factory

    async def costly() -> frozenset[str]:
        async with tenant_session(factory, owner) as session:
            return (await words.costly(session, owner, _literal(schema))).keywords

    await _insert(db, owner, schema, [_unit(rng, base, 0.1) for _ in range(5)], "doc")
    assert word not in await costly()
    await _insert(db, owner, schema, [_unit(rng, base, 0.1) for _ in range(30)], "d", (word,))
    now[0] = 50.0  # past the tenant's ttl, within the subset's
    assert word not in await costly()
    now[0] = 100.5
    assert word in await costly()


async def test_a_set_built_before_its_btree_gets_it_and_is_searched_exactly_meanwhile(
    app: FastAPI, db: AsyncEngine, indexes: nearest.NearIndexes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A schema set whose HNSW and GIN indexes were built by a version without the btree
    (``…_ids``): the next check finds the set incomplete, searches exactly and builds the
    missing index; the set is then used again."""
    rng, schema, base = _world(19)
    owner = app.state.resources.default_tenant
    await _insert(db, owner, schema, [_unit(rng, base, 0.1) for _ in range(40)], "doc")
    (trigger,) = await _insert(db, owner, "user.message.v1", [_unit(rng, base, 0.0)], "ask")
    await _seeds(app, owner, trigger, schema)  # starts the build
    await indexes.wait()
    literal = _literal(schema)
    ids = nearest.index_names(literal)[-1]
    async with db.connect() as connection:
        auto = await connection.execution_options(isolation_level="AUTOCOMMIT")
        await auto.exec_driver_sql(f"DROP INDEX {ids}")
    fresh = nearest.NearIndexes(owner_url=app.state.resources.settings.system_database_url)
    monkeypatch.setattr(nearest, "INDEXES", fresh)  # a process started after the upgrade
    source = SemanticSource(enabled=True, schemas=(schema,), limit=5, min_similarity=0.0)
    factory = app.state.resources.session_factory
    async with tenant_session(factory, owner) as session:
        assert await semantic_source._near(session, owner, source, NONE) is None
    await fresh.wait()
    assert await _index_valid(db, schema) is True
    async with tenant_session(factory, owner) as session:
        assert await semantic_source._near(session, owner, source, NONE) == literal
