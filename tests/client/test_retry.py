"""Retries: 429 and 503 only, after Retry-After, bounded, and only when a repeat is safe."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import pytest
from cairn_client import AsyncClient, Client, RetryPolicy
from cairn_client._retry import retry_after_s
from cairn_client.errors import CairnError, RateLimited, Unavailable
from tests.client.mock import Script, error

FAST = RetryPolicy(attempts=3, backoff_s=0.0)
CREATED = httpx.Response(201, json={"id": "00000000-0000-0000-0000-000000000001", "version": 1})


def test_a_create_is_retried_after_503_with_the_same_idempotency_key() -> None:
    script = Script(error(503, "unavailable", "database down", **{"Retry-After": "0"}), CREATED)
    with Client("http://x", transport=script.sync(), retry=FAST) as cairn:
        created = cairn.create_breadcrumb("a", {})
    first, second = script.requests
    assert created.version == 1 and len(script.requests) == 2
    assert first.headers["idempotency-key"] == second.headers["idempotency-key"]


def test_a_batch_is_retried_with_a_key_on_every_record() -> None:
    answer = httpx.Response(200, json={"results": [], "created": 0, "replayed": 0, "failed": 0})
    script = Script(error(503, "unavailable", "database down", **{"Retry-After": "0"}), answer)
    records = [{"title": "a", "context": {}}, {"title": "b", "context": {}, "idempotency_key": "k"}]
    with Client("http://x", transport=script.sync(), retry=FAST) as cairn:
        cairn.create_breadcrumbs(records, atomic=True)
    first, second = script.bodies()
    assert first == second and script.requests[0].url.params["atomic"] == "true"
    keys = [record["idempotency_key"] for record in first["records"]]
    assert keys[1] == "k" and keys[0] and keys[0] != "k"
    assert "idempotency_key" not in records[0]  # the caller's records are left alone


def test_reads_are_retried_on_429_up_to_the_bound_then_raise() -> None:
    script = Script(error(429, "too_many_requests", "slow down", **{"Retry-After": "0"}))
    with (
        Client("http://x", transport=script.sync(), retry=FAST) as cairn,
        pytest.raises(RateLimited) as raised,
    ):
        cairn.list_agents()
    assert len(script.requests) == 3 and raised.value.retry_after == "0"


def test_a_post_without_idempotency_key_is_not_repeated() -> None:
    script = Script(error(503, "unavailable", "down", **{"Retry-After": "0"}))
    with (
        Client("http://x", transport=script.sync(), retry=FAST) as cairn,
        pytest.raises(Unavailable),
    ):
        cairn.add_tags("00000000-0000-0000-0000-000000000001", ["x"])
    assert len(script.requests) == 1


def test_other_errors_are_not_retried() -> None:
    script = Script(error(500, "internal_error", "boom"))
    with (
        Client("http://x", transport=script.sync(), retry=FAST) as cairn,
        pytest.raises(CairnError),
    ):
        cairn.list_agents()
    assert len(script.requests) == 1


def test_a_retry_after_longer_than_the_policy_allows_is_raised_at_once() -> None:
    script = Script(error(503, "unavailable", "down", **{"Retry-After": "3600"}))
    with (
        Client("http://x", transport=script.sync(), retry=FAST) as cairn,
        pytest.raises(Unavailable),
    ):
        cairn.list_agents()
    assert len(script.requests) == 1


async def test_the_async_client_waits_what_the_server_asks(monkeypatch: pytest.MonkeyPatch) -> None:
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    monkeypatch.setattr("cairn_client._client._pause", sleep)
    script = Script(
        error(429, "too_many_requests", "wait", **{"Retry-After": "2"}),
        httpx.Response(200, json=[]),
    )
    async with AsyncClient("http://x", transport=httpx.MockTransport(script), retry=FAST) as cairn:
        assert await cairn.list_agents() == []
    assert waits == [2.0]


def test_retry_after_reads_seconds_and_http_dates() -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    assert retry_after_s("3") == 3.0
    assert retry_after_s(format_datetime(now + timedelta(seconds=5), usegmt=True), now) == 5.0
    assert retry_after_s("soon") is None and retry_after_s(None) is None
