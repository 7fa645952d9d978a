"""RCRT's event framing, per connection (``?compat=rcrt``) or for the whole server
(``CAIRN_COMPAT__SSE=rcrt``).

RCRT's stream sent creates as ``breadcrumb.updated`` and never sent deletes, and RCRT's agent
and tool runners act only on ``updated``: against Cairn's framing they miss every new record.
Here a ``created`` event goes out typed ``updated`` and a ``deleted`` one is not sent. Only
these connections pay for re-reading the frame; everyone else shares the feed's frame.
"""

from __future__ import annotations

import json

from cairn.stream.frames import frame_bytes
from cairn.stream.paths import last_frame
from cairn.stream.sse import SseConnection

CREATED, UPDATED, DELETED = "breadcrumb.created", "breadcrumb.updated", "breadcrumb.deleted"


def rcrt_frame(seq: int, frame: bytes) -> bytes | None:
    """``frame`` as RCRT would have sent it, or None when RCRT sent nothing. A debug-path
    frame sent before the record's (``stream.paths``) goes out as it is."""
    if CREATED.encode() not in frame and DELETED.encode() not in frame:
        return frame  # neither type appears anywhere in it: nothing to change
    path, record = last_frame(frame)
    data = record.split(b"data: ", 1)[1].rstrip(b"\n")
    event = json.loads(data)
    kind = event.get("type") if isinstance(event, dict) else None
    if kind == DELETED:
        return None  # (a delete makes no path frame)
    if kind != CREATED:
        return frame
    event["type"] = UPDATED
    return path + frame_bytes(seq, json.dumps(event, separators=(",", ":")).encode())


class RcrtSseConnection(SseConnection):
    def deliver(self, seq: int, frame: bytes) -> None:
        framed = rcrt_frame(seq, frame)
        if framed is not None:
            super().deliver(seq, framed)

    def _frame(self, seq: int, data: bytes) -> bytes | None:
        frame = super()._frame(seq, data)
        return None if frame is None else rcrt_frame(seq, frame)
