"""One rendering for every error: ``{"error": code, "detail": message}``."""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

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
    problems = []
    for error in exc.errors():
        where = ".".join(str(part) for part in error.get("loc", ()))
        problems.append(f"{where}: {error.get('msg', 'invalid')}")
    return error_response(422, "invalid_input", "; ".join(problems)[:2000])


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


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(CairnError, _cairn_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(HTTPException, _http_error)
    app.add_exception_handler(Exception, _unexpected)
