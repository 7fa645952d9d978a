"""An error's signature: the line that names the error, with what changes from one run to
the next masked, so that "the same error" in another session or on another machine matches.

The line is the one a developer would quote: for a Python traceback its last line (the
exception and message; the first is the generic ``Traceback ...``), for a Rust panic the
``panicked at`` line with its message (cargo test also prints ``... FAILED``), for a Java
stack trace its deepest ``Caused by:`` (else its exception line), else the first line that
reads as an error: ``Error:``, ``error[E0308]``, ``error TS2339:``, ``ERROR:`` (pip,
BuildKit, PostgreSQL), ``FAILED``, ``panicked at``, ``panic:``, ``--- FAIL:``, a Go
``file.go:12:5: message``, an eslint ``12:5  error  message  rule``, ``npm ERR!``, a linker's
``undefined reference``, a crash (``Segmentation fault``), an HTTP 5xx. Build tools wrap
the real error in a line of their own (``> Task :app:test FAILED``, ``collect2: error: ld
returned 1 exit status``, ``error: subprocess-exited-with-error``, ``make: *** ... Error 1``,
"this and all later migrations canceled"): such a wrapper line is the signature only when
nothing more specific is there. Paths, hexadecimal ids, UUIDs and numbers are masked; what
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
    r"|Gateway Timeout)|\bfatal:|\bException\b"
    r"|\berror [A-Z]{2,}\d+:|^TS\d+: "  # tsc's error TS2339: (ts-loader: TS2339:), C#'s CS0103
    r"|^Error response from daemon:"  # docker
    r"|\bERROR\b(?: \d+ \(\w+\)(?: at line \d+)?)?:"  # pip, BuildKit, PostgreSQL; MySQL
    r"|^\s*\d+:\d+\s+error\s"  # eslint's   12:5  error  message  rule
    r"|^panic: |^--- FAIL: |^\s*[\w./-]+\.go:\d+(?::\d+)?: "  # Go: panic, failed test, file:line
    r"|\bundefined reference to\b|\bcurl: \(\d+\)"
    r"|\b(?:Segmentation fault|Bus error|Illegal instruction|Floating point exception)\b"
    r"|^\s*● (?!Console$)\S)",  # jest: a failed test's header
)
_WRAPPER_LINE = re.compile(
    r"(?:^> Task :\S+ FAILED|\bExecution failed for task\b|^FAILURE: Build failed"
    r"|\bld returned \d+ exit status|\bsubprocess-exited-with-error\b"
    r"|\bmetadata-generation-failed\b|\bfailed-wheel-build\b|\blegacy-install-failure\b"
    r"|\ball later migrations canceled\b|^make(?:\[\d+\])?: \*\*\*"
    r"|\bERROR: failed to solve\b|\bdid not complete successfully\b"
    r"|npm ERR! (?:code ELIFECYCLE|errno|Exit status|Failed at|A complete log|[\w.@/-]+ \S+: `)"
    r"|\berror: could not compile\b|\berror: test failed\b|\bProcess completed with exit code\b"
    r"|^\[ERROR\] Failed to execute goal\b)",
)
_JAVA_EXCEPTION = re.compile(
    r"^(?:Exception in thread \"[^\"]*\" |Caused by: )?"
    r"(?:[a-z_]\w*\.)+[A-Z]\w*(?:Exception|Error)\b"
)
_JAVA_FRAME = re.compile(r"^at [\w.$<>]+\(")
_CRASH = re.compile(
    r"\b(?:Segmentation fault|Bus error|Illegal instruction|Floating point exception)\b"
)
_BUILDKIT_PREFIX = re.compile(r"^#\d+ (?:\d+\.\d+ )?")  # docker build's step and seconds
_TRACEBACK = "Traceback (most recent call last)"

_UUID = re.compile(
    r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"
)
_HEX = re.compile(r"\b0x[0-9a-fA-F]+\b|\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,}\b")
_PATH = re.compile(
    r"(?:[A-Za-z]:\\|\.{0,2}/|~/)?(?:[\w.@-]+[/\\])+[\w.@-]+"  # a/b/c.py, /x/y, C:\x\y, ./z
)
_HTTP_VERSION = re.compile(r"\bHTTP/\d(?:\.\d)?")
_DURATION = re.compile(r"\b\d+(?:\.\d+)?(?:ns|µs|us|ms|s|m|h)\b")  # go test's (0.01s)
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
    if any(_JAVA_FRAME.match(line) for line in lines):
        thrown = [line for line in lines if _JAVA_EXCEPTION.match(line)]
        causes = [line for line in thrown if line.startswith("Caused by: ")]
        if causes or thrown:
            return (causes or thrown)[-1 if causes else 0]
    wrapper = None
    for line in lines:
        line = _BUILDKIT_PREFIX.sub("", line)
        if _WRAPPER_LINE.search(line):
            wrapper = wrapper or line
        elif _ERROR_LINE.search(line):
            return line
    return wrapper


def is_crash(signature: str) -> bool:
    """A process killed by a signal: the line names no program, so it alone says little."""
    return _CRASH.search(signature) is not None


def normalise(line: str) -> str:
    """Mask what differs between occurrences of one error (ids, paths, numbers)."""
    masked = _HTTP_VERSION.sub("HTTP", line)
    masked = _UUID.sub("<id>", masked)
    masked = _HEX.sub("<id>", masked)
    masked = _PATH.sub("<path>", masked)
    masked = _DURATION.sub("<n>", masked)
    masked = _NUMBER.sub("<n>", masked)
    return _SPACES.sub(" ", masked).strip()[:MAX_SIGNATURE]


def error_signature(text: str) -> str | None:
    """The signature of the first error ``text`` reports (None: it reports none)."""
    line = error_line(text)
    return None if line is None else normalise(line)
