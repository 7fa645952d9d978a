"""Process-wide logging set-up: one line per event, timestamps in UTC."""

from __future__ import annotations

import json
import logging
import sys
import time


class _JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "ts": self.formatTime(record),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry)


class StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to the ``sys.stderr`` of the moment, as ``logging.lastResort`` does.

    A handler bound to the stream of the moment it was made keeps writing there after the
    stream is swapped and closed: a command run in process (a test's runner, an embedding
    program) would leave every later log line failing with "--- Logging error ---"."""

    @property
    def stream(self) -> object:
        return sys.stderr

    @stream.setter
    def stream(self, _: object) -> None:
        """``StreamHandler.__init__`` assigns one; the property ignores it."""


def configure(level: str = "INFO", *, as_json: bool = False) -> None:
    handler = StderrHandler()
    if as_json:
        handler.setFormatter(_JsonFormatter())
    else:
        formatter = logging.Formatter("%(asctime)s %(levelname)-7s %(name)s: %(message)s")
        formatter.converter = time.gmtime
        handler.setFormatter(formatter)
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    for noisy in ("sqlalchemy.engine", "nats", "uvicorn.access", "httpx", "httpcore"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
