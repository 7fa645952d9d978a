"""``cairn import FILE.jsonl``: records from a JSON Lines file (``-``: standard input) into
a running server, in batches (POST /breadcrumbs/batch), with a progress bar and a summary
of what was created, replayed and refused, by line number.

Each line is a create body as POST /breadcrumbs takes it, with an optional
``idempotency_key``. A line without one gets a key derived from its content, so running
the same import again — after a crash, or once the refused lines are fixed — writes each
record once: what was written is replayed, the rest is created. Identical lines are
therefore one record; ``--fresh-keys`` gives every line a key of its own instead.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TextIO

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from cairn.cli_client import AsJson, Token, Url, connected

if TYPE_CHECKING:
    from cairn_client import Client

BATCH_TIMEOUT_S = 300.0  # a thousand records are embedded while the request waits
SHOWN_FAILURES = 50


@dataclass(frozen=True)
class Line:
    number: int
    record: dict[str, Any]


@dataclass(frozen=True)
class Failure:
    line: int
    status: int | None  # None: the line was never sent (not a JSON object)
    error: str
    detail: str


@dataclass
class Tally:
    created: int = 0
    replayed: int = 0
    failures: list[Failure] = field(default_factory=list)


def import_records(
    file: Annotated[str, typer.Argument(metavar="FILE.jsonl", help="JSON Lines, or - for stdin")],
    batch_size: Annotated[int, typer.Option(min=1, help="records per request")] = 500,
    fresh_keys: Annotated[
        bool,
        typer.Option(
            "--fresh-keys", help="a new idempotency key per line, not one from its content"
        ),
    ] = False,
    url: Url = None,
    token: Token = None,
    as_json: AsJson = False,
) -> None:
    """Create the records of a JSON Lines file; exits 1 when any line was refused."""
    tally = Tally()
    with _opened(file) as (stream, total), connected(url, token, BATCH_TIMEOUT_S) as cairn:
        lines = parsed_lines(stream, tally, derive_keys=not fresh_keys)
        with _progress() as progress:
            task = progress.add_task("importing", total=total)
            for chunk in _chunks(lines, batch_size):
                send(cairn, chunk, tally)
                progress.advance(task, len(chunk))
    tally.failures.sort(key=lambda failure: failure.line)
    _report(tally, as_json)
    if tally.failures:
        raise typer.Exit(1)


def parsed_lines(stream: Iterable[str], tally: Tally, *, derive_keys: bool) -> Iterator[Line]:
    """The records to send; a line that is no JSON object is a failure, never sent."""
    for number, text in enumerate(stream, start=1):
        if not text.strip():
            continue
        try:
            record = json.loads(text)
        except ValueError as error:
            tally.failures.append(Failure(number, None, "not_json", str(error)))
            continue
        if not isinstance(record, dict):
            tally.failures.append(Failure(number, None, "not_an_object", "not a JSON object"))
            continue
        if derive_keys and record.get("idempotency_key") is None:
            record["idempotency_key"] = derived_key(record)
        yield Line(number, record)


def derived_key(record: dict[str, Any]) -> str:
    """The same record, the same key: its canonical JSON's SHA-256."""
    canonical = json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "import:" + hashlib.sha256(canonical.encode()).hexdigest()


def send(cairn: Client, lines: list[Line], tally: Tally) -> None:
    """One batch. A batch refused whole (a string no database column could hold, a body
    over the cap) is halved until the refusal lands on its own line: the keys make the
    repeats harmless."""
    from cairn_client import InvalidInput

    try:
        answer = cairn.create_breadcrumbs([line.record for line in lines])
    except InvalidInput as error:
        if len(lines) == 1:
            tally.failures.append(Failure(lines[0].number, error.status, error.error, error.detail))
            return
        half = len(lines) // 2
        send(cairn, lines[:half], tally)
        send(cairn, lines[half:], tally)
        return
    tally.created += answer.created
    tally.replayed += answer.replayed
    for result in answer.results:
        if result.status >= 400:
            number = lines[result.index].number
            tally.failures.append(
                Failure(number, result.status, result.error or "", result.detail or "")
            )


def _chunks(lines: Iterator[Line], size: int) -> Iterator[list[Line]]:
    while chunk := list(islice(lines, size)):
        yield chunk


class _opened:
    """The file (and its count of non-blank lines, for the bar) or standard input."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.file: TextIO | None = None

    def __enter__(self) -> tuple[TextIO, int | None]:
        if self.name == "-":
            return sys.stdin, None
        path = Path(self.name)
        if not path.is_file():
            raise typer.BadParameter(f"no such file: {self.name}", param_hint="FILE.jsonl")
        with path.open(encoding="utf-8") as counting:
            total = sum(1 for text in counting if text.strip())
        self.file = path.open(encoding="utf-8")
        return self.file, total

    def __exit__(self, *_: object) -> None:
        if self.file is not None:
            self.file.close()


def _progress() -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
    )


def _report(tally: Tally, as_json: bool) -> None:
    failed = len(tally.failures)
    if as_json:
        failures = [asdict(failure) for failure in tally.failures]
        summary = {"created": tally.created, "replayed": tally.replayed, "failed": failed}
        typer.echo(json.dumps(summary | {"failures": failures}, indent=2, ensure_ascii=False))
        return
    typer.echo(f"created {tally.created}, replayed {tally.replayed}, failed {failed}")
    for failure in tally.failures[:SHOWN_FAILURES]:
        status = f" ({failure.status})" if failure.status else ""
        typer.echo(f"line {failure.line}: {failure.error}{status}: {failure.detail}")
    if failed > SHOWN_FAILURES:
        typer.echo(f"... and {failed - SHOWN_FAILURES} more (--json lists them all)")
