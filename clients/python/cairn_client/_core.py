"""The request-building core both clients share, without I/O.

A route method builds a ``Call`` — method, path, query, body, headers, and how to read the
answer — from ``ROUTES`` and its arguments. ``route`` turns such a builder into a method
that hands the call to the client's ``_send``: ``Client`` returns the answer, ``AsyncClient``
an awaitable of it. So each route is written once, and typed for both clients.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Concatenate, Generic, ParamSpec, TypeVar, overload
from urllib.parse import quote

import httpx
from pydantic import BaseModel, TypeAdapter

from cairn_client._routes import ROUTES

if TYPE_CHECKING:
    from cairn_client._client import AsyncClient, Client

T = TypeVar("T")
P = ParamSpec("P")


@dataclass(frozen=True)
class Call(Generic[T]):
    """One request to send and how to read its answer."""

    method: str
    path: str
    parse: Callable[[httpx.Response], T]
    params: dict[str, str] = field(default_factory=dict)
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


def call(
    name: str,
    into: Any,
    *,
    path: Mapping[str, object] | None = None,
    params: Mapping[str, object] | None = None,
    body: Any = None,
    headers: Mapping[str, str | None] | None = None,
) -> Call[Any]:
    """The call of route ``name`` whose answer is read as ``into`` (a model, ``list[...]``,
    ``dict[...]``, or ``str`` for plain text)."""
    method, template = ROUTES[name]
    values = {key: quote(str(value), safe="") for key, value in (path or {}).items()}
    return Call(
        method=method,
        path=template.format(**values),
        parse=_reader(into),
        params=query_params(params or {}),
        body=body.model_dump(mode="json", exclude_unset=True)
        if isinstance(body, BaseModel)
        else body,
        headers={k: v for k, v in (headers or {}).items() if v is not None},
    )


def create_headers(idempotency_key: str | None) -> dict[str, str | None]:
    """Creates carry an ``Idempotency-Key`` (a fresh uuid4 unless given), so that a retry —
    ours or the caller's with the same key — never makes a second record."""
    return {"Idempotency-Key": idempotency_key or str(uuid.uuid4())}


def keyed_record(record: BaseModel | Mapping[str, Any]) -> dict[str, Any]:
    """A record of a batch as sent, with an ``idempotency_key`` (a fresh uuid4 unless
    given): as for single creates, a repeated batch then never makes a second record."""
    if isinstance(record, BaseModel):
        sent = record.model_dump(mode="json", exclude_unset=True)
    else:
        sent = dict(record)
    if sent.get("idempotency_key") is None:
        sent["idempotency_key"] = str(uuid.uuid4())
    return sent


def query_params(values: Mapping[str, object]) -> dict[str, str]:
    """Query parameters as the server reads them: booleans as ``true``/``false``, lists
    comma-separated, ``None`` left out."""
    params: dict[str, str] = {}
    for key, value in values.items():
        if value is None:
            continue
        if isinstance(value, bool):
            params[key] = "true" if value else "false"
        elif isinstance(value, list | tuple | set | frozenset):
            params[key] = ",".join(str(item) for item in value)
        else:
            params[key] = str(value)
    return params


@functools.cache
def _adapter(into: Any) -> TypeAdapter[Any]:
    return TypeAdapter(into)


def _reader(into: Any) -> Callable[[httpx.Response], Any]:
    if into is str:
        return lambda response: response.text
    adapter = _adapter(into)
    return lambda response: adapter.validate_json(response.content)


class route(Generic[P, T]):
    """A route method: its body builds the ``Call``; the client sends it."""

    def __init__(self, build: Callable[Concatenate[Any, P], Call[T]]) -> None:
        self._build = build
        self.__doc__ = build.__doc__
        self.__name__ = build.__name__

    @overload
    def __get__(self, client: None, owner: type) -> route[P, T]: ...
    @overload
    def __get__(self, client: Client, owner: type) -> Callable[P, T]: ...
    @overload
    def __get__(self, client: AsyncClient, owner: type) -> Callable[P, Awaitable[T]]: ...
    def __get__(self, client: Any, owner: type) -> Any:
        if client is None:
            return self
        build = self._build

        @functools.wraps(build)
        def send(*args: Any, **kwargs: Any) -> Any:
            return client._send(build(client, *args, **kwargs))

        return send
