"""Load folders of breadcrumb JSON files (RCRT's bootstrap layout) into a running Cairn.

Idempotent. One listing per schema finds the existing ``(schema_name, title)`` pairs: those are
patched where they differ from their file; the rest are created with an Idempotency-Key, so two
runs at once create them once. Matching on the key's replay instead would duplicate records made
without the key, and re-patch a once-changed file on every run (a key answers 409 to new bodies).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import httpx
from rich.console import Console
from rich.progress import Progress

log = logging.getLogger(__name__)

MAX_IN_FLIGHT = 8
LIST_LIMIT = 1000
TIMEOUT_S = 30.0
KEY_FIELDS = ("key", "bootstrap_key")
# Optional fields the file may drop: a PATCH clears them so the record matches the file.
CLEARABLE = ("description", "semantic_version", "llm_hints")
COMPARED = ("title", "tags", "context", "visibility", "sensitivity")
COLLECTION = "/breadcrumbs"
# A folder of opt-in sets (``examples/<name>/``): loading a folder leaves its ``examples``
# out, so ``cairn up`` gives no tenant an example's agents; name a set to load it.
EXAMPLES = "examples"

Outcome = Literal["created", "updated", "unchanged"]


@dataclass(frozen=True, slots=True)
class BootstrapRecord:
    key: str
    schema_name: str
    title: str
    body: dict[str, Any]  # what is POSTed: the file's object without its explicit key
    source: str  # the file, with ``[i]`` for an item of a JSON array


@dataclass(frozen=True, slots=True)
class Skipped:
    source: str
    reason: str


@dataclass(frozen=True, slots=True)
class Failure:
    source: str
    detail: str
    key: str | None = None
    status: int | None = None


@dataclass(slots=True)
class BootstrapReport:
    """Keys of the records per outcome, plus what failed and what was not a breadcrumb."""

    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    failed: list[Failure] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)

    def add(self, outcome: Outcome, key: str) -> None:
        getattr(self, outcome).append(key)

    def summary(self) -> str:
        names = ("created", "updated", "unchanged", "failed", "skipped")
        return "bootstrap: " + ", ".join(f"{len(getattr(self, n))} {n}" for n in names)


class _RequestFailed(Exception):
    """An error answer (or none usable); ``str()`` is the detail."""

    def __init__(self, detail: str, status: int | None = None) -> None:
        super().__init__(detail)
        self.status = status


_ERRORS = (_RequestFailed, httpx.HTTPError, ValueError, KeyError, TypeError)


def _detail(error: Exception) -> str:
    return str(error) if isinstance(error, _RequestFailed) else repr(error)


def default_bootstrap_dir() -> Path:
    """The repository's ``bootstrap/`` folder (source checkouts and editable installs)."""
    return Path(__file__).resolve().parents[2] / "bootstrap"


def idempotency_key(key: str) -> str:
    return "bootstrap:" + hashlib.sha256(key.encode()).hexdigest()


def load_records(directory: Path) -> list[BootstrapRecord]:
    """Every breadcrumb under ``directory`` (``scan`` also says what it skipped and why)."""
    return scan([directory])[0]


def scan(directories: Sequence[Path]) -> tuple[list[BootstrapRecord], list[Skipped]]:
    """Records of all ``*.json`` files, sorted by path; of two with the same key, or the same
    schema and title (records are matched on those), the first wins."""
    records: list[BootstrapRecord] = []
    skipped: list[Skipped] = []
    seen: dict[object, str] = {}
    for directory in directories:
        for source, item in _documents(directory, skipped):
            try:
                record = _to_record(item, source)
            except ValueError as error:
                skipped.append(Skipped(source, str(error)))
                continue
            marks = (record.key, (record.schema_name, record.title))
            first = next((seen[mark] for mark in marks if mark in seen), None)
            if first is not None:
                skipped.append(Skipped(source, f"duplicate of {first} (key {record.key!r})"))
                continue
            seen.update(dict.fromkeys(marks, source))
            records.append(record)
    return records, skipped


def _documents(directory: Path, skipped: list[Skipped]) -> Iterator[tuple[str, Any]]:
    if not directory.is_dir():
        skipped.append(Skipped(str(directory), "not a directory"))
        return
    for path in sorted(directory.rglob("*.json")):
        parts = path.relative_to(directory).parts
        if not path.is_file() or any(p.startswith(".") for p in parts) or parts[0] == EXAMPLES:
            continue
        try:
            data = json.loads(path.read_text(encoding="utf-8-sig"))
        except (OSError, ValueError) as error:  # JSONDecodeError and UnicodeDecodeError
            skipped.append(Skipped(str(path), f"not readable JSON: {error}"))
            continue
        if isinstance(data, list):
            if not data:
                skipped.append(Skipped(str(path), "an empty JSON array"))
            yield from ((f"{path}[{index}]", item) for index, item in enumerate(data))
        else:
            yield str(path), data


def _to_record(item: Any, source: str) -> BootstrapRecord:
    if not isinstance(item, dict):
        raise ValueError(f"not a breadcrumb: a JSON {type(item).__name__}, not an object")
    body = dict(item)
    explicit = [body.pop(name) for name in KEY_FIELDS if name in body]
    missing = [name for name in ("schema_name", "title", "context") if name not in body]
    if missing:
        raise ValueError(f"not a breadcrumb: no {', '.join(missing)}")
    for name in ("schema_name", "title"):
        if not isinstance(body[name], str) or not body[name].strip():
            raise ValueError(f"{name} is not a non-empty string")
    if not isinstance(body["context"], dict):
        raise ValueError("context is not a JSON object")
    key = explicit[0] if explicit else f"{body['schema_name']}:{body['title']}"
    if not isinstance(key, str) or not key.strip():
        raise ValueError("key is not a non-empty string")
    return BootstrapRecord(key, body["schema_name"], body["title"], body, source)


