"""Seed sources against the database: batched always-sources, exact hybrid search (cosine
and BM25) with a real schema filter, session scope, recency, and the blacklist everywhere."""

from __future__ import annotations

import json
import math
import re
import uuid

import httpx
import numpy as np
import pytest
from fastapi import FastAPI
from sqlalchemy import text
from tests import sent
from tests.assembly.helpers import post

from cairn.context import sources, terms
from cairn.context.agents import AlwaysSource, SemanticSource, parse_agent
from cairn.context.signals import extract_signals
from cairn.context.sources import (
    always as always_source,
    semantic as semantic_source,
    session as session_source,
)
from cairn.context.sources.semantic import BM25_B, BM25_K1
from cairn.context.trigger import stored_trigger
from cairn.db.engine import tenant_session

NONE: frozenset[str] = frozenset()


async def test_always_sources_come_in_one_query(
    client: httpx.AsyncClient, app: FastAPI, marker: str
) -> None:
    schema = f"tool{uuid.uuid4().hex[:6]}.v1"
    tools = [await post(client, schema_name=schema, title=f"tool {i}") for i in range(3)]
    tagged = await post(client, tags=[marker], title="tagged")
    sources = [
        AlwaysSource("schema", schema, None, "all", 10),
        AlwaysSource("schema", schema, None, "latest", 10),
        AlwaysSource("tag", None, marker, "recent", 5),
    ]
    resources = app.state.resources
    owner = resources.default_tenant
    async with (
        tenant_session(resources.session_factory, owner) as session,
        sent.by_session(session) as statements,  # this session's queries only
    ):
        batch = await always_source.always_seeds(session, owner, sources, NONE)
    assert len(statements) == 1
    ids = [seed.record_id for seed in batch.seeds]
    assert ids == [*tools[::-1], tools[-1], tagged]  # newest first; latest = the newest one


async def test_blacklist_applies_to_always_and_session(
    client: httpx.AsyncClient, app: FastAPI
) -> None:
    session_tag = f"session:{uuid.uuid4().hex[:8]}"
    kept = await post(client, schema_name="note.v1", tags=[session_tag])
    await post(client, schema_name="secret.v1", tags=[session_tag])
    trigger = await post(client, schema_name="user.message.v1", tags=[session_tag])
    resources = app.state.resources
    excluded = frozenset({"secret.v1"})
    async with tenant_session(resources.session_factory, resources.default_tenant) as session:
        batch = await session_source.session_seeds(
            session, resources.default_tenant, [session_tag], 10, excluded, trigger
        )
        always = await always_source.always_seeds(
            session,
            resources.default_tenant,
            [AlwaysSource("schema", "secret.v1", None, "all", 5)],
            excluded,
        )
    assert [seed.record_id for seed in batch.seeds] == [kept]
    assert always.seeds == []


async def test_session_seeds_are_newest_first_with_recency_scores(
    client: httpx.AsyncClient, app: FastAPI
) -> None:
    session_tag = f"session:{uuid.uuid4().hex[:8]}"
    turns = [await post(client, tags=[session_tag], title=f"turn {i}") for i in range(5)]
    trigger = turns[-1]
    resources = app.state.resources
    async with tenant_session(resources.session_factory, resources.default_tenant) as session:
        batch = await session_source.session_seeds(
            session, resources.default_tenant, [session_tag], 3, NONE, trigger
        )
    assert [seed.record_id for seed in batch.seeds] == turns[3::-1][:3]
    scores = [seed.score for seed in batch.seeds]
    assert scores == sorted(scores, reverse=True) and scores[0] == 1.0


async def test_semantic_search_returns_the_exact_top_results_within_the_schema_filter(
    client: httpx.AsyncClient, app: FastAPI
) -> None:
    schema = f"kb{uuid.uuid4().hex[:6]}.v1"
    topics = ["cats sleep on sofas", "dogs love long walks", "invoices are due friday",
              "the lisbon office moved", "kittens chase string", "quarterly revenue grew",
              "a cat napping in the sun", "tax forms for the office"]  # fmt: skip
    for i, topic in enumerate(topics):
        await post(client, schema_name=schema, title=f"doc {i}", context={"text": topic})
        await post(client, schema_name="other.v1", title=f"decoy {i}", context={"text": topic})
    trigger = await post(
        client, schema_name="user.message.v1", title="q", context={"text": "where do cats sleep"}
    )
    resources = app.state.resources
    source = SemanticSource(enabled=True, schemas=(schema,), limit=3, min_similarity=0.0)
    async with tenant_session(resources.session_factory, resources.default_tenant) as session:
        batch = await semantic_source.semantic_seeds(
            session, resources.default_tenant, trigger, source, [], [], NONE
        )
        exact = await _exact_top(session, trigger, schema, 3)
    assert [seed.record_id for seed in batch.seeds] == exact  # exact over `schema` only


