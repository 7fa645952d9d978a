"""Per-caller limits: the request rate (429 with Retry-After) and open SSE connections."""

from __future__ import annotations

import asyncio
import gc
import uuid
from collections.abc import AsyncIterator

import httpx
import pytest
from tests.auth.conftest import MAX_SSE, RATE_BURST, Mint, bearer

from cairn.auth.limits import ConnectionLimiter, RateLimiter
from cairn.errors import TooManyRequests


async def test_a_caller_over_its_rate_gets_429_with_retry_after(
    jwt_client: httpx.AsyncClient, mint: Mint
) -> None:
    token = mint(roles=["subscriber"])
    statuses = []
    for _ in range(RATE_BURST + 20):
        response = await jwt_client.get("/breadcrumbs?limit=1", headers=bearer(token))
        statuses.append(response.status_code)
        if response.status_code == 429:
            assert int(response.headers["Retry-After"]) >= 1
            assert response.json()["error"] == "too_many_requests"
            break
    assert statuses[-1] == 429 and statuses.count(200) >= RATE_BURST


async def test_another_caller_keeps_its_own_allowance(
    jwt_client: httpx.AsyncClient, mint: Mint
) -> None:
    greedy, other = mint(roles=["subscriber"]), mint(roles=["subscriber"])
    for _ in range(RATE_BURST + 20):
        if (
            await jwt_client.get("/breadcrumbs?limit=1", headers=bearer(greedy))
        ).status_code == 429:
            break
    else:
        pytest.fail("the greedy caller was never limited")
    assert (await jwt_client.get("/breadcrumbs?limit=1", headers=bearer(other))).status_code == 200


def test_the_bucket_refills_at_the_configured_rate() -> None:
    now = [0.0]
    limiter = RateLimiter(2.0, 3, clock=lambda: now[0])
    key = (uuid.uuid4(), "a")
    for _ in range(3):
        limiter.take(key)
    with pytest.raises(TooManyRequests) as refused:
        limiter.take(key)
    assert refused.value.headers["Retry-After"] == "1"
    now[0] += 0.5  # one request's worth at 2/s
    limiter.take(key)
    with pytest.raises(TooManyRequests):
        limiter.take(key)


def test_a_zero_rate_turns_the_limit_off() -> None:
    limiter = RateLimiter(0.0, 1)
    for _ in range(100):
        limiter.take((uuid.uuid4(), "a"))


def test_connection_slots_are_given_back_once() -> None:
    limiter = ConnectionLimiter(2)
    key = (uuid.uuid4(), "a")
    first, second = limiter.acquire(key), limiter.acquire(key)
    with pytest.raises(TooManyRequests):
        limiter.acquire(key)
    first.release()
    first.release()  # idempotent: a second call does not free someone else's slot
    assert limiter.open_count(key) == 1
    third = limiter.acquire(key)
    assert limiter.open_count(key) == 2 and second and third


def test_a_slot_dropped_without_release_is_given_back() -> None:
    limiter = ConnectionLimiter(1)
    key = (uuid.uuid4(), "a")
    slot = limiter.acquire(key)
    del slot  # a response discarded before it ever streamed
    gc.collect()
    assert limiter.open_count(key) == 0
    limiter.acquire(key)


async def _open(url: str, token: str) -> tuple[httpx.AsyncClient, httpx.Response]:
    client = httpx.AsyncClient(base_url=url, timeout=httpx.Timeout(10, read=30))
    request = client.build_request("GET", "/events/stream", params={"access_token": token})
    return client, await client.send(request, stream=True)


async def test_sse_connections_per_caller_are_capped_and_released(
    jwt_live_url: str, mint: Mint
) -> None:
    token = mint(roles=["subscriber"])
    opened = [await _open(jwt_live_url, token) for _ in range(MAX_SSE)]
    try:
        assert all(response.status_code == 200 for _, response in opened)
        client, refused = await _open(jwt_live_url, token)
        assert refused.status_code == 429, await refused.aread()
        await refused.aclose()
        await client.aclose()
        other_client, other = await _open(jwt_live_url, mint(roles=["subscriber"]))
        assert other.status_code == 200  # another caller is not affected
        await other.aclose()
        await other_client.aclose()
        # Closing one gives its slot back.
        client, response = opened.pop()
        await response.aclose()
        await client.aclose()
        for _ in range(100):
            client, again = await _open(jwt_live_url, token)
            if again.status_code == 200:
                opened.append((client, again))
                break
            await again.aclose()
            await client.aclose()
            await asyncio.sleep(0.05)
        else:
            pytest.fail("the closed connection's slot was never released")
    finally:
        for client, response in opened:
            await response.aclose()
            await client.aclose()


async def test_a_chunked_body_over_the_limit_gets_413(client: httpx.AsyncClient) -> None:
    async def chunks() -> AsyncIterator[bytes]:
        # Without the body limit this would be a 422 (title too long), not a 413.
        yield b'{"schema_name": "note.v1", "tags": [], "context": {}, "title": "'
        for _ in range(20):
            yield b"y" * 100_000  # 2 MB in all, over the 1 MiB default, without Content-Length
        yield b'"}'

    response = await client.post(
        "/breadcrumbs", content=chunks(), headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 413, response.text
    assert response.json()["error"] == "payload_too_large"


async def test_a_chunked_body_under_the_limit_is_read(client: httpx.AsyncClient) -> None:
    async def chunks() -> AsyncIterator[bytes]:
        yield b'{"schema_name": "note.v1", "title": "small", "tags": [], "context": {"a": 1}}'

    response = await client.post(
        "/breadcrumbs", content=chunks(), headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 201, response.text