async def bootstrap(
    client: httpx.AsyncClient,
    records: Sequence[BootstrapRecord],
    *,
    progress: Callable[[], None] | None = None,
) -> BootstrapReport:
    """Create or update ``records`` on the server behind ``client``; never aborts on one."""
    schemas = sorted({record.schema_name for record in records})
    listings = {schema: await _titles(client, schema) for schema in schemas}
    in_flight = asyncio.Semaphore(MAX_IN_FLIGHT)

    async def load(record: BootstrapRecord) -> Outcome | Failure:
        async with in_flight:
            result = await _load_one(client, record, listings[record.schema_name])
        if progress is not None:
            progress()
        return result

    report = BootstrapReport()
    for record, result in zip(records, await asyncio.gather(*map(load, records)), strict=True):
        if isinstance(result, Failure):
            report.failed.append(result)
        else:
            report.add(result, record.key)
    return report


async def _titles(client: httpx.AsyncClient, schema_name: str) -> dict[str, str] | Failure:
    """``title → id`` of the live records of one schema (newest wins), or why it failed."""
    found: dict[str, str] = {}
    params: dict[str, str | int] = {"schema_name": schema_name, "limit": LIST_LIMIT}
    try:
        while True:
            response = _checked(await client.get(COLLECTION, params=params))
            for item in response.json():
                found.setdefault(item["title"], item["id"])
            cursor = response.headers.get("X-Next-Cursor")
            if not cursor:
                return found
            params["cursor"] = cursor
    except _ERRORS as error:
        return Failure("", f"listing schema {schema_name!r} failed: {_detail(error)}")


async def _load_one(
    client: httpx.AsyncClient, record: BootstrapRecord, titles: Mapping[str, str] | Failure
) -> Outcome | Failure:
    try:
        if isinstance(titles, Failure):
            raise _RequestFailed(titles.detail)
        existing = titles.get(record.title)
        if existing is None:
            return await _create(client, record)
        return await _reconcile(client, record, existing)
    except _ERRORS as error:
        status = error.status if isinstance(error, _RequestFailed) else None
        return Failure(record.source, _detail(error), record.key, status)


async def _create(client: httpx.AsyncClient, record: BootstrapRecord) -> Outcome:
    headers = {"Idempotency-Key": idempotency_key(record.key)}
    response = await client.post(COLLECTION, json=record.body, headers=headers)
    if response.status_code == 409:
        # The key is bound to an earlier body of this file, yet no record has its title:
        # it was deleted or renamed since. Create it afresh.
        response = await client.post(COLLECTION, json=record.body)
    created = _checked(response).json()
    if (await client.get(f"{COLLECTION}/{created['id']}")).status_code == 404:
        # The key replayed a record deleted since the last run.
        _checked(await client.post(COLLECTION, json=record.body))
    return "created"


async def _reconcile(client: httpx.AsyncClient, record: BootstrapRecord, ident: str) -> Outcome:
    current = _checked(await client.get(f"{COLLECTION}/{ident}/full")).json()
    changes = changed_fields(record.body, current)
    if not changes:
        return "unchanged"
    headers = {"If-Match": str(current["version"])}
    _checked(await client.patch(f"{COLLECTION}/{ident}", json=changes, headers=headers))
    return "updated"


def changed_fields(body: Mapping[str, Any], current: Mapping[str, Any]) -> dict[str, Any]:
    """The PATCH that makes ``current`` (a ``/full`` record) match the file's ``body``."""
    desired = {name: body.get(name) for name in CLEARABLE}
    desired |= {name: body[name] for name in COMPARED if name in body}
    tags = desired.get("tags")
    if isinstance(tags, list) and all(isinstance(tag, str) for tag in tags):
        desired["tags"] = list(dict.fromkeys(tags))  # the server de-duplicates the same way
    return {name: value for name, value in desired.items() if current.get(name) != value}


def _checked(response: httpx.Response) -> httpx.Response:
    if response.is_success:
        return response
    detail = response.text[:500] or response.reason_phrase
    with suppress(ValueError):
        body = response.json()
        if isinstance(body, dict) and "detail" in body:
            detail = f"{body.get('error', 'error')}: {body['detail']}"
    raise _RequestFailed(f"HTTP {response.status_code} {detail}", response.status_code)


async def run(
    url: str,
    directories: Sequence[Path],
    *,
    show_progress: bool,
    transport: httpx.AsyncBaseTransport | None = None,
    token: str | None = None,
) -> BootstrapReport:
    """What ``cairn bootstrap`` and ``cairn up`` call; ``transport`` is for tests, ``token``
    an emitter's (CAIRN_AUTH=jwt)."""
    missing = [Failure(str(d), "not a directory") for d in directories if not d.is_dir()]
    records, skipped = scan([directory for directory in directories if directory.is_dir()])
    headers = {"Authorization": f"Bearer {token}"} if token else None
    async with httpx.AsyncClient(
        base_url=url, timeout=TIMEOUT_S, transport=transport, headers=headers
    ) as client:
        if show_progress:
            with Progress(console=Console(stderr=True), transient=True) as bar:
                task = bar.add_task("bootstrap", total=len(records))
                report = await bootstrap(client, records, progress=lambda: bar.advance(task))
        else:
            report = await bootstrap(client, records)
    report.skipped.extend(skipped)
    report.failed[:0] = missing
    for item in skipped:
        log.info("bootstrap: skipped %s: %s", item.source, item.reason)
    for failure in report.failed:
        log.warning("bootstrap: %s failed: %s", failure.source, failure.detail)
    log.info("%s (%s)", report.summary(), url)
    return report