async def _exact_top(session: object, trigger: uuid.UUID, schema: str, k: int) -> list[uuid.UUID]:
    """The fused ranking computed here from scratch: cosine, and BM25 over the schema's
    records from PostgreSQL's lexemes (stemming only), as the seeds module defines them."""
    rows = await session.execute(  # type: ignore[attr-defined]
        text(
            "SELECT id, embedding, to_tsvector('english', coalesce(llm_text, '')) AS tsv"
            " FROM breadcrumbs WHERE schema_name = :s OR id = :t"
        ),
        {"s": schema, "t": trigger},
    )
    vectors, lexemes = {}, {}
    for row in rows:
        vectors[row.id] = np.asarray(json.loads(row.embedding))
        lexemes[row.id] = _term_counts(row.tsv)
    probe, terms = vectors.pop(trigger), set(lexemes.pop(trigger))
    avgdl = sum(sum(c.values()) for c in lexemes.values()) / len(lexemes)
    n = len(lexemes)

    def bm25(counts: dict[str, int]) -> float:
        total, length = 0.0, sum(counts.values())
        for term in terms & set(counts):
            df = sum(term in other for other in lexemes.values())
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            tf = counts[term]
            norm = tf + BM25_K1 * (1 - BM25_B + BM25_B * length / avgdl)
            total += idf * tf * (BM25_K1 + 1) / norm
        return total

    lexical = {i: bm25(counts) for i, counts in lexemes.items()}
    best = max(lexical.values())
    fused = {i: _fused(float(vectors[i] @ probe), lexical[i], best) for i in vectors}
    return sorted(fused, key=lambda i: (-fused[i], str(i)))[:k]


def _fused(similarity: float, lexical: float, best_lexical: float) -> float:
    """Cosine, raised towards 1 by the record's BM25 score relative to the search's best."""
    cosine = min(1.0, max(0.0, similarity))
    relative = lexical / best_lexical if best_lexical > 0 else 0.0
    return cosine + semantic_source.LEXICAL_WEIGHT * relative * (1.0 - cosine)


def _term_counts(tsv: str) -> dict[str, int]:
    """``'cat':1,4 'sleep':2`` → {cat: 2, sleep: 1} (a tsvector's text form)."""
    counts = {}
    for lexeme, positions in re.findall(r"'((?:[^']|'')*)'(?::([0-9A-D,]+))?", tsv):
        counts[lexeme.replace("''", "'")] = len(positions.split(",")) if positions else 1
    return counts


async def _question(client: httpx.AsyncClient, question: str) -> uuid.UUID:
    return await post(client, schema_name="user.message.v1", title="q", context={"text": question})


async def test_a_rare_shared_word_lifts_a_record_over_a_merely_similar_one(
    client: httpx.AsyncClient, app: FastAPI
) -> None:
    schema = f"turn{uuid.uuid4().hex[:6]}.v1"
    texts = ["I went hiking with my family last weekend", "We went camping by the lake",
             "My kids loved the trip to the mountains", "Grandma sent us a quilt from Oaxaca",
             "The weather was lovely on our walk"]  # fmt: skip
    ids = [await post(client, schema_name=schema, title="turn", context={"text": t}) for t in texts]
    trigger = await _question(client, "Where did the quilt come from?")
    resources = app.state.resources
    source = SemanticSource(enabled=True, schemas=(schema,), limit=5, min_similarity=0.0)
    async with tenant_session(resources.session_factory, resources.default_tenant) as session:
        batch = await semantic_source.semantic_seeds(
            session, resources.default_tenant, trigger, source, [], [], NONE
        )
    assert batch.seeds[0].record_id == ids[3]
    # The lexical part only ever raises a score, and only for records sharing a word.
    for seed in batch.seeds:
        cosine = float(seed.detail.split("similarity ")[1].split(",")[0])
        shares = not seed.detail.endswith("lexical 0.00")
        assert (seed.score > cosine + 0.001) == shares and seed.score <= 1.0


