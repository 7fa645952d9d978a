"""The HTTP server's edge: one uvicorn configuration for ``cairn serve``, ``cairn up`` and
the tests, with limits uvicorn's httptools protocol does not have.

uvicorn bounds neither the size nor the number of request headers (``h11_max_incomplete_
event_size`` applies to the h11 parser only, and httptools is the faster default), and times
out neither slow headers nor slow bodies: a client that opens a connection and trickles
bytes holds it for ever. ``EdgeProtocol`` is uvicorn's own protocol with the few checks
added where the parser reports progress; everything else (keep-alive, pipelining, flow
control, SSE) stays uvicorn's.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import uvicorn
from fastapi import FastAPI
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from cairn.config import Limits

log = logging.getLogger(__name__)
LINGER_S = 2.0  # how long a refused client may go on sending before the connection closes


class HeadersRefused(Exception):
    """Raised from a parser callback to stop parsing; the protocol then answers 431."""


class EdgeProtocol(HttpToolsProtocol):
    """httptools with bounded headers (431 over ``max_header_bytes`` or ``max_headers``) and
    deadlines: the request line and headers within ``header_timeout_s`` of the connection
    or of the request's first byte, the body within ``body_timeout_s`` of the headers. A
    response may stream for as long as it likes (SSE): no deadline runs while it does."""

    limits: Limits = Limits()  # set per server by ``edge_protocol``

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._deadline: asyncio.TimerHandle | None = None
        self._reading_headers = True
        self._header_bytes = 0  # received while the headers are incomplete (raw bytes)
        self._parsed_bytes = 0  # the request line and headers parsed so far
        self._header_count = 0
        self._refusal: str | None = None
        self._answered = False
        super().connection_made(transport)  # type: ignore[arg-type]
        self._arm(self.limits.header_timeout_s, "headers")

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._refusal is not None:
            return  # answered 431; what else comes is read and dropped until the close
        if self._reading_headers:
            self._header_bytes += len(data)
        super().data_received(data)
        # A header line still incomplete: httptools buffers it whole before any callback.
        if self._reading_headers and self._header_bytes > self.limits.max_header_bytes:
            self._refuse(f"request line and headers over {self.limits.max_header_bytes} bytes")

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._reading_headers = True
        self._parsed_bytes = self._header_count = 0
        if self._deadline is None:  # not the connection's first request
            self._arm(self.limits.header_timeout_s, "headers")

    def on_url(self, url: bytes) -> None:
        super().on_url(url)
        self._count(len(url))

    def on_header(self, name: bytes, value: bytes) -> None:
        super().on_header(name, value)
        self._header_count += 1
        if self._header_count > self.limits.max_headers:
            self._stop_parsing(f"more than {self.limits.max_headers} headers")
        self._count(len(name) + len(value) + 4)  # ": " and CRLF

    def on_headers_complete(self) -> None:
        self._reading_headers = False
        self._header_bytes = 0
        self._arm(self.limits.body_timeout_s, "body")
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        self._disarm()
        super().on_message_complete()

    def send_400_response(self, msg: str) -> None:
        """uvicorn's answer to a parser error, which a refused header also is."""
        if self._refusal is None:
            super().send_400_response(msg)
        else:
            self._refuse(self._refusal)

    def _count(self, parsed: int) -> None:
        self._parsed_bytes += parsed
        if (most := self.limits.max_header_bytes) < self._parsed_bytes:
            self._stop_parsing(f"request line and headers over {most} bytes")

    def _stop_parsing(self, reason: str) -> None:
        self._refusal = reason
        raise HeadersRefused(reason)

    def _refuse(self, reason: str) -> None:
        if self.transport.is_closing() or self._answered:
            return
        self._disarm()
        self._answered = True
        log.info("refused a request from %s: %s", self.client, reason)
        body = json.dumps({"error": "headers_too_large", "detail": reason}).encode()
        head = (
            b"HTTP/1.1 431 Request Header Fields Too Large\r\n"
            b"content-type: application/json\r\nconnection: close\r\n"
            b"content-length: " + str(len(body)).encode() + b"\r\n\r\n"
        )
        self.transport.write(head + body)
        # Closing with unread input would reset the connection and could discard the answer
        # before the client reads it: end our side, drop its bytes, close a little later.
        self._refusal = self._refusal or reason
        if self.transport.can_write_eof():
            self.transport.write_eof()
        self._deadline = self.loop.call_later(LINGER_S, self.transport.close)

    def _arm(self, timeout_s: float, part: str) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(timeout_s, self._too_slow, part)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _too_slow(self, part: str) -> None:
        self._deadline = None
        if not self.transport.is_closing():
            log.info("closed a connection from %s: its %s were too slow", self.client, part)
            self.transport.close()


def edge_protocol(limits: Limits) -> type[EdgeProtocol]:
    """``EdgeProtocol`` bound to ``limits`` (uvicorn builds protocols from a class)."""
    return type("EdgeProtocol", (EdgeProtocol,), {"limits": limits})


def server_config(
    app: FastAPI, limits: Limits, *, host: str, port: int, **options: Any
) -> uvicorn.Config:
    """The one uvicorn configuration: the edge protocol, the connection cap, no log config
    of its own (cairn.logging configures the root logger)."""
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        http=edge_protocol(limits),
        limit_concurrency=limits.max_connections or None,
        log_config=None,
        **options,
    )
