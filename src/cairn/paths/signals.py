"""What one record says about a debugging session, by rule (the seed asks an LLM; Cairn's
default is deterministic).

- **error**: ``status`` error/failed, a non-zero ``exit_code``, an HTTP status of 500 or
  more, a test run with failures, or text that reports an error (a traceback, ``Error:``,
  ``FAILED``, ``panicked at``, ``npm ERR!``) from a command not known to have worked: the
  output of one that exited 0 is data (a log it read, lines it grepped). Not an error: exit
  1 of a command whose 1 means "no" (``grep``/``rg`` found nothing, ``lsof``/``pgrep`` no
  such process, ``diff``/``cmp`` the files differ, ``test``/``[`` false) when its output
  reports no error; and valgrind's ``ERROR SUMMARY: N errors`` of a run that exited 0:
  valgrind is run to look, and exits non-zero on what it found only when asked to
  (``--error-exitcode``), which the exit code then says;
- **success**: a test run with passes and no failures (counts on its own: pytest/jest/mocha
  ``N passed``, ``All N tests passed``, cargo ``test result: ok``, go test's ``ok  <pkg>``
  lines or ``PASS``, rspec ``N examples, 0 failures``, JUnit ``Tests run: N, Failures: 0,
  Errors: 0``, automake's ``# PASS: N`` with ``# FAIL: 0``, unittest's ``Ran N tests``
  then ``OK``, Gradle/Maven ``BUILD SUCCESS(FUL)`` of a task that runs the tests; never with
  a failure line beside it), or ``exit_code`` 0 / ``status`` ok of a command (counts only
  for a program that failed earlier in the path: :mod:`.machine` decides, with
  :func:`program`);
- **revert**: a command that undoes work (``git revert``, ``git restore``, ``git checkout --``);
- **hypothesis** / **discovery**: a record tagged so (``hypothesis``, ``debug:hypothesis``,
  ...) or a note that starts with the word; a note (no command) that opens as a guess does
  ("I think", "Maybe", "Perhaps", "Probably", "I suspect", "My guess");
- **attempt**: a tool call or an edit (a record naming a command, tool or file) that is
  none of the above.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from cairn.paths.signature import error_signature, is_crash

ERROR_STATUSES = frozenset({"error", "failed", "failure", "errored", "crashed"})
OK_STATUSES = frozenset({"ok", "success", "succeeded", "passed", "done", "completed"})
MAX_TEXT = 20_000  # characters of a record read for signals: error lines come early

_TESTS_FAILED = re.compile(
    r"(?<!ERROR SUMMARY: )\b[1-9]\d* (?:failed|failing|errors?|failures?)\b"
    r"|\btest result: FAILED\b"
    r"|\b(?:Failures|Errors): [1-9]"  # JUnit / Maven / Gradle
    r"|^# (?:FAIL|ERROR|XPASS): +[1-9]",  # automake's test-suite summary
    re.M,
)
# A failed test in a format that has no count (go test's FAIL lines, TAP's "not ok"): the
# run is not green, but the lines alone (a log printed by a command that worked) are data;
# a failing go test or prove exits non-zero, which says it.
_TEST_FAILED = re.compile(r"^--- FAIL: |^FAIL(?:\s|$)|^not ok \d+(?! .*# TODO)", re.M)
_TESTS_PASSED = re.compile(
    r"\b[1-9]\d* (?:tests? )?(?:passed|passing)\b|\ball tests passed\b|\btest result: ok\b"
    r"|^ok\s+\S+\s+(?:\d+(?:\.\d+)?s|\(cached\))|^PASS$"  # go test
    r"|\b[1-9]\d* examples?, 0 failures\b"  # rspec
    r"|\bTests run: [1-9]\d*, Failures: 0, Errors: 0\b"  # JUnit / Maven / Gradle
    r"|^# PASS: +[1-9]"  # automake
    r"|^Ran [1-9]\d* tests? in \S+\s+OK\b",  # Python's unittest
    re.M | re.I,
)
# Gradle's build/check/test and Maven's test/package/verify/install run the tests and stop
# at the first failing one: their BUILD SUCCESS(FUL) is a green test run (unless skipped).
_BUILD_OK = re.compile(r"^BUILD SUCCESS(?:FUL)?\b|^\[INFO\] BUILD SUCCESS\b", re.M)
_TEST_TASKS = frozenset({"build", "check", "test", "verify", "install", "package", "deploy"})
_TESTS_SKIPPED = re.compile(r"-x\s+test\b|skipTests|maven\.test\.skip")
# Commands whose exit status 1 answers "no" (nothing found, the files differ, false).
_NO_MEANS_ONE = frozenset(
    {"grep", "egrep", "fgrep", "zgrep", "rg", "ag", "ack", "lsof", "pgrep", "diff", "cmp"}
    | {"test", "[", "[["}
)
_GUESS = re.compile(
    r"^(?:i think|i suspect|i guess|i bet|maybe|perhaps|probably|possibly|my guess|"
    r"could it be|what if|suspect:|guess:|theory:)\b",
    re.I,
)
_REVERT = re.compile(r"\bgit (?:revert|restore|checkout --|reset --hard)\b|\bundo\b", re.I)
# A file path as written (absolute, ./, ../ or ~/ kept: the tag file:<path> must match the
# one an agent wrote), of a source, build or configuration file; not part of a URL or word.
_FILE = re.compile(
    r"(?<![\w.@/~:-])(?:~/|\.{1,2}/|/)?(?:[\w.@-]+/)*[\w@-][\w.@-]*"
    r"\.(?:py|pyi|ts|tsx|js|jsx|mjs|rs|go|java|kt|rb|php|cs|c|cc|cpp|h|hpp|swift|sql|sh"
    r"|toml|json|ya?ml|ini|cfg|conf|tf|proto|html|css|vue|svelte)\b(?![/\w]|\.\w)"
)


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
    error = _error_evidence(context, text, command)
    if error is not None:
        signature = error_signature(text) or f"{command or 'command'} {error}"
        if is_crash(signature) and command:
            signature = f"{program(command)}: {signature}"
        return Signal(Kind.ERROR, error, signature, command, files=files)
    if command is not None and _REVERT.search(command):
        return Signal(Kind.REVERT, "reverting command", command=command, files=files)
    success = _success_evidence(context, text, command)
    if success is not None:
        passed = success == "tests passed"
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
    context = record.get("context")
    if _GUESS.match(head) and not (isinstance(context, Mapping) and _command(context)):
        return Kind.HYPOTHESIS  # a note that opens as a guess; a command's output is not one
    return None


def _error_evidence(context: Mapping[str, Any], text: str, command: str | None) -> str | None:
    status = str(context.get("status") or "").lower()
    if status in ERROR_STATUSES:
        return f"status {status}"
    code = context.get("exit_code", context.get("returncode"))
    if code == 1 and _answers_no(command) and error_signature(text) is None:
        return None  # grep found nothing, diff found a difference: an answer, not an error
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


def _success_evidence(context: Mapping[str, Any], text: str, command: str | None) -> str | None:
    green = _TESTS_PASSED.search(text) or _build_ran_tests(text, command)
    if green and not _TEST_FAILED.search(text):
        return "tests passed"
    code = context.get("exit_code", context.get("returncode"))
    if code == 0 and not isinstance(code, bool):
        return "exit code 0"
    status = str(context.get("status") or "").lower()
    if status in OK_STATUSES:
        return f"status {status}"
    return None


def _build_ran_tests(text: str, command: str | None) -> bool:
    if command is None or not _BUILD_OK.search(text) or _TESTS_SKIPPED.search(command):
        return False
    words = _words(command)
    return bool(words) and _base(words[0]) in _BUILD_DRIVERS and bool(_TEST_TASKS & set(words))


def _answers_no(command: str | None) -> bool:
    if not command:
        return False
    last = re.split(r"(?<!\|)\|(?!\|)", command)[-1]  # a pipeline's status is its last command's
    words = _words(last)
    return bool(words) and _base(words[0]) in _NO_MEANS_ONE


# What "the same program" is, for counting a success as the failed thing now working.
_WRAPPERS = frozenset({"sudo", "time", "nice", "nohup", "env", "command", "exec", "stdbuf"})
_RUNNERS = {  # a prefix that runs the next word in an environment: the next word is the program
    ("bundle", "exec"), ("poetry", "run"), ("uv", "run"), ("pipenv", "run"), ("pdm", "run"),
    ("hatch", "run"), ("pnpm", "exec"), ("yarn", "exec"), ("npx",), ("pnpx",), ("bunx",),
    ("uvx",),
}  # fmt: skip
# Build drivers: the targets or tasks are arguments (``make`` and ``make clean all`` build
# one project; Gradle's build runs its test task).
_BUILD_DRIVERS = frozenset({"make", "gmake", "ninja", "gradle", "gradlew", "mvn", "mvnw", "ant"})
_INTERPRETERS = re.compile(r"^(?:python[\d.]*|py|pypy3?|node|ruby|perl|php|bash|sh|zsh|java)$")
_PACKAGE_RUNNERS = frozenset({"npm", "yarn", "pnpm", "bun"})
_SUBCOMMAND = re.compile(r"^[a-z][a-z0-9_-]*(?::[a-z0-9_:-]+)?$")
_ASSIGNMENT = re.compile(r"^\w+=")


def program(command: str | None) -> str | None:
    """What a command runs, without its arguments: the executable (a path as written, ``./``
    dropped, after ``sudo``/``env X=1``/``bundle exec``/``npx``...) and its subcommand
    (``go test``, ``cargo build``, ``npm run lint``); an interpreter's script or module
    (``python export.py --since X`` and ``... --since Y`` are one program, ``python -m
    pytest`` another); a build driver alone (``make`` and ``make clean all`` are one)."""
    if not command:
        return None
    words, wrapped = _words(command), False
    while words and (
        words[0] in _WRAPPERS
        or _ASSIGNMENT.match(words[0])
        or (wrapped and words[0].startswith("-"))
    ):
        wrapped, words = wrapped or words[0] in _WRAPPERS, words[1:]
    for runner in _RUNNERS:
        if tuple(words[: len(runner)]) == runner:
            words = words[len(runner) :]
            break
    if not words:
        return command.split()[0]
    executable, rest = words[0].removeprefix("./"), words[1:]
    name = _base(executable)
    if name in _BUILD_DRIVERS:
        return name
    arguments = [word for word in rest if not word.startswith("-")]
    if _INTERPRETERS.match(name):
        name = "python" if name.startswith(("python", "py")) else name
        if "-m" in rest[:-1]:
            return f"{name} -m {rest[rest.index('-m') + 1]}"
        return f"{name} {arguments[0].removeprefix('./')}" if arguments else name
    if not arguments or not _SUBCOMMAND.match(arguments[0]):
        return executable
    if name in _PACKAGE_RUNNERS and arguments[0] in {"run", "run-script"} and arguments[1:]:
        return f"{name} run {arguments[1]}"
    return f"{executable} {arguments[0]}"


def rebuilds(command: str | None) -> bool:
    """A build (``make``, ``mvn package``, ``go build``, ``docker build``): after an edit it
    is how a change takes effect, not a change of its own."""
    name = program(command)
    return name is not None and (name in _BUILD_DRIVERS or name.endswith(" build"))


def _words(command: str) -> list[str]:
    try:
        return shlex.split(command)
    except ValueError:  # an unbalanced quote: the words as written
        return command.split()


def _base(executable: str) -> str:
    return executable.rsplit("/", 1)[-1]