def _common_from(monkeypatch: pytest.MonkeyPatch, records: int) -> None:
    """A word is common when ``records`` or more of the tenant's records hold it (the
    sample takes every record, the share is off)."""
    monkeypatch.setattr(terms, "SAMPLE", 10**9)
    monkeypatch.setattr(terms, "COMMON_SHARE", 0.0)
    monkeypatch.setattr(terms, "COMMON_MIN_RECORDS", records)


async def test_a_rare_word_nominates_a_record_the_vector_search_misses(
    client: httpx.AsyncClient, app: FastAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    # More near-duplicates than the vector nominations hold (50), all sharing the trigger's
    # common words: the record sharing only a rare word with the trigger comes from the
    # full-text nomination, which leaves the common words out, and BM25 lifts it first.
    _common_from(monkeypatch, 100)
    schema = f"memo{uuid.uuid4().hex[:6]}.v1"
    for i in range(120):
        await post(client, schema_name=schema, title="memo",
                   context={"text": f"Widget shipment {i} left the depot on time"})  # fmt: skip
    rare = await post(
        client, schema_name=schema, title="memo", context={"text": "Tax forms from Oaxaca"}
    )
    trigger = await _question(client, "Did the widget shipment reach the depot in Oaxaca?")
    resources = app.state.resources
    source = SemanticSource(enabled=True, schemas=(schema,), limit=3, min_similarity=0.0)
    async with tenant_session(resources.session_factory, resources.default_tenant) as session:
        common = await terms.CommonWords().of(session, resources.default_tenant)
        assert {"widget", "shipment", "depot"} <= common.lexemes
        assert "oaxaca" not in common.lexemes
        nearest = await session.execute(
            text(
                "SELECT id FROM breadcrumbs WHERE schema_name = :schema ORDER BY 1 - (embedding"
                " <=> (SELECT embedding FROM breadcrumbs WHERE id = :trigger)) DESC LIMIT 50"
            ),
            {"schema": schema, "trigger": trigger},
        )
        assert rare not in set(nearest.scalars())
        batch = await semantic_source.semantic_seeds(
            session, resources.default_tenant, trigger, source, [], [], NONE
        )
    assert batch.seeds[0].record_id == rare


async def test_common_words_are_counted_once_per_ttl(
    client: httpx.AsyncClient, app: FastAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    _common_from(monkeypatch, 30)
    word = f"zq{uuid.uuid4().hex[:8]}"
    now = [0.0]
    words = terms.CommonWords(ttl=10, clock=lambda: now[0])
    resources = app.state.resources

    async def common() -> frozenset[str]:
        async with tenant_session(resources.session_factory, resources.default_tenant) as session:
            return (await words.of(session, resources.default_tenant)).lexemes

    assert word not in await common()
    for i in range(40):
        await post(client, title="note", context={"text": f"{word} number {i}"})
    now[0] = 9.0
    assert word not in await common()  # still the count of t=0
    now[0] = 10.5
    assert word in await common()  # counted again
    # The share counts too: 40 records are fewer than 45% of the tenant's 90 or more.
    for i in range(50):
        await post(client, title="note", context={"text": f"filler {i}"})
    monkeypatch.setattr(terms, "COMMON_SHARE", 0.45)
    now[0] = 21.0
    assert word not in await common()


async def test_semantic_scope_session_and_threshold(
    client: httpx.AsyncClient, app: FastAPI
) -> None:
    session_tag = f"session:{uuid.uuid4().hex[:8]}"
    inside = await post(client, tags=[session_tag], context={"text": "the blue whale is huge"})
    await post(client, context={"text": "the blue whale is huge indeed"})  # outside the session
    trigger = await post(client, tags=[session_tag], context={"text": "how big is a blue whale"})
    resources = app.state.resources
    scoped = SemanticSource(enabled=True, limit=5, min_similarity=0.0, scope="session")
    strict = SemanticSource(enabled=True, limit=5, min_similarity=0.99, scope="session")
    async with tenant_session(resources.session_factory, resources.default_tenant) as session:
        found = await semantic_source.semantic_seeds(
            session, resources.default_tenant, trigger, scoped, [], [session_tag], NONE
        )
        none = await semantic_source.semantic_seeds(
            session, resources.default_tenant, trigger, strict, [], [session_tag], NONE
        )
    assert [seed.record_id for seed in found.seeds] == [inside]
    assert none.seeds == [] and [rid for rid, _ in none.below_threshold] == [inside]


async def test_only_the_nearest_misses_are_listed(
    client: httpx.AsyncClient, app: FastAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(semantic_source, "NEAR_MISSES", 2)
    session_tag = f"session:{uuid.uuid4().hex[:8]}"
    for text_ in ("whales sing", "whales dive deep", "the sea is cold", "tax forms"):
        await post(client, tags=[session_tag], context={"text": text_})
    trigger = await post(client, tags=[session_tag], context={"text": "do whales sing"})
    resources = app.state.resources
    strict = SemanticSource(enabled=True, limit=5, min_similarity=0.999, scope="session")
    async with tenant_session(resources.session_factory, resources.default_tenant) as session:
        batch = await semantic_source.semantic_seeds(
            session, resources.default_tenant, trigger, strict, [], [session_tag], NONE
        )
    scores = [score for _, score in batch.below_threshold]
    assert batch.seeds == [] and len(scores) == 2 and scores == sorted(scores, reverse=True)


async def test_embeddings_are_stored_in_the_row(app: FastAPI) -> None:
    # The exact scan of a filtered subset reads every vector; TOASTed out of line, each read
    # costs several extra pages (revision 0008 stores them PLAIN).
    assert await _storage(app, "embedding") == {"embedding": "p"}


async def test_lexemes_and_keywords_are_stored_in_the_row(app: FastAPI) -> None:
    # The hybrid search checks both for every record of its subset; fetched from the TOAST
    # table, each check costs several page reads (revision 0009 stores them MAIN).
    storage = await _storage(app, "search_vector", "entity_keywords")
    assert storage == {"search_vector": "m", "entity_keywords": "m"}


async def _storage(app: FastAPI, *columns: str) -> dict[str, str]:
    """Each column's storage strategy in the breadcrumbs table (p plain, m main, ...)."""
    async with app.state.resources.system_engine.connect() as connection:
        rows = await connection.execute(
            text(
                "SELECT attname, attstorage::text FROM pg_attribute"
                " WHERE attrelid = 'breadcrumbs'::regclass AND attname = ANY(:columns)"
            ),
            {"columns": list(columns)},
        )
        return {name: kind for name, kind in rows}


async def test_every_source_comes_in_one_statement_as_it_would_alone(
    client: httpx.AsyncClient, app: FastAPI
) -> None:
    """The seed stage sends every source's query in one statement; each source's batch is
    the one its query returns on its own."""
    key = uuid.uuid4().hex[:8]
    session_tag, schema, tools = f"session:{key}", f"kb{key[:6]}.v1", f"tool{key[:6]}.v1"
    for i in range(3):
        await post(client, schema_name=tools, title=f"tool {i}", context={"text": f"tool {i}"})
    for i, topic in enumerate(["cats sleep on sofas", "db.py crashed at start", "dogs walk"]):
        await post(
            client, schema_name=schema, tags=[session_tag], title=f"doc {i}",
            context={"text": topic},
        )  # fmt: skip
    trigger_id = await post(
        client, schema_name="user.message.v1", tags=[session_tag], title="q",
        context={"text": "why did the cats crash in db.py"},
    )  # fmt: skip
    definition = {
        "agent_id": f"seeds-{key}",
        "context_trigger": {"any_tags": [f"never:{key}"]},
        "context_sources": {
            "always": [{"type": "schema", "schema_name": tools, "method": "all", "limit": 5}],
            "semantic": {"schemas": [schema], "limit": 2, "min_similarity": 0.2},
            "session": {"limit": 5},
            "signals": {"limit": 5},
        },
    }
    resources = app.state.resources
    owner = resources.default_tenant
    agent = parse_agent(uuid.uuid4(), owner, definition)
    assert agent is not None
    async with tenant_session(resources.session_factory, owner) as session:
        found = await stored_trigger(session, owner, trigger_id)
        assert found is not None
        signals = extract_signals(found.text, found.record.tags, found.keywords)
        request = sources.SeedRequest(
            session, agent, found, tuple(found.keywords), (session_tag,), NONE,
            common_words=terms.CommonWords(), signals=signals,
        )  # fmt: skip
        alone = [await source.seeds(request) for source in sources.SOURCES]
        async with sent.by_session(session) as statements:
            together = await sources.gather(request)
    assert len(statements) == 1
    assert together == alone
    by_source = {batch.seeds[0].source: batch for batch in alone if batch.seeds}
    assert set(by_source) == {"trigger", "always", "semantic", "session", "signals"}
    assert len(by_source["always"].seeds) == 3 and len(by_source["semantic"].seeds) == 2
