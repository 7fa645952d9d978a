"""Loading bootstrap folders (RCRT's real data and Cairn's own) and syncing them over HTTP.

``FakeCairn`` is an in-memory twin of the routes ``cairn.bootstrap`` uses, behind
``httpx.MockTransport``; the last tests run the same flows against the real app.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import itertools
import json
import uuid
from pathlib import Path
from typing import Any

import httpx
from tests.fixtures_path import SHARED

from cairn import bootstrap as bs
from cairn.bootstrap import BootstrapRecord, BootstrapReport, bootstrap, load_records, scan

RCRT = SHARED / "fixtures" / "rcrt-bootstrap"
FIELDS = ("schema_name", "title", "description", "semantic_version", "tags", "context",
          "llm_hints", "visibility", "sensitivity", "ttl")  # fmt: skip


class FakeCairn:
    """The breadcrumb routes with RCRT/Cairn semantics: idempotency keys, If-Match, cursors."""

    def __init__(self, *, page_size: int = 3) -> None:
        self.page_size = page_size
        self.records: dict[str, dict[str, Any]] = {}
        self.keys: dict[str, tuple[str, dict[str, Any]]] = {}
        self.calls: list[tuple[str, str]] = []
        self.in_flight = self.max_in_flight = 0
        self._clock = itertools.count(1)

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self.handle)

    def insert(self, body: dict[str, Any]) -> str:
        ident = str(uuid.uuid4())
        record: dict[str, Any] = {"description": None, "semantic_version": None, "tags": []}
        record["llm_hints"] = None
        record |= {k: v for k, v in body.items() if k in FIELDS}
        record["tags"] = list(dict.fromkeys(record["tags"]))
        record |= {"id": ident, "version": 1, "updated_at": next(self._clock)}
        self.records[ident] = record
        return ident

    async def handle(self, request: httpx.Request) -> httpx.Response:
        self.calls.append((request.method, request.url.path))
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            await asyncio.sleep(0)  # let other requests in, as a real server would
            return self.route(request)
        finally:
            self.in_flight -= 1

    def route(self, request: httpx.Request) -> httpx.Response:
        parts = request.url.path.strip("/").split("/")
        if parts == ["breadcrumbs"]:
            return self.create(request) if request.method == "POST" else self.listing(request)
        record = self.records.get(parts[1])
        if record is None:
            return _error(404, "not_found", f"breadcrumb {parts[1]} not found")
        if request.method == "PATCH":
            return self.update(record, request)
        return httpx.Response(200, json=record)

    def create(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        if not isinstance(body.get("tags", []), list):
            return _error(422, "invalid_input", "body.tags: Input should be a valid list")
        key = request.headers.get("Idempotency-Key")
        digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
        if key in self.keys:
            if self.keys[key][0] != digest:
                return _error(409, "conflict", f"Idempotency-Key {key} was used with another body")
            return httpx.Response(201, json=self.keys[key][1])
        result = {"id": self.insert(body), "version": 1}
        if key is not None:
            self.keys[key] = (digest, result)
        return httpx.Response(201, json=result)

    def listing(self, request: httpx.Request) -> httpx.Response:
        schema, cursor = request.url.params["schema_name"], request.url.params.get("cursor")
        rows = sorted((r for r in self.records.values() if r["schema_name"] == schema),
                      key=lambda r: -r["updated_at"])  # fmt: skip
        start = int(cursor or 0)
        page = rows[start : start + min(self.page_size, int(request.url.params["limit"]))]
        more = start + len(page) < len(rows)
        headers = {"X-Next-Cursor": str(start + len(page))} if more else {}
        return httpx.Response(200, json=page, headers=headers)

    def update(self, record: dict[str, Any], request: httpx.Request) -> httpx.Response:
        if request.headers.get("If-Match") != str(record["version"]):
            return _error(412, "version_mismatch", "version moved")
        record.update(json.loads(request.content))
        record["version"] += 1
        record["updated_at"] = next(self._clock)
        changed = {"ok": True, "id": record["id"], "version": record["version"]}
        return httpx.Response(200, json=changed)

    def titled(self, title: str) -> list[dict[str, Any]]:
        return [r for r in self.records.values() if r["title"] == title]


def _error(status: int, code: str, detail: str) -> httpx.Response:
    return httpx.Response(status, json={"error": code, "detail": detail})


def _write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def note(title: str, **overrides: Any) -> dict[str, Any]:
    body = {"schema_name": "note.v1", "title": title, "tags": ["t"], "context": {"n": 1}}
    return body | overrides


def records_of(*bodies: dict[str, Any]) -> list[BootstrapRecord]:
    """Records as the loader makes them, from files ``mem/<i>.json``."""
    made = []
    for index, body in enumerate(bodies):
        schema, title = body["schema_name"], body["title"]
        made.append(BootstrapRecord(f"{schema}:{title}", schema, title, body, f"mem/{index}.json"))
    return made


async def sync(fake: FakeCairn, records: list[BootstrapRecord], **kwargs: Any) -> BootstrapReport:
    async with httpx.AsyncClient(transport=fake.transport(), base_url="http://fake") as http:
        return await bootstrap(http, records, **kwargs)


# --- loading files ---------------------------------------------------------------------------


def test_every_rcrt_file_loads_as_one_record() -> None:
    files = sorted(RCRT.rglob("*.json"))
    records, skipped = scan([RCRT])
    assert skipped == []
    assert [r.source for r in records] == [str(path) for path in files]
    assert {r.schema_name for r in records} >= {"agent.def.v1", "tool.code.v1", "schema.def.v1"}


def test_rcrt_keys_are_unique_and_default_to_schema_and_title() -> None:
    records = load_records(RCRT)
    assert len({r.key for r in records}) == len(records)
    assert all(r.key == f"{r.schema_name}:{r.title}" for r in records)


def test_the_body_is_the_file_as_rcrt_posts_it() -> None:
    (record,) = [r for r in load_records(RCRT) if r.source.endswith("quick-start-wizard.json")
                 and r.schema_name == "ui.state.v1"]  # fmt: skip
    assert record.body == json.loads(Path(record.source).read_text(encoding="utf-8"))


def test_loading_is_deterministic(tmp_path: Path) -> None:
    for name in ("b/z.json", "a.json", "b/a.json"):
        _write(tmp_path / name, note(name))
    sources = [r.source for r in load_records(tmp_path)]
    assert sources == [str(tmp_path / n) for n in ("a.json", "b/a.json", "b/z.json")]
    assert sources == [r.source for r in load_records(tmp_path)]


def test_explicit_key_wins_and_leaves_the_body(tmp_path: Path) -> None:
    _write(tmp_path / "a.json", note("A", key="notes/a"))
    _write(tmp_path / "b.json", note("B", bootstrap_key="notes/b"))
    a, b = load_records(tmp_path)
    assert (a.key, b.key) == ("notes/a", "notes/b")
    assert "key" not in a.body and "bootstrap_key" not in b.body


def test_a_json_array_holds_several_records(tmp_path: Path) -> None:
    _write(tmp_path / "many.json", [note("One"), note("Two")])
    records = load_records(tmp_path)
    assert [r.title for r in records] == ["One", "Two"]
    assert records[1].source == f"{tmp_path / 'many.json'}[1]"


def test_a_byte_order_mark_is_tolerated(tmp_path: Path) -> None:
    (tmp_path / "bom.json").write_bytes(b"\xef\xbb\xbf" + json.dumps(note("Bom")).encode())
    assert [r.title for r in load_records(tmp_path)] == ["Bom"]


def test_files_that_are_not_breadcrumbs_are_skipped_with_a_reason(tmp_path: Path) -> None:
    _write(tmp_path / "good.json", note("Good"))
    _write(tmp_path / "package.json", {"name": "x", "version": "1.0.0"})
    _write(tmp_path / "broken.json", "{not json")
    _write(tmp_path / "numbers.json", [1, 2])
    _write(tmp_path / "context.json", note("Bad context", context="text"))
    _write(tmp_path / "empty.json", [])
    _write(tmp_path / ".git" / "hidden.json", note("Hidden"))
    _write(tmp_path / "notes.txt", "not json at all")
    records, skipped = scan([tmp_path])
    assert [r.title for r in records] == ["Good"]
    reasons = {Path(s.source.split("[")[0]).name: s.reason for s in skipped}
    assert set(reasons) == {
        "package.json",
        "broken.json",
        "numbers.json",
        "context.json",
        "empty.json",
    }
    assert "no schema_name, title, context" in reasons["package.json"]
    assert "not readable JSON" in reasons["broken.json"]
    assert "context" in reasons["context.json"]
    assert all(s.reason for s in skipped)


def test_a_duplicate_record_is_skipped_and_the_first_kept(tmp_path: Path) -> None:
    _write(tmp_path / "a.json", note("Same", context={"v": 1}))
    _write(tmp_path / "b.json", note("Same", context={"v": 2}, key="other"))
    records, skipped = scan([tmp_path])
    assert [r.body["context"] for r in records] == [{"v": 1}]
    assert skipped[0].source == str(tmp_path / "b.json") and "duplicate" in skipped[0].reason


def test_cairn_bootstrap_folder_documents_cairn() -> None:
    records, skipped = scan([bs.default_bootstrap_dir()])
    assert skipped == []
    knowledge = [r for r in records if r.schema_name == "knowledge.v1"]
    assert len(knowledge) >= 3
    for record in knowledge:
        assert record.source.startswith(str(bs.default_bootstrap_dir() / "knowledge"))
        assert record.body["description"] and "knowledge" in record.body["tags"]


# --- syncing with a server ---------------------------------------------------------------------


async def test_first_run_creates_everything_and_the_second_nothing() -> None:
    fake, records = FakeCairn(), load_records(RCRT)
    first = await sync(fake, records)
    assert first.created == [r.key for r in records] and not first.failed
    posts = sum(1 for method, _ in fake.calls if method == "POST")
    second = await sync(fake, records)
    assert (second.created, second.updated, second.failed) == ([], [], [])
    assert second.unchanged == [r.key for r in records]
    assert len(fake.records) == len(records)
    assert sum(1 for method, _ in fake.calls if method == "POST") == posts


async def test_creates_send_a_key_derived_idempotency_key() -> None:
    fake = FakeCairn()
    await sync(fake, records_of(note("A")))
    expected = "bootstrap:" + hashlib.sha256(b"note.v1:A").hexdigest()
    assert list(fake.keys) == [expected]


async def test_a_changed_file_is_patched_once() -> None:
    fake = FakeCairn()
    await sync(fake, records_of(note("A"), note("B")))
    changed = records_of(note("A", context={"n": 2}), note("B"))
    report = await sync(fake, changed)
    assert (report.updated, report.unchanged) == (["note.v1:A"], ["note.v1:B"])
    (record,) = fake.titled("A")
    assert record["context"] == {"n": 2} and record["version"] == 2
    again = await sync(fake, changed)  # the key still holds the first body: no PATCH again
    assert again.unchanged == ["note.v1:A", "note.v1:B"] and fake.titled("A")[0]["version"] == 2


async def test_an_optional_field_dropped_from_the_file_is_cleared() -> None:
    fake = FakeCairn()
    await sync(fake, records_of(note("A", description="old", llm_hints={"exclude": ["n"]})))
    report = await sync(fake, records_of(note("A")))
    assert report.updated == ["note.v1:A"]
    (record,) = fake.titled("A")
    assert record["description"] is None and record["llm_hints"] is None


async def test_a_failing_record_is_reported_and_the_others_load() -> None:
    fake = FakeCairn()
    report = await sync(fake, records_of(note("A"), note("Bad", tags="oops"), note("C")))
    assert report.created == ["note.v1:A", "note.v1:C"]
    (failure,) = report.failed
    assert (failure.source, failure.key, failure.status) == ("mem/1.json", "note.v1:Bad", 422)
    assert "invalid_input" in failure.detail and "tags" in failure.detail


async def test_a_record_made_without_the_key_is_not_duplicated() -> None:
    fake = FakeCairn()
    fake.insert(note("A"))
    report = await sync(fake, records_of(note("A")))
    assert report.unchanged == ["note.v1:A"] and len(fake.records) == 1


async def test_a_deleted_record_is_created_again() -> None:
    fake = FakeCairn()
    await sync(fake, records_of(note("A")))
    fake.records.clear()
    report = await sync(fake, records_of(note("A")))
    assert report.created == ["note.v1:A"] and len(fake.titled("A")) == 1


async def test_a_deleted_then_changed_record_is_created_again() -> None:
    fake = FakeCairn()
    await sync(fake, records_of(note("A")))
    fake.records.clear()
    report = await sync(fake, records_of(note("A", context={"n": 2})))
    assert report.created == ["note.v1:A"] and fake.titled("A")[0]["context"] == {"n": 2}


async def test_listing_follows_the_cursor() -> None:
    fake = FakeCairn(page_size=2)
    bodies = [note(f"N{i}") for i in range(5)]
    await sync(fake, records_of(*bodies))
    report = await sync(fake, records_of(*bodies))
    assert len(report.unchanged) == 5 and len(fake.records) == 5


async def test_requests_in_flight_are_bounded_and_progress_ticks_per_record() -> None:
    fake, ticks = FakeCairn(), []
    records = records_of(*(note(f"N{i}") for i in range(40)))
    await sync(fake, records, progress=lambda: ticks.append(1))
    assert 1 < fake.max_in_flight <= bs.MAX_IN_FLIGHT
    assert len(ticks) == 40


async def test_an_unreachable_server_fails_every_record_without_raising() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    async with httpx.AsyncClient(transport=httpx.MockTransport(refuse), base_url="http://x") as c:
        report = await bootstrap(c, records_of(note("A"), note("B")))
    assert [f.key for f in report.failed] == ["note.v1:A", "note.v1:B"]
    assert all("ConnectError" in f.detail for f in report.failed)


async def test_run_loads_folders_and_reports_a_missing_one(tmp_path: Path) -> None:
    _write(tmp_path / "a.json", note("A"))
    _write(tmp_path / "junk.json", {"name": "x"})
    fake = FakeCairn()
    report = await bs.run("http://cairn.test", [tmp_path, tmp_path / "nope"],
                          show_progress=True, transport=fake.transport())  # fmt: skip
    assert report.created == ["note.v1:A"]
    assert [f.source for f in report.failed] == [str(tmp_path / "nope")]
    assert [s.source for s in report.skipped] == [str(tmp_path / "junk.json")]
    assert report.summary() == "bootstrap: 1 created, 0 updated, 0 unchanged, 1 failed, 1 skipped"


# --- against the real app (PostgreSQL, NATS and the embedder of tests/conftest.py) -----------


async def test_rcrt_data_loads_into_cairn_once(client: httpx.AsyncClient) -> None:
    records = load_records(RCRT)
    first = await bootstrap(client, records)
    assert first.failed == []
    assert len(first.created) + len(first.unchanged) == len(records)
    second = await bootstrap(client, records)
    assert (second.created, second.updated, second.failed) == ([], [], [])
    assert second.unchanged == [r.key for r in records]


async def test_a_changed_file_is_patched_once_in_cairn(
    client: httpx.AsyncClient, marker: str
) -> None:
    original = records_of(note(f"Bootstrap {marker}", tags=[marker, marker]))
    assert (await bootstrap(client, original)).created == [original[0].key]
    changed = [dataclasses.replace(original[0], body=original[0].body | {"context": {"n": 2}})]
    assert (await bootstrap(client, changed)).updated == [original[0].key]
    again = await bootstrap(client, changed)
    assert again.unchanged == [original[0].key]
    listed = (await client.get("/breadcrumbs", params={"tag": marker})).json()
    assert [item["version"] for item in listed] == [2]
