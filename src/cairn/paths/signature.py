"""An error's signature: the line that names the error, with what changes from one run to
the next masked, so that "the same error" in another session or on another machine matches.

The line is the one a developer would quote: for a Python traceback its last line (the
exception and message; the first is the generic ``Traceback ...``), for a Rust panic the
``panicked at`` line with its message (cargo test also prints ``... FAILED``), else the first line
that reads as an error (``Error:``, ``error[E0308]``, ``FAILED``, ``panicked at``,
``npm ERR!``, an HTTP 5xx). Paths, hexadecimal ids, UUIDs and numbers are masked; what
stays is the error's kind and its words.
"""

from __future__ import annotations

import re

MAX_SIGNATURE = 200

_EXCEPTION_LINE = re.compile(
    r"^\s*(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Exit|Interrupt)\b"
)
_ERROR_LINE = re.compile(
    r"(?:\b[A-Z]?\w*Error\b\s*[:\[]|\berror(?:\[E\d+\])?:|\bFAILED\b|\bpanicked at\b|npm ERR!"
    r"|\b(?:HTTP/\d(?:\.\d)?\s+)?5\d\d\s+(?:Internal Server Error|Bad Gateway|Service Unavailable"
    r"|Gateway Timeout)|\bfatal:|\bException\b)",
)
_TRACEBACK = "Traceback (most recent call last)"

_UUID = re.compile(
    r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"
)
_HEX = re.compile(r"\b0x[0-9a-fA-F]+\b|\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,}\b")
_PATH = re.compile(
    r"(?:[A-Za-z]:\\|\.{0,2}/|~/)?(?:[\w.@-]+[/\\])+[\w.@-]+"  # a/b/c.py, /x/y, C:\x\y, ./z
)
_HTTP_VERSION = re.compile(r"\bHTTP/\d(?:\.\d)?")
_NUMBER = re.compile(r"(?<!HTTP )\b\d+(?:\.\d+)?\b")  # an HTTP status stays
_SPACES = re.compile(r"\s+")


def error_line(text: str) -> str | None:
    """The line that names the error in ``text``, or None when nothing reads as one."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if any(_TRACEBACK in line for line in lines):
        for line in reversed(lines):
            if _EXCEPTION_LINE.match(line):
                return line
    for at, line in enumerate(lines):  # Rust: the panic and its message, not "... FAILED"
        if "panicked at" in line:
            return " ".join(lines[at : at + 2])
    for line in lines:
        if _ERROR_LINE.search(line):
            return line
    return None


def normalise(line: str) -> str:
    """Mask what differs between occurrences of one error (ids, paths, numbers)."""
    masked = _HTTP_VERSION.sub("HTTP", line)
    masked = _UUID.sub("<id>", masked)
    masked = _HEX.sub("<id>", masked)
    masked = _PATH.sub("<path>", masked)
    masked = _NUMBER.sub("<n>", masked)
    return _SPACES.sub(" ", masked).strip()[:MAX_SIGNATURE]


def error_signature(text: str) -> str | None:
    """The signature of the first error ``text`` reports (None: it reports none)."""
    line = error_line(text)
    return None if line is None else normalise(line)
