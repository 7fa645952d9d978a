"""Client text PostgreSQL can store, checked once for every request before any route runs.

PostgreSQL text and jsonb hold neither NUL characters nor lone surrogates (which JSON can
escape as ``"\\ud800"`` and no UTF-8 encoder accepts); either would surface as a database
error. One application-wide dependency walks every string a request carries (path, query,
headers, and each string and key of a JSON body) and answers 422 naming where it is, so
no route has to remember the check.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from fastapi import Request

from cairn.errors import InvalidInput

# Deeper than any document a route accepts (contexts nest at most 64 levels inside the
# body); a bound keeps every later walk and jsonb conversion shallow.
MAX_BODY_DEPTH = 100


def text_problem(value: str) -> str | None:
    """Why PostgreSQL could not store ``value`` as text, or None when it can."""
    if "\x00" in value:
        return "NUL characters are not allowed"
    if not value.isascii():
        try:
            value.encode()
        except UnicodeEncodeError:
            return "text that is not valid Unicode (a lone surrogate)"
    return None


async def refuse_unstorable_text(request: Request) -> None:
    """The application-wide dependency: 422 for the first string no column could hold."""
    for where, value in _request_strings(request):
        if problem := text_problem(value):
            raise InvalidInput(f"{where[:120]}: {problem}")
    for where, value in _json_strings(await _parsed_body(request)):
        if problem := text_problem(value):
            raise InvalidInput(f"{where[:120]}: {problem}")


def _request_strings(request: Request) -> Iterator[tuple[str, str]]:
    yield "path", request.url.path
    for name, value in request.query_params.multi_items():
        yield f"query.{name}", name
        yield f"query.{name}", value
    for name, value in request.headers.items():
        yield f"header.{name}", value


async def _parsed_body(request: Request) -> Any:
    """The body as JSON (parsed once: FastAPI has already read it for routes that take one,
    and Starlette caches both), or None when it is not JSON: the route answers for that."""
    if not await request.body():
        return None
    try:
        return await request.json()
    except (ValueError, RecursionError):  # FastAPI answers 400 where the route reads it
        return None


def _json_strings(document: Any) -> Iterator[tuple[str, str]]:
    """Every string and key of a parsed JSON document with its path, without recursion (a
    body may nest as deep as the JSON parser allows)."""
    pending: list[tuple[str, Any, int]] = [("body", document, 0)]
    while pending:
        where, node, depth = pending.pop()
        if depth > MAX_BODY_DEPTH:
            raise InvalidInput(f"body: nested deeper than {MAX_BODY_DEPTH} levels")
        if isinstance(node, str):
            yield where, node
        elif isinstance(node, dict):
            for key, item in node.items():
                inner = f"{where}.{_shown(key)}"
                yield inner, key
                pending.append((inner, item, depth + 1))
        elif isinstance(node, list):
            for index, item in enumerate(node):
                pending.append((f"{where}[{index}]", item, depth + 1))


def _shown(key: str) -> str:
    """A key as an error message can carry it (a lone surrogate would break the response)."""
    return key[:40].encode("utf-8", "backslashreplace").decode()
