"""``GET /assemblies`` (filters, pages newest first) and ``GET /assemblies/stats`` (figures
checked against entries of known milliseconds and tokens), within the caller's tenant."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import httpx
import numpy as np
import pytest
from fastapi import FastAPI
from tests.assemblies.helpers import entry, insert_entries

LONG_AGO = datetime(2026, 1, 1, tzinfo=UTC)


async def test_entries_are_listed_newest_first_in_pages(
    client: httpx.AsyncClient, app: FastAPI, tenant: uuid.UUID
) -> None:
    ids = await insert_entries(app, [entry(tenant, query_text=f"q{i}") for i in range(5)])
    seen: list[int] = []
    cursor = None
    for _ in range(3):
        params = {"limit": 2} | ({"cursor": cursor} if cursor else {})
        page = (await client.get("/assemblies", params=params)).json()
        seen += [item["id"] for item in page["items"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == ids[::-1] and cursor is None
    first = (await client.get("/assemblies", params={"limit": 1})).json()["items"][0]
    assert first["query_text"] == "q4" and first["seed_counts"] == {"semantic": 2}


async def test_filters_by_agent_session_and_time(
    client: httpx.AsyncClient, app: FastAPI, tenant: uuid.UUID
) -> None:
    (old,) = await insert_entries(app, [entry(tenant, "a")], created_at=LONG_AGO)
    a, b, a_in_s = await insert_entries(
        app, [entry(tenant, "a"), entry(tenant, "b"), entry(tenant, "a", session_tag="session:s1")]
    )

    async def listed(**params: str) -> list[int]:
        response = await client.get("/assemblies", params=params)
        assert response.status_code == 200, response.text
        return [item["id"] for item in response.json()["items"]]

    assert await listed(agent_id="a") == [a_in_s, a, old]
    assert await listed(agent_id="b") == [b]
    assert await listed(session="s1") == await listed(session="session:s1") == [a_in_s]
    recent = (LONG_AGO + timedelta(days=1)).isoformat()
    assert await listed(agent_id="a", since=recent) == [a_in_s, a]
    assert await listed(since="2026-01-02T00:00:00") == [a_in_s, b, a]  # no zone: UTC
    assert await listed(agent_id="nobody") == []


async def test_stats_per_agent_match_the_entries(
    client: httpx.AsyncClient, app: FastAPI, tenant: uuid.UUID
) -> None:
    ms = [5.0, 7.0, 11.0, 13.0, 40.0, 100.0]
    tokens = [100, 200, 300, 400, 500, 600]
    fast = [
        entry(tenant, "fast", timings_ms={"total": t}, token_count=n, token_budget=1000,
              cache_hit=i == 0)
        for i, (t, n) in enumerate(zip(ms, tokens, strict=True))
    ]  # fmt: skip
    await insert_entries(app, fast)
    await insert_entries(app, [entry(tenant, "slow", timings_ms={"total": 500.0})])
    await insert_entries(app, [entry(tenant, "fast", timings_ms={"total": 9e9})], LONG_AGO)
    since = (LONG_AGO + timedelta(days=1)).isoformat()
    response = await client.get("/assemblies/stats", params={"since": since})
    assert response.status_code == 200, response.text
    by_agent = {row["agent_id"]: row for row in response.json()["agents"]}
    assert set(by_agent) == {"fast", "slow"}
    got = by_agent["fast"]
    assert got["count"] == 6 and got["cache_hits"] == 1
    assert got["p50_ms"] == pytest.approx(np.percentile(ms, 50))
    assert got["p99_ms"] == pytest.approx(np.percentile(ms, 99))
    assert got["mean_tokens"] == pytest.approx(350.0)
    assert got["mean_budget_use"] == pytest.approx(0.35)
    assert by_agent["slow"]["p50_ms"] == by_agent["slow"]["p99_ms"] == 500.0
    everything = (await client.get("/assemblies/stats")).json()
    assert {row["agent_id"]: row["count"] for row in everything["agents"]} == {"fast": 7, "slow": 1}


@pytest.mark.parametrize(
    ("path", "params"),
    [
        ("/assemblies", {"cursor": "abc"}),
        ("/assemblies", {"cursor": "0"}),
        ("/assemblies", {"cursor": "9" * 30}),
        ("/assemblies", {"limit": "0"}),
        ("/assemblies", {"limit": "1001"}),
        ("/assemblies", {"since": "yesterday"}),
        ("/assemblies", {"session": "has space"}),
        ("/assemblies", {"agent_id": ""}),
        ("/assemblies/stats", {"since": "2026-13-01"}),
    ],
)
async def test_bad_parameters_get_422(
    client: httpx.AsyncClient, path: str, params: dict[str, str]
) -> None:
    response = await client.get(path, params=params)
    assert response.status_code == 422, response.text


async def test_an_extreme_since_is_answered_not_failed(client: httpx.AsyncClient) -> None:
    for since in ("0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00"):
        response = await client.get("/assemblies/stats", params={"since": since})
        assert response.status_code in (200, 422), response.text
