"""Hypothesis throws arbitrary query strings, headers and path segments — lone surrogates,
NUL, control bytes, 400-digit and non-finite numbers — at every GET route, through the ASGI
interface (below any HTTP parser, which would refuse some of them first): never a 5xx.

Schemathesis (tests/test_fuzz_api.py) covers the declared parameters over real HTTP; this
covers what no schema describes, and ``/events/stream``, whose valid requests never end."""

from __future__ import annotations

import asyncio
import re
import uuid
from typing import Any
from urllib.parse import quote

from fastapi import FastAPI
from hypothesis import HealthCheck, given, settings, strategies as st

# Values from the reports and their neighbours, mixed into arbitrary text.
HOSTILE = [
    "\x00", "a\x00b", "\ud800", "x\udfffy", "9" * 400, str(2**64), "-1", "1e308", "inf",
    "-nan", ",".join(["1e308"] * 384), "[" * 2000, ",".join(map(str, range(500))), "",
    '{"any_tags": ["a"], "context_match": [{"path": "$", "value": ' + "[" * 300 + "}]}",
]  # fmt: skip
TEXT = st.one_of(
    st.sampled_from(HOSTILE),
    st.text(st.characters(exclude_categories=()), max_size=40),  # surrogates included
)
HEADER_VALUE = st.one_of(TEXT.map(lambda text: text.encode("utf-8", "surrogatepass")), st.binary())


def _get_routes(app: FastAPI) -> list[tuple[str, list[str], list[str]]]:
    """(path template, query parameter names, header names) of every GET operation."""
    routes = []
    for path, operations in app.openapi()["paths"].items():
        if "get" in operations:
            declared = operations["get"].get("parameters", [])
            query = [p["name"] for p in declared if p["in"] == "query"]
            headers = [p["name"].lower() for p in declared if p["in"] == "header"]
            routes.append((path, query, [*headers, "authorization", "content-type"]))
    return routes


@st.composite
def requests(draw: Any, routes: list[tuple[str, list[str], list[str]]]) -> dict[str, Any]:
    template, query_names, header_names = draw(st.sampled_from(routes))
    segment = st.one_of(st.just(str(uuid.uuid4())), st.just("agent-1"), TEXT)
    path = re.sub(r"\{[a-z_]+\}", lambda _: quote(_raw(draw(segment)), safe=""), template)
    # Mostly the declared names, so that the values reach each route's own parsing.
    names = st.sampled_from(query_names or ["x"]) if query_names else TEXT
    query = draw(st.lists(st.tuples(st.one_of(names, names, names, TEXT), TEXT), max_size=4))
    headers = draw(st.lists(st.tuples(st.sampled_from(header_names), HEADER_VALUE), max_size=2))
    return {
        "raw_path": path.encode(),
        "query_string": "&".join(f"{quote(_raw(n))}={quote(_raw(v))}" for n, v in query).encode(),
        "headers": [(name.encode(), value) for name, value in headers],
    }


def _raw(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


async def _status(app: FastAPI, request: dict[str, Any]) -> int:
    """The status the app answers with; the client leaves right after it (streams end)."""
    from urllib.parse import unquote

    path = unquote(request["raw_path"].decode())  # as uvicorn decodes it
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET",
        "scheme": "http", "path": path, "root_path": "", "client": ("127.0.0.1", 1),
        "server": ("cairn.test", 80), **request,
    }  # fmt: skip
    started: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    delivered = False

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await asyncio.shield(started)
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start" and not started.done():
            started.set_result(message["status"])

    call = asyncio.create_task(app(scope, receive, send))
    try:
        return await asyncio.wait_for(asyncio.shield(started), 10)
    finally:
        await asyncio.wait_for(call, 10)


async def test_no_query_string_or_header_gets_a_server_error(app: FastAPI) -> None:
    loop = asyncio.get_running_loop()
    routes = _get_routes(app)
    assert any(path == "/events/stream" for path, _, _ in routes)

    @settings(max_examples=600, deadline=None, suppress_health_check=list(HealthCheck))
    @given(requests(routes))
    def no_server_error(request: dict[str, Any]) -> None:
        status = asyncio.run_coroutine_threadsafe(_status(app, request), loop).result(30)
        assert status < 500, request

    # Hypothesis drives from a thread; each request runs on the app's own event loop.
    await asyncio.to_thread(no_server_error)
