"""Hostile parameters on ``/events/stream`` get a 4xx before any stream opens."""

from __future__ import annotations

import json

import httpx
import pytest
from tests.stream.sse_client import sse


def _nested_filters(depth: int) -> str:
    return '{"context_match": [{"path": "$.a", "value": ' + "[" * depth + "]" * depth + "}]}"


BAD_STREAM_REQUESTS: dict[str, tuple[dict[str, str], dict[str, str | bytes]]] = {
    "400-digit Last-Event-ID": ({}, {"Last-Event-ID": "9" * 400}),
    "Last-Event-ID past 2**64-2": ({}, {"Last-Event-ID": str(2**64 - 1)}),
    "Last-Event-ID of non-ASCII digits": ({}, {"Last-Event-ID": "\u00b2".encode("latin-1")}),
    "400-digit since": ({"since": "9" * 400}, {}),
    "filters nested 2,000 levels": ({"filters": _nested_filters(2000)}, {}),
    "filters nested 100 levels": ({"filters": _nested_filters(100)}, {}),
    "filters over 16 KiB": ({"filters": json.dumps({"schema_name": "x" * 20_000})}, {}),
    "10,000 all_tags in filters": ({"filters": json.dumps({"all_tags": ["t"] * 1000})}, {}),
    "NUL in a query parameter": ({"schema_name": "a\x00b"}, {}),
    "paths neither true nor false": ({"paths": "maybe"}, {}),
}


@pytest.mark.parametrize("case", list(BAD_STREAM_REQUESTS))
async def test_hostile_stream_parameters_are_4xx(live_url: str, case: str) -> None:
    params, headers = BAD_STREAM_REQUESTS[case]
    async with httpx.AsyncClient(base_url=live_url, timeout=10) as http:
        response = await http.get("/events/stream", params=params, headers=headers)
    assert response.status_code in {400, 422}, response.text
    assert set(response.json()) >= {"error", "detail"}


async def test_ten_thousand_tags_are_refused(live_url: str) -> None:
    tags = ",".join(f"{i:x}" for i in range(10_000))  # commas unescaped: a 44 KB query
    async with httpx.AsyncClient(base_url=live_url, timeout=10) as http:
        response = await http.get(f"/events/stream?any_tags={tags}")
    assert response.status_code == 422, response.text
    assert "any_tags" in response.json()["detail"]


async def test_the_largest_sequence_opens_a_stream(live_url: str) -> None:
    """Replay starts after the given sequence, so 2**64-2 is the last one to resume after."""
    async with sse(live_url, headers={"Last-Event-ID": str(2**64 - 2)}) as stream:
        assert stream.response.status_code == 200
