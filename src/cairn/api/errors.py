"""One rendering for every error: ``{"error": code, "detail": message}``.

``CairnError``, validation and HTTP errors are rendered by FastAPI's handlers. Whatever
escapes them reaches :class:`ErrorBoundary`: a database outage answers 503 with one warning
line, anything else 500 with one traceback.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from cairn.api.middleware import UNAVAILABLE
from cairn.db.errors import is_retryable_conflict, is_unavailable
from cairn.errors import CairnError

log = logging.getLogger(__name__)

_HTTP_CODES = {
    400: "bad_request",
    404: "not_found",
    405: "method_not_allowed",
    413: "payload_too_large",
    415: "unsupported_media_type",
}


def error_response(status: int, code: str, detail: str, **extra: object) -> JSONResponse:
    return JSONResponse({"error": code, "detail": detail, **extra}, status_code=status)


async def _cairn_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, CairnError)
    response = error_response(exc.status_code, exc.code, exc.detail, **exc.extra)
    response.headers.update(exc.headers)
    return response


async def _validation_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    return error_response(422, "invalid_input", problems_text(exc.errors()))


def problems_text(errors: Sequence[Any]) -> str:
    """Pydantic's validation errors as one ``where: what; ...`` line."""
    problems = []
    for error in errors:
        where = ".".join(str(part) for part in error.get("loc", ()))
        problems.append(f"{where}: {error.get('msg', 'invalid')}")
    return "; ".join(problems)[:2000]


async def _http_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HTTPException)
    code = _HTTP_CODES.get(exc.status_code, "http_error")
    response = error_response(exc.status_code, code, str(exc.detail))
    for name, value in (exc.headers or {}).items():
        response.headers[name] = value
    return response


async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    log.exception("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    return error_response(500, "internal_error", "an unexpected error occurred")


# PostgreSQL restarts in well under a second; a pool reconnects on the next request.
DATABASE_RETRY_AFTER_S = 3
DATABASE_UNAVAILABLE = "the database is unreachable; retry shortly"


class ErrorBoundary:
    """The innermost middleware: the last stop of an error no handler rendered.

    Starlette renders such errors in its outermost middleware and then re-raises them, so
    the server logs a second traceback, and inside a streaming response they crash the
    connection. Here a database outage (``is_unavailable``) answers 503 with ``Retry-After``
    and logs one warning line, or, once a stream has begun, ends the stream; any other
    error answers 500 and logs its traceback once.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        response = _ResponseProgress(send)
        try:
            await self.app(scope, receive, response.send)
        except Exception as exc:
            where = f"{scope['method']} {scope['path']}"
            if is_unavailable(exc):
                log.warning("%s: the database is unreachable (%s)", where, _summary(exc))
                UNAVAILABLE.labels("database").inc()
                await response.finish(_database_unavailable())
            elif is_retryable_conflict(exc) and not response.started:
                log.warning("%s: aborted for a concurrent change (%s)", where, _summary(exc))
                UNAVAILABLE.labels("conflict").inc()
                await response.finish(_conflict())
            elif response.started:
                raise  # a bug mid-response: nothing left to render, the server logs it
            else:
                log.error("unhandled error on %s", where, exc_info=exc)
                await response.finish(_internal_error())


class _ResponseProgress:
    """How far the response got, so an error can still be answered or the body ended."""

    def __init__(self, send: Send) -> None:
        self._send = send
        self.started = False
        self.ended = False

    async def send(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.started = True
        elif message["type"] == "http.response.body" and not message.get("more_body", False):
            self.ended = True
        await self._send(message)

    async def finish(self, error: JSONResponse) -> None:
        if not self.started:
            await error({"type": "http"}, _no_receive, self._send)
        elif not self.ended:  # a stream in progress: end it as a normal end of stream
            await self._send({"type": "http.response.body", "body": b"", "more_body": False})


async def _no_receive() -> Message:  # pragma: no cover - a JSONResponse never reads
    return {"type": "http.disconnect"}


def _database_unavailable() -> JSONResponse:
    response = error_response(503, "unavailable", DATABASE_UNAVAILABLE)
    response.headers["Retry-After"] = str(DATABASE_RETRY_AFTER_S)
    return response


def _conflict() -> JSONResponse:
    detail = "a concurrent change made the database abort this request; nothing changed; retry"
    response = error_response(503, "unavailable", detail)
    response.headers["Retry-After"] = "1"
    return response


def _internal_error() -> JSONResponse:
    return error_response(500, "internal_error", "an unexpected error occurred")


def _summary(exc: BaseException) -> str:
    """The error's type and first line: the operator's clue, without the traceback."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:200]}" if text else type(exc).__name__


def install_error_handlers(app: FastAPI) -> None:
    """The handlers, and the boundary behind them (added first, so innermost: the request
    metrics outside it see the status it answers)."""
    app.add_exception_handler(CairnError, _cairn_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(HTTPException, _http_error)
    app.add_exception_handler(Exception, _unexpected)
    app.add_middleware(ErrorBoundary)
