"""The backend of ``cairn mcp`` (stdio): a running Cairn over HTTP (CAIRN_URL, CAIRN_TOKEN).

A small httpx adapter of the calls the tools make; it gives way to the Python client
(``cairn_client``) once that is part of the build.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx

from cairn.errors import CairnError
from cairn.mcp.backend import (
    ContextQuery,
    PathList,
    Record,
    Records,
    Remembered,
    SearchMode,
    SearchResults,
    session_tag,
)
from cairn.paths.schemas import PathDetailView, PathStatus

TIMEOUT_S = 30.0  # an on-demand context may embed and rank for a while
NOT_YET = "get_context is not available on this Cairn server yet (no POST /contexts/query)"


class RemoteError(CairnError):
    """An error answer of the Cairn server, with its status and ``{error, detail}``."""

    def __init__(self, status: int, code: str, detail: str) -> None:
        super().__init__(detail)
        self.status_code = status
        self.code = code


class HttpBackend:
    def __init__(self, http: httpx.AsyncClient) -> None:
        self.http = http

    @classmethod
    @asynccontextmanager
    async def connect(cls, url: str, token: str | None) -> AsyncIterator[HttpBackend]:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        async with httpx.AsyncClient(base_url=url, headers=headers, timeout=TIMEOUT_S) as http:
            yield cls(http)

    async def remember(
        self,
        *,
        schema_name: str | None,
        title: str,
        context: dict[str, Any],
        tags: list[str],
        session: str | None,
    ) -> Remembered:
        if session is not None:
            tags = [*tags, session_tag(session)]
        body = {"schema_name": schema_name, "title": title, "context": context, "tags": tags}
        created = await self._json("POST", "/breadcrumbs", json=body)
        return Remembered.model_validate(created)

    async def search(
        self, text: str, *, mode: SearchMode, schema_name: str | None, limit: int
    ) -> SearchResults:
        params: dict[str, Any] = {"q": text, "nn": limit, "mode": mode, "include_context": True}
        if schema_name is not None:
            params["schema_name"] = schema_name
        try:
            hits = await self._json("GET", "/breadcrumbs/search", params=params)
        except RemoteError as error:
            # A server without hybrid search refuses the mode (422): search by meaning.
            if mode != "hybrid" or error.status_code != 422 or "mode" not in error.detail:
                raise
            params["mode"] = mode = "vector"
            hits = await self._json("GET", "/breadcrumbs/search", params=params)
        return SearchResults(mode=mode, hits=hits)

    async def get_context(self, request: ContextQuery) -> dict[str, Any]:
        try:
            answer: dict[str, Any] = await self._json(
                "POST", "/contexts/query", json=request.body()
            )
        except RemoteError as error:
            if error.status_code == 405:  # a server without it routes to GET /contexts/{id}
                raise RemoteError(503, "unavailable", NOT_YET) from error
            raise
        return answer

    async def get_record(self, record_id: uuid.UUID) -> Record:
        record: Record = await self._json("GET", f"/breadcrumbs/{record_id}")
        return record

    async def recent(self, session: str, *, limit: int) -> Records:
        params = {"tag": session_tag(session), "limit": limit, "include_context": True}
        return Records(records=await self._json("GET", "/breadcrumbs", params=params))

    async def path_start(self, session: str, summary: str, signature: str | None) -> PathDetailView:
        body = {"session": session, "summary": summary, "signature": signature}
        return PathDetailView.model_validate(await self._json("POST", "/paths", json=body))

    async def path_resolve(
        self, path_id: uuid.UUID, what_fixed_it: str | None, root_cause: str | None
    ) -> PathDetailView:
        body = {"what_fixed_it": what_fixed_it, "root_cause": root_cause}
        answer = await self._json("POST", f"/paths/{path_id}/resolve", json=body)
        return PathDetailView.model_validate(answer)

    async def path_show(self, path_id: uuid.UUID) -> PathDetailView:
        return PathDetailView.model_validate(await self._json("GET", f"/paths/{path_id}"))

    async def path_active(self, session: str) -> PathDetailView | None:
        answer = await self._json("GET", "/paths/active", params={"session": session})
        return None if answer is None else PathDetailView.model_validate(answer)

    async def path_list(
        self, status: PathStatus | None, session: str | None, limit: int
    ) -> PathList:
        given = {"status": status, "session": session, "limit": limit}
        params = {key: value for key, value in given.items() if value is not None}
        return PathList(paths=await self._json("GET", "/paths", params=params))

    async def _json(self, method: str, path: str, **kwargs: Any) -> Any:
        try:
            response = await self.http.request(method, path, **kwargs)
        except httpx.HTTPError as error:
            detail = f"Cairn at {self.http.base_url} is unreachable ({type(error).__name__})"
            raise RemoteError(503, "unavailable", detail) from error
        if response.is_success:
            return response.json()
        raise _remote_error(response)


def _remote_error(response: httpx.Response) -> RemoteError:
    """The server's ``{error, detail}``, or the status itself when the body is not Cairn's."""
    try:
        body = response.json()
        return RemoteError(response.status_code, str(body["error"]), str(body["detail"]))
    except (ValueError, KeyError, TypeError):
        detail = f"Cairn answered {response.status_code} {response.reason_phrase}"
        return RemoteError(response.status_code, "http_error", detail)
