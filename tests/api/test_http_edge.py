"""The server's edge over real sockets: bounded headers, slow clients disconnected, long
SSE streams and large-but-allowed bodies untouched."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from urllib.parse import urlsplit

import httpx
import pytest
from fastapi import FastAPI
from tests.factories import breadcrumb
from tests.processes import served
from tests.stream.sse_client import sse

from cairn.config import Limits

EDGE = Limits(header_timeout_s=1.0, body_timeout_s=1.5, max_header_bytes=16 * 1024)


@pytest.fixture
async def edge_url(app: FastAPI) -> AsyncIterator[str]:
    """The session app behind an edge with short timeouts."""
    async with served(app, EDGE) as url:
        yield url


async def _connect(url: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    parts = urlsplit(url)
    return await asyncio.open_connection(parts.hostname, parts.port)


async def _answer(reader: asyncio.StreamReader, within_s: float = 5.0) -> bytes:
    """Everything the server sends until it closes the connection."""
    return await asyncio.wait_for(reader.read(), within_s)


async def _send(writer: asyncio.StreamWriter, data: bytes) -> None:
    """Write, ignoring that the server may already have closed (the answer tells)."""
    try:
        writer.write(data)
        await writer.drain()
    except ConnectionError:
        pass


async def test_an_oversized_header_gets_431(edge_url: str) -> None:
    reader, writer = await _connect(edge_url)
    await _send(writer, b"GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ")
    for _ in range(128):  # 8 MiB in 64 KiB pieces; the server stops reading long before
        await _send(writer, b"a" * 65536)
        if writer.is_closing() or reader.at_eof():
            break
    answer = await _answer(reader)
    writer.close()
    assert answer.startswith(b"HTTP/1.1 431 "), answer[:200]
    assert b'"error": "headers_too_large"' in answer


async def test_ten_thousand_headers_are_refused(edge_url: str) -> None:
    reader, writer = await _connect(edge_url)
    headers = b"".join(b"X-H%d: v\r\n" % i for i in range(10_000))
    await _send(writer, b"GET /health HTTP/1.1\r\nHost: x\r\n" + headers + b"\r\n")
    answer = await _answer(reader)
    writer.close()
    assert answer.startswith(b"HTTP/1.1 431 "), answer[:200]
    assert b"more than 100 headers" in answer


async def test_a_long_request_line_is_refused(edge_url: str) -> None:
    reader, writer = await _connect(edge_url)
    await _send(writer, b"GET /breadcrumbs?tag=" + b"a" * 20_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n")
    answer = await _answer(reader)
    writer.close()
    assert answer.startswith(b"HTTP/1.1 431 "), answer[:200]


@pytest.mark.parametrize(
    "sent",
    [b"", b"GET /hea", b"GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: "],
    ids=["nothing", "half a request line", "half the headers"],
)
async def test_a_client_stalling_in_its_headers_is_disconnected(edge_url: str, sent: bytes) -> None:
    reader, writer = await _connect(edge_url)
    started = time.monotonic()
    await _send(writer, sent)
    answer = await _answer(reader, within_s=EDGE.header_timeout_s + 3)
    writer.close()
    assert answer == b""  # closed without an answer
    assert time.monotonic() - started < EDGE.header_timeout_s + 1


async def test_trickled_headers_do_not_reset_the_deadline(edge_url: str) -> None:
    reader, writer = await _connect(edge_url)
    started = time.monotonic()
    await _send(writer, b"GET /health HTTP/1.1\r\n")
    while not reader.at_eof() and time.monotonic() - started < EDGE.header_timeout_s + 2:
        await _send(writer, b"X: y\r\n")  # one header every 0.2 s, never the blank line
        await asyncio.sleep(0.2)
    assert await _answer(reader) == b""
    assert time.monotonic() - started < EDGE.header_timeout_s + 1
    writer.close()


async def test_a_client_stalling_in_its_body_is_disconnected(edge_url: str) -> None:
    reader, writer = await _connect(edge_url)
    head = b"POST /breadcrumbs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    await _send(writer, head + b"Content-Length: 1000\r\n\r\n" + b'{"title": "slow"')
    started = time.monotonic()
    answer = await _answer(reader, within_s=EDGE.body_timeout_s + 3)
    writer.close()
    assert b" 2" not in answer.split(b"\r\n", 1)[0]  # no 2xx: nothing was created
    assert time.monotonic() - started < EDGE.body_timeout_s + 1


async def test_ten_thousand_query_tags_are_refused_fast(live_url: str) -> None:
    tags = ",".join(f"{i:x}" for i in range(10_000))  # a 44 KB query, under the header limit
    async with httpx.AsyncClient(base_url=live_url, timeout=10) as http:
        started = time.monotonic()
        response = await http.get(f"/breadcrumbs?any_tags={tags}")
        elapsed = time.monotonic() - started
    assert response.status_code == 422, response.text
    assert "at most 64" in response.json()["detail"]
    assert elapsed < 0.5


async def test_normal_traffic_passes_the_edge(edge_url: str) -> None:
    """Keep-alive requests with many (allowed) headers, and a large allowed body."""
    headers = {f"x-extra-{i}": "v" * 100 for i in range(80)}
    big = breadcrumb(context={"blob": "x" * 250_000})
    async with httpx.AsyncClient(base_url=edge_url, timeout=10, headers=headers) as http:
        for _ in range(3):
            assert (await http.get("/health")).status_code == 200
        created = await http.post("/breadcrumbs", json=big)
        assert created.status_code == 201, created.text


async def test_an_sse_stream_outlives_every_edge_timeout(
    edge_url: str, client: httpx.AsyncClient, marker: str
) -> None:
    async with sse(edge_url, {"any_tags": marker}) as stream:
        await asyncio.sleep(EDGE.header_timeout_s + EDGE.body_timeout_s + 1)
        created = await client.post("/breadcrumbs", json=breadcrumb(tags=[marker]))
        _, event = await stream.next_event()
        assert event["breadcrumb_id"] == created.json()["id"]
