"""``/worker/dead`` refuses bad input with a 4xx and changes nothing."""

from __future__ import annotations

import uuid

import httpx
import pytest


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("GET", "/worker/dead?limit=0", 422),
        ("GET", "/worker/dead?limit=1001", 422),
        ("GET", "/worker/dead?limit=abc", 422),
        ("DELETE", "/worker/dead/not-a-uuid", 422),
        ("DELETE", f"/worker/dead/{uuid.uuid4()}", 404),
    ],
)
async def test_bad_requests_get_a_clear_4xx(
    client: httpx.AsyncClient, method: str, path: str, status: int
) -> None:
    response = await client.request(method, path)
    assert response.status_code == status
    assert set(response.json()) >= {"error", "detail"}
