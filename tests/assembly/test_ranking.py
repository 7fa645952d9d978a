"""The agent option ``ranking`` end to end: near-identical records are shown once (and the
explanation names the one kept), unless the agent turns suppression off; MMR and the
relevance floor run on real embeddings; bad options are refused with their path."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import numpy as np
import pytest
from fastapi import FastAPI
from tests.assembly.helpers import link, post

from cairn.context.ranking import load_embeddings
from cairn.context.records import RecordCache, load_records_cached
from cairn.db.engine import tenant_session

# Semantic seeds from the query's session only: other tests post the same sentences.
SEMANTIC = {"enabled": True, "limit": 10, "min_similarity": 0.1, "scope": "session"}
SOURCES = {"semantic": SEMANTIC, "session": {"limit": 0}}


@pytest.fixture(autouse=True)
def settled_at_once(app: FastAPI, monkeypatch: pytest.MonkeyPatch) -> None:
    """No settling time after a change (see tests/assembly/test_ondemand.py)."""
    monkeypatch.setattr(app.state.resources.contexts.answers, "settle_s", 0.0)


async def ask(client: httpx.AsyncClient, marker: str, **agent: Any) -> dict[str, Any]:
    """The context for the question about the twins, in the test's session."""
    query = f"Who plays the bassoon at the winter concert? {marker}"
    body = {"context_sources": SOURCES, "context_budget": 2000, **agent}
    request = {"query": query, "agent": body, "session": marker}
    response = await client.post("/contexts/query", json=request)
    assert response.status_code == 200, response.text
    return dict(response.json())


async def twins(client: httpx.AsyncClient, marker: str) -> tuple[uuid.UUID, ...]:
    """Two records saying the same thing, the first posted first, and one unlike them."""
    text = f"Ottoline plays the bassoon at the winter concert in the old chapel ({marker})"
    tags = [f"session:{marker}"]
    first = await post(client, title="Concert", tags=tags, context={"text": text})
    second = await post(client, title="Concert", tags=tags, context={"text": text + "."})
    other = await post(
        client, title="Workshop", tags=tags,
        context={"text": f"Bartholomew repairs bicycles in a workshop by the harbour ({marker})"},
    )  # fmt: skip
    return first, second, other


def ids(answer: dict[str, Any], key: str) -> set[uuid.UUID]:
    return {uuid.UUID(item["record_id"]) for item in answer["explain"][key]}


async def test_a_near_identical_record_is_shown_once_and_named_as_a_duplicate(
    client: httpx.AsyncClient, marker: str
) -> None:
    first, second, _ = await twins(client, marker)
    answer = await ask(client, marker, ranking={"duplicate_similarity": 0.95})
    assert answer["formatted_context"].count(f"({marker})") == 2  # a twin and the workshop
    assert "Bartholomew repairs bicycles" in answer["formatted_context"]
    kept = first if first in ids(answer, "selected") else second
    [dropped] = [
        d for d in answer["explain"]["dropped"] if d["record_id"] in {str(first), str(second)}
    ]
    assert dropped["reason"] == "duplicate_content"
    assert {uuid.UUID(dropped["record_id"]), kept} == {first, second}
    assert dropped["duplicate_of"] == str(kept)
    assert dropped["stage"] == "select"
    assert "rank" in answer["timings_ms"]


@pytest.mark.parametrize("ranking", [{"duplicate_similarity": None}, {}, None])
async def test_with_suppression_off_or_unset_both_are_shown(
    client: httpx.AsyncClient, marker: str, ranking: dict[str, Any] | None
) -> None:
    first, second, _ = await twins(client, marker)
    answer = await ask(client, marker, **({} if ranking is None else {"ranking": ranking}))
    assert answer["formatted_context"].count(f"({marker})") == 3
    assert {first, second} <= ids(answer, "selected")
    assert all(d["reason"] != "duplicate_content" for d in answer["explain"]["dropped"])
    assert "rank" not in answer["timings_ms"]  # nothing to compare: no embeddings loaded


