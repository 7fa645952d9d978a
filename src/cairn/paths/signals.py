"""What one record says about a debugging session, by rule (the seed asks an LLM; Cairn's
default is deterministic).

- **error**: ``status`` error/failed, a non-zero ``exit_code``, an HTTP status of 500 or
  more, a test run with failures, or text that reports an error (a traceback, ``Error:``,
  ``FAILED``, ``panicked at``, ``npm ERR!``) from a command not known to have worked: the
  output of one that exited 0 is data (a log it read, lines it grepped);
- **success**: a test run with passes and no failures (counts on its own), or ``exit_code``
  0 / ``status`` ok of a command (counts only for a command that failed earlier in the
  path: :mod:`.machine` decides);
- **revert**: a command that undoes work (``git revert``, ``git restore``, ``git checkout --``);
- **hypothesis** / **discovery**: a record tagged so (``hypothesis``, ``debug:hypothesis``,
  ...) or a note that starts with the word;
- **attempt**: a tool call or an edit (a record naming a command, tool or file) that is
  none of the above.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from cairn.paths.signature import error_signature

ERROR_STATUSES = frozenset({"error", "failed", "failure", "errored", "crashed"})
OK_STATUSES = frozenset({"ok", "success", "succeeded", "passed", "done", "completed"})
MAX_TEXT = 20_000  # characters of a record read for signals: error lines come early

_TESTS_FAILED = re.compile(r"\b[1-9]\d* (?:failed|failing|errors?)\b|\btest result: FAILED\b")
_TESTS_PASSED = re.compile(r"\b[1-9]\d* (?:passed|passing)\b|\btest result: ok\b")
_REVERT = re.compile(r"\bgit (?:revert|restore|checkout --|reset --hard)\b|\bundo\b", re.I)
_FILE = re.compile(r"(?:[\w.@-]+/)*[\w@-]+\.(?:py|ts|tsx|js|jsx|rs|go|java|rb|toml|json|ya?ml)\b")


class Kind(StrEnum):
    ERROR = "error"
    SUCCESS = "success"
    REVERT = "revert"
    HYPOTHESIS = "hypothesis"
    DISCOVERY = "discovery"
    ATTEMPT = "attempt"
    NONE = "none"


@dataclass(frozen=True, slots=True)
class Signal:
    """``command``: what ran (a command line or tool name), so that a later success of the
    same command can be told from an unrelated one. ``tests_passed``: a green test run,
    which counts as a success whatever ran it."""

    kind: Kind
    evidence: str = ""
    signature: str | None = None
    command: str | None = None
    tests_passed: bool = False
    files: tuple[str, ...] = ()


def classify(record: Mapping[str, Any]) -> Signal:
    """The signal of a record (a breadcrumb: ``title``, ``tags``, ``context``)."""
    context = record.get("context") or {}
    context = context if isinstance(context, Mapping) else {}
    text = _text(record, context)
    command = _command(context)
    files = tuple(dict.fromkeys(_FILE.findall(text)))[:10]
    marked = _marked(record, text)
    if marked is not None:
        return Signal(marked, f"marked {marked.value}", command=command, files=files)
    error = _error_evidence(context, text)
    if error is not None:
        signature = error_signature(text) or f"{command or 'command'} {error}"
        return Signal(Kind.ERROR, error, signature, command, files=files)
    if command is not None and _REVERT.search(command):
        return Signal(Kind.REVERT, "reverting command", command=command, files=files)
    success = _success_evidence(context, text)
    if success is not None:
        passed = bool(_TESTS_PASSED.search(text))
        return Signal(Kind.SUCCESS, success, None, command, passed, files)
    if command is not None or files:
        return Signal(Kind.ATTEMPT, "a command or an edit", command=command, files=files)
    return Signal(Kind.NONE)


def _text(record: Mapping[str, Any], context: Mapping[str, Any]) -> str:
    parts = [str(record.get("title") or "")]
    for key in ("content", "output", "stdout", "stderr", "error", "message", "text", "result"):
        value = context.get(key)
        if value is not None:
            parts.append(value if isinstance(value, str) else json.dumps(value, default=str))
    return "\n".join(parts)[:MAX_TEXT]


def _command(context: Mapping[str, Any]) -> str | None:
    for key in ("command", "cmd", "tool", "tool_name", "name"):
        value = context.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()[:500]
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            return " ".join(value)[:500]
    return None


def _marked(record: Mapping[str, Any], text: str) -> Kind | None:
    tags = {str(tag).lower() for tag in record.get("tags") or ()}
    head = text.lstrip().lower()
    for kind in (Kind.HYPOTHESIS, Kind.DISCOVERY):
        if tags & {kind.value, f"debug:{kind.value}"} or head.startswith(f"{kind.value}:"):
            return kind
    return None


def _error_evidence(context: Mapping[str, Any], text: str) -> str | None:
    status = str(context.get("status") or "").lower()
    if status in ERROR_STATUSES:
        return f"status {status}"
    code = context.get("exit_code", context.get("returncode"))
    if isinstance(code, int) and not isinstance(code, bool) and code != 0:
        return f"exit code {code}"
    http = context.get("status_code", context.get("http_status"))
    if isinstance(http, int) and http >= 500:
        return f"HTTP {http}"
    if _TESTS_FAILED.search(text):
        return "failing tests"
    if code == 0 and not isinstance(code, bool):
        return None  # it worked: error words in its output are data (a log read, a grep)
    if error_signature(text) is not None:
        return "error output"
    return None


def _success_evidence(context: Mapping[str, Any], text: str) -> str | None:
    if _TESTS_PASSED.search(text):
        return "tests passed"
    code = context.get("exit_code", context.get("returncode"))
    if code == 0 and not isinstance(code, bool):
        return "exit code 0"
    status = str(context.get("status") or "").lower()
    if status in OK_STATUSES:
        return f"status {status}"
    return None
