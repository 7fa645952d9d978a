"""The frames of ``/events/stream`` as the client reads them: SSE lines to frames, frames to
events (``Cursor``: the last sequence yielded, and the path frames held for their id)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from cairn_client.models import Event, PathFrame

RECONNECT: Literal["reconnect"] = "reconnect"
PATH_PREFIX = "path_"


@dataclass(frozen=True)
class Frame:
    id: str | None
    data: str
    event: str | None = None


class FrameDecoder:
    """SSE lines to frames: ``field: value`` lines, a blank line ends a frame, ``:`` comments."""

    def __init__(self) -> None:
        self._fields: dict[str, str] = {}
        self._data: list[str] = []

    def feed(self, line: str) -> Frame | None:
        if not line:
            frame = Frame(self._fields.get("id"), "\n".join(self._data), self._fields.get("event"))
            self._fields, self._data = {}, []
            return frame if frame.data else None
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            self._data.append(value)
        elif name in {"id", "event"}:
            self._fields[name] = value
        return None


class Cursor:
    """The last sequence yielded: where a reconnect resumes, and the bar a frame must pass."""

    def __init__(self, last: int | None = None) -> None:
        self.last = last
        self.held: list[dict[str, Any]] = []  # path frames waiting for their event's id

    def headers(self) -> dict[str, str]:
        return {} if self.last is None else {"Last-Event-ID": str(self.last)}

    def read(self, frame: Frame) -> list[Event] | Literal["reconnect"]:
        """The events a frame completes (none, or held path frames and this one's)."""
        try:
            data = json.loads(frame.data)
        except ValueError:
            return []
        if not isinstance(data, dict):
            return []
        if frame.id is None or not frame.id.strip().isdigit():  # pings, and the reconnect ask
            if str(data.get("type")).startswith(PATH_PREFIX):
                self.held.append(data)
                return []
            asks = data.get("type") == RECONNECT or frame.event == RECONNECT
            return RECONNECT if asks else []
        sequence = int(frame.id)
        held, self.held = self.held, []
        if self.last is not None and sequence <= self.last:
            return []  # already yielded: a replay overlapping what the feed sent
        self.last = sequence
        return [_event(item, sequence) for item in (*held, data)]


def _event(data: dict[str, Any], sequence: int) -> Event:
    if str(data.get("type")).startswith(PATH_PREFIX):
        path = PathFrame.model_validate({**data, "seq": sequence})
        return Event(seq=sequence, type=path.type, path=path)
    return Event.model_validate({**data, "seq": sequence})