async def test_mmr_takes_the_unlike_record_before_the_copy(
    client: httpx.AsyncClient, marker: str
) -> None:
    first, second, other = await twins(client, marker)
    plain = await ask(client, marker, ranking={"duplicate_similarity": None})
    ranking = {"duplicate_similarity": None, "mmr_lambda": 0.3}
    diverse = await ask(client, marker, ranking=ranking)
    by_cost = [uuid.UUID(s["record_id"]) for s in plain["explain"]["selected"]]
    by_mmr = [uuid.UUID(s["record_id"]) for s in diverse["explain"]["selected"]]
    assert set(by_cost) == set(by_mmr) >= {first, second, other}  # the budget holds all
    assert by_cost.index(other) > max(by_cost.index(first), by_cost.index(second))
    assert by_mmr.index(other) < max(by_mmr.index(first), by_mmr.index(second))
    assert "rank" in diverse["timings_ms"]


async def test_the_relevance_floor_drops_graph_records_but_keeps_seeds(
    client: httpx.AsyncClient, app: FastAPI, marker: str
) -> None:
    tags = [f"session:{marker}"]
    seed = await post(
        client, title="Concert", tags=tags,
        context={"text": f"Ottoline plays the bassoon at the winter concert ({marker})"},
    )  # fmt: skip
    # Not a seed (the semantic source reads note.v1 only): reached through the edge alone.
    linked = await post(
        client, schema_name="fact.v1", title="Chapel", tags=tags,
        context={"text": f"The old chapel seats two hundred people ({marker})"},
    )  # fmt: skip
    await link(app, [(seed, linked, 0, 1.0)])  # causal
    sources = {**SOURCES, "semantic": {**SEMANTIC, "schemas": ["note.v1"]}}
    free = await ask(client, marker, context_sources=sources)
    assert {seed, linked} <= ids(free, "selected")
    floored = await ask(client, marker, context_sources=sources, ranking={"max_path_cost": 0.0})
    # The seed's path costs more than 0 too, but seeds answer to min_similarity.
    assert seed in ids(floored, "selected")
    [below] = [d for d in floored["explain"]["dropped"] if d["record_id"] == str(linked)]
    assert below["reason"] == "below_threshold" and below["stage"] == "select"
    assert below["path_cost"] > 0


@pytest.mark.parametrize(
    ("ranking", "path"),
    [
        ({"duplicate_similarity": 1.5}, "context.ranking.duplicate_similarity"),
        ({"duplicate_similarity": 0}, "context.ranking.duplicate_similarity"),
        ({"mmr_lambda": -0.1}, "context.ranking.mmr_lambda"),
        ({"max_path_cost": "far"}, "context.ranking.max_path_cost"),
        ({"mmr_lamda": 0.5}, "context.ranking"),
        ("on", "context.ranking"),
    ],
)
async def test_bad_ranking_options_are_refused_with_their_path(
    client: httpx.AsyncClient, ranking: Any, path: str
) -> None:
    agent = {"agent_id": "ranked", "context_trigger": {}, "ranking": ranking}
    response = await client.post(
        "/breadcrumbs",
        json={"schema_name": "agent.def.v1", "title": "ranked", "context": agent},
    )
    assert response.status_code == 422, response.text
    assert path in response.json()["detail"]


async def test_embeddings_come_with_the_records_and_follow_their_version(
    client: httpx.AsyncClient, app: FastAPI, marker: str
) -> None:
    first, second, _ = await twins(client, marker)
    resources = app.state.resources
    tenant = resources.default_tenant
    cache = RecordCache(100)
    async with tenant_session(resources.session_factory, tenant) as session:
        records = await load_records_cached(session, tenant, [first, second], frozenset(), cache)
        fresh = await load_embeddings(session, tenant, records.values())  # from the table
        cached = await load_embeddings(session, tenant, records.values(), cache)
        rows = fresh.rows([first, second])
        assert np.allclose(cached.rows([first, second]), rows)
        assert float(rows[0] @ rows[1]) > 0.95 and np.isclose(np.linalg.norm(rows[0]), 1.0)
        # A cached vector is used as long as the record's version is the one cached...
        stale = np.zeros_like(rows[0])
        stale[0] = 1.0
        cache.put_vector(first, records[first].version or 0, stale)
        assert (await load_embeddings(session, tenant, [records[first]], cache)).rows(
            [first]
        ).tolist() == [stale.tolist()]
        # ...and read again once it moved on.
        cache.put_vector(first, (records[first].version or 0) - 1, stale)
        again = await load_embeddings(session, tenant, [records[first]], cache)
        assert np.allclose(again.rows([first]), rows[:1])
        assert cache.vector(first, records[first].version or 0) is not None
