"""The process's log set-up, as the CLI's commands make it."""

from __future__ import annotations

import io
import json
import logging

import pytest

from cairn.logging import configure


def test_lines_go_to_the_stderr_of_the_moment(monkeypatch: pytest.MonkeyPatch) -> None:
    """A stderr swapped and closed after set-up (a command run in process) is not written to."""
    first = io.StringIO()
    monkeypatch.setattr("sys.stderr", first)
    configure("INFO", as_json=True)
    first.close()
    now = io.StringIO()
    monkeypatch.setattr("sys.stderr", now)
    logging.getLogger("cairn.test").info("harbour lights")
    (line,) = now.getvalue().splitlines()
    assert json.loads(line)["message"] == "harbour lights"
    assert json.loads(line)["logger"] == "cairn.test"
