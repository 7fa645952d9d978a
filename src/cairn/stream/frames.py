"""The frames of ``/events/stream``, encoded by sse-starlette's ``ServerSentEvent``.

Each frame is encoded once: an event's by the feed, shared by every connection it goes to
(``EventSourceResponse`` sends bytes as they are), the fixed ones at import. Events carry
``id: <stream sequence>`` and ``data: <json>`` and no ``event:`` line, so a plain
``EventSource.onmessage`` receives every type (it is inside the JSON).

Lines end with ``\\n`` rather than sse-starlette's default ``\\r\\n``: the bytes Cairn has
always sent, which RCRT-era clients and ``benchmarks/events.py`` split on ``\\n\\n``.
"""

from __future__ import annotations

from sse_starlette import ServerSentEvent

SEPARATOR = "\n"


def frame_bytes(seq: int, data: bytes) -> bytes:
    """One event's frame. The outbox's JSON holds no raw line break; were one there,
    ``ServerSentEvent`` splits it over ``data:`` lines, which a client joins back."""
    return ServerSentEvent(data.decode("utf-8", "replace"), id=str(seq), sep=SEPARATOR).encode()


# A comment EventSource ignores: the connection is on the feed, so every event committed
# from now on reaches it (the tests and the benchmark wait for it).
CONNECTED = ServerSentEvent(comment="connected", sep=SEPARATOR).encode()
# Data frames, not sse-starlette's comment pings: RCRT's clients see only data frames.
PING_EVENT = ServerSentEvent('{"type":"ping"}', sep=SEPARATOR)
PING = PING_EVENT.encode()
RECONNECT = ServerSentEvent('{"type":"reconnect"}', sep=SEPARATOR).encode()


def ping_event() -> ServerSentEvent:
    """``EventSourceResponse``'s ``ping_message_factory``."""
    return PING_EVENT
