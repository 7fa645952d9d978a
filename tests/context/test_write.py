"""Writing an assembly: one agent.context.v1 per (consumer, session), with history and an
outbox event like any change, and never overwritten by an older trigger's assembly."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine
from tests import sent
from tests.assemblies.helpers import rows_of
from tests.dbcheck import outbox_events
from tests.factories import breadcrumb

from cairn.assemblies.entry import WORKER, entry_of, written_with
from cairn.breadcrumbs.generated import GeneratedWriter
from cairn.breadcrumbs.replace import ISO_UTC, Rider
from cairn.breadcrumbs.repository import Row
from cairn.breadcrumbs.validation import canonical_json, checksum
from cairn.config import Limits
from cairn.context.assemble import Assembly
from cairn.context.write import write_context
from cairn.db.engine import tenant_session
from cairn.embedding import tag_pointers
from cairn.errors import Forbidden, InvalidInput, PayloadTooLarge
from cairn.events.outbox import published_body
from cairn.events.payloads import ChangeKind, change_event
from cairn.principal import Principal, Role
from cairn.processing.stages import CHUNKED, NOT_NEEDED_OUTCOME
from cairn.processing.write_outcomes import not_embedded_outcomes

TRIGGERED = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
EVENT_KEYS = {
    "type", "event_id", "breadcrumb_id", "owner_id", "version", "schema_name", "title",
    "tags", "updated_at", "context", "change",
}  # fmt: skip


def _assembly(key: str, *, triggered: datetime = TRIGGERED, text: str = "ctx") -> Assembly:
    context = {
        "consumer_id": f"writer-{key}",
        "trigger_created_at": triggered.isoformat(),
        "formatted_context": text,
        "explain": {"seeds": [{"record_id": str(uuid.uuid4()), "score": 0.5}], "dropped": []},
    }
    return Assembly(f"writer-{key}", uuid.uuid4(), f"session:{key}", context)


async def _write(
    app: FastAPI,
    assembly: Assembly,
    limits: Limits | None = None,
    *,
    keep: int = 0,
    principal: Principal | None = None,
    logged: bool = False,
) -> Row:
    resources = app.state.resources
    owner = resources.default_tenant
    async with tenant_session(resources.session_factory, owner) as session, session.begin():
        principal = principal or Principal(owner, f"context-builder:{assembly.agent_id}")
        writer = GeneratedWriter(
            session, resources.embedder, limits or resources.settings.limits, principal,
            resources.transforms,
        )  # fmt: skip
        log = _log(owner, assembly) if logged else None
        return await write_context(writer, assembly, keep_versions=keep, log=log)


def _log(owner: uuid.UUID, assembly: Assembly) -> Rider:
    timings = {"seeds": 1.5, "total": 4.25}
    entry = entry_of(
        owner, assembly.agent_id, WORKER, assembly.context,
        session_tag=assembly.session_tag, trigger_id=assembly.trigger_id, timings_ms=timings,
    )  # fmt: skip
    return written_with(entry, time.perf_counter())


async def _stored(db: AsyncEngine, record_id: uuid.UUID) -> dict[str, Any]:
    query = text("SELECT * FROM breadcrumbs WHERE id = :id")
    async with db.connect() as connection:
        return dict((await connection.execute(query, {"id": record_id})).mappings().one())


async def _history(db: AsyncEngine, record_id: uuid.UUID) -> list[dict[str, Any]]:
    query = text("SELECT * FROM breadcrumb_history WHERE breadcrumb_id = :id ORDER BY version")
    async with db.connect() as connection:
        return [
            dict(row) for row in (await connection.execute(query, {"id": record_id})).mappings()
        ]


async def test_first_write_stores_the_context_with_history_and_event(
    app: FastAPI, db: AsyncEngine
) -> None:
    assembly = _assembly(uuid.uuid4().hex[:8])
    row = await _write(app, assembly)
    stored = await _stored(db, row["id"])
    assert stored["context"] == assembly.context and stored["version"] == row["version"] == 1
    payload = canonical_json(assembly.context)
    assert stored["checksum"] == checksum(payload) and stored["size_bytes"] == len(payload)
    assert stored["llm_text"] is None and stored["embedding"] is None
    assert stored["entity_keywords"] == tag_pointers(stored["tags"])
    assert row["context"] == assembly.context and row["tags"] == stored["tags"]
    (history,) = await _history(db, row["id"])
    assert (history["version"], history["change"]) == (1, "create")
    assert history["context"] == assembly.context and history["checksum"] == stored["checksum"]
    ((subject, event),) = await outbox_events(db, str(row["id"]))
    assert subject == f"bc.{row['id']}.created" and set(event) == EVENT_KEYS
    assert event["context"] == assembly.context and event["version"] == 1
    assert event["updated_at"] == stored["updated_at"].isoformat()


async def test_a_later_trigger_replaces_the_context_and_an_earlier_one_does_not(
    app: FastAPI, db: AsyncEngine
) -> None:
    key = uuid.uuid4().hex[:8]
    first = await _write(app, _assembly(key, text="first"))
    later = _assembly(key, triggered=TRIGGERED + timedelta(seconds=1), text="later")
    replaced = await _write(app, later)
    late = await _write(app, _assembly(key, triggered=TRIGGERED, text="handled late"))
    assert replaced["id"] == first["id"] and replaced["version"] == 2
    assert late["version"] == 2 and late["context"] == later.context
    assert (await _stored(db, first["id"]))["context"] == later.context
    history = await _history(db, first["id"])
    assert [(h["version"], h["change"]) for h in history] == [(1, "create"), (2, "replace")]
    events = await outbox_events(db, str(first["id"]))
    assert [event["type"] for _, event in events] == ["breadcrumb.created", "breadcrumb.updated"]
    assert events[-1][1]["context"] == later.context and events[-1][1]["change"] == "replace"


@pytest.mark.parametrize(
    ("text", "problem"),
    [("nul \x00 here", "NUL characters"), (float("nan"), "numbers must be finite")],
)
async def test_a_context_postgres_cannot_store_is_refused_naming_the_path(
    app: FastAPI, text: Any, problem: str
) -> None:
    with pytest.raises(InvalidInput, match=rf"context\.formatted_context: {problem}"):
        await _write(app, _assembly(uuid.uuid4().hex[:8], text=text))


async def test_an_escaped_nul_is_only_text(app: FastAPI, db: AsyncEngine) -> None:
    assembly = _assembly(uuid.uuid4().hex[:8], text="a backslash then u0000: \\u0000")
    row = await _write(app, assembly)
    assert (await _stored(db, row["id"]))["context"] == assembly.context


async def test_a_context_over_the_size_limit_writes_nothing(app: FastAPI, db: AsyncEngine) -> None:
    assembly = _assembly(uuid.uuid4().hex[:8], text="x" * 500)
    with pytest.raises(PayloadTooLarge):
        await _write(app, assembly, Limits(max_context_bytes=400))
    query = text("SELECT count(*) FROM breadcrumbs WHERE title = :title")
    async with db.connect() as connection:
        title = f"Context for {assembly.agent_id}"
        assert (await connection.execute(query, {"title": title})).scalar_one() == 0


async def test_concurrent_first_writes_create_once_then_replace(
    app: FastAPI, db: AsyncEngine
) -> None:
    key = uuid.uuid4().hex[:8]
    rows = await asyncio.gather(*(_write(app, _assembly(key, text=str(i))) for i in range(4)))
    assert sorted(row["version"] for row in rows) == [1, 2, 3, 4]
    history = await _history(db, rows[0]["id"])
    assert [h["change"] for h in history] == ["create", "replace", "replace", "replace"]
    events = await outbox_events(db, str(rows[0]["id"]))
    assert [event["version"] for _, event in events] == [1, 2, 3, 4]


async def test_the_history_keeps_the_newest_versions_only(app: FastAPI, db: AsyncEngine) -> None:
    key = uuid.uuid4().hex[:8]
    rows = []
    for i in range(7):
        later = _assembly(key, triggered=TRIGGERED + timedelta(seconds=i), text=str(i))
        rows.append(await _write(app, later, keep=3))
    assert rows[-1]["version"] == 7
    history = await _history(db, rows[0]["id"])
    assert [h["version"] for h in history] == [5, 6, 7]
    assert history[-1]["context"]["formatted_context"] == "6"


async def test_a_history_of_zero_versions_keeps_them_all(app: FastAPI, db: AsyncEngine) -> None:
    key = uuid.uuid4().hex[:8]
    for i in range(4):
        later = _assembly(key, triggered=TRIGGERED + timedelta(seconds=i), text=str(i))
        row = await _write(app, later, keep=0)
    assert [h["version"] for h in await _history(db, row["id"])] == [1, 2, 3, 4]


async def test_other_schemas_keep_their_whole_history(
    client: httpx.AsyncClient, app: FastAPI, db: AsyncEngine
) -> None:
    """Only the assembled contexts are capped: a note edited past the cap keeps every
    version (the builder's cap is the default 20; 25 edits)."""
    assert app.state.resources.contexts.history_versions == 20
    created = await client.post("/breadcrumbs", json=breadcrumb(title="v1"))
    assert created.status_code == 201, created.text
    record_id = created.json()["id"]
    for version in range(1, 25):
        patched = await client.patch(
            f"/breadcrumbs/{record_id}", json={"title": f"v{version + 1}"},
            headers={"If-Match": str(version)},
        )  # fmt: skip
        assert patched.status_code == 200, patched.text
    assert len(await _history(db, uuid.UUID(record_id))) == 25


@contextlib.contextmanager
def _written_statements(app: FastAPI) -> Iterator[list[str]]:
    """The statements sent meanwhile that touch records, their history or the outbox."""
    statements: list[str] = []
    with sent.by_engine(app.state.resources.engine) as every:
        yield statements
    statements += [s for s in every if "breadcrumb" in s or "outbox" in s]


async def test_a_creation_is_one_statement_with_the_general_paths_rows(
    app: FastAPI, db: AsyncEngine
) -> None:
    """The first assembly of a session creates its record: the insert, its history row,
    its event and its processing outcomes go as one statement."""
    assembly = _assembly(uuid.uuid4().hex[:8])
    with _written_statements(app) as written:
        row = await _write(app, assembly, keep=1)
    assert len(written) == 1, written
    stored = await _stored(db, row["id"])
    assert row["version"] == stored["version"] == 1 and stored["context"] == assembly.context
    assert row["updated_at"] == stored["updated_at"] == stored["created_at"]
    assert stored["created_by"] == f"context-builder:{assembly.agent_id}"
    assert [(h["version"], h["change"]) for h in await _history(db, row["id"])] == [(1, "create")]
    ((subject, event),) = await outbox_events(db, str(row["id"]))
    assert subject == f"bc.{row['id']}.created" and set(event) == EVENT_KEYS
    assert (event["type"], event["change"], event["version"]) == ("breadcrumb.created", "create", 1)
    query = text("SELECT stage, state FROM record_processing WHERE breadcrumb_id = :id")
    async with db.connect() as connection:
        stages = dict((await connection.execute(query, {"id": row["id"]})).all())
    assert stages == {stage: outcome.state for stage, outcome in _outcomes().items()}


async def test_a_replacement_is_one_statement_with_the_general_paths_rows(
    app: FastAPI, db: AsyncEngine
) -> None:
    """The update, its history row, its event, its processing outcomes and the pruning of
    old history go to the database as one statement, and leave what the general path
    leaves."""
    key = uuid.uuid4().hex[:8]
    first = await _write(app, _assembly(key, text="first"))
    with _written_statements(app) as written:
        later = _assembly(key, triggered=TRIGGERED + timedelta(seconds=1), text="later")
        row = await _write(app, later, keep=1)
    assert len(written) == 1, written
    stored = await _stored(db, first["id"])
    assert row["version"] == stored["version"] == 2 and stored["context"] == later.context
    assert row["updated_at"] == stored["updated_at"] and row["tags"] == stored["tags"]
    payload = canonical_json(later.context)
    assert stored["checksum"] == checksum(payload) and stored["size_bytes"] == len(payload)
    assert stored["entity_keywords"] == tag_pointers(stored["tags"])
    assert [(h["version"], h["change"]) for h in await _history(db, first["id"])] == [
        (2, "replace")
    ]
    (_, created), (subject, replaced) = await outbox_events(db, str(first["id"]))
    assert subject == f"bc.{first['id']}.updated" and set(replaced) == EVENT_KEYS
    assert replaced["updated_at"] == stored["updated_at"].isoformat()
    same = {"breadcrumb_id", "owner_id", "schema_name", "title", "tags"}
    assert {k: replaced[k] for k in same} == {k: created[k] for k in same}
    assert (replaced["version"], replaced["change"]) == (2, "replace")
    assert replaced["context"] == later.context and replaced["event_id"] != created["event_id"]
    query = text("SELECT stage, state FROM record_processing WHERE breadcrumb_id = :id")
    async with db.connect() as connection:
        stages = dict((await connection.execute(query, {"id": first["id"]})).all())
    assert stages == {stage: outcome.state for stage, outcome in _outcomes().items()}


async def test_the_log_entry_goes_with_the_write_on_either_path(
    app: FastAPI, db: AsyncEngine
) -> None:
    """In the one statement (a creation), and after the general path's write (an older
    trigger's assembly, which keeps the stored one): an entry each time, its ``write`` time
    added to the phases before it."""
    key = uuid.uuid4().hex[:8]
    later = _assembly(key, triggered=TRIGGERED + timedelta(seconds=1), text="later")
    with _written_statements(app) as written:
        first = await _write(app, later, logged=True)
    assert len(written) == 1, written
    kept = await _write(app, _assembly(key, text="older"), logged=True)
    assert kept["version"] == first["version"] == 1
    rows = await rows_of(app, later.agent_id)
    assert [(r["trigger_id"], r["session_tag"]) for r in rows] == [
        (later.trigger_id, f"session:{key}"),
        (rows[1]["trigger_id"], f"session:{key}"),
    ]
    for row in rows:
        timings = row["timings_ms"]
        assert set(timings) == {"seeds", "write", "total"} and 0 < timings["write"] < 10_000
        assert row["total_ms"] == timings["total"] == pytest.approx(4.25 + timings["write"])


@pytest.mark.parametrize(
    "stamp",
    [
        datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
        datetime(2026, 1, 2, 3, 4, 5, 500000, tzinfo=UTC),
        datetime(2026, 12, 31, 23, 59, 59, 1, tzinfo=UTC),
        datetime(2026, 6, 1, 12, 0, 0, 120, tzinfo=timezone(timedelta(hours=-7))),
    ],
)
async def test_the_events_time_is_written_as_python_writes_it(
    db: AsyncEngine, stamp: datetime
) -> None:
    """The one-statement write formats ``updated_at`` in SQL; the general path's events
    carry ``datetime.isoformat`` of the stored time: subscribers see one format."""
    query = text(f"SELECT {ISO_UTC} FROM (SELECT CAST(:t AS timestamptz) AS updated_at) AS u")
    async with db.connect() as connection:
        written = (await connection.execute(query, {"t": stamp})).scalar_one()
    assert written == stamp.astimezone(UTC).isoformat()


async def test_another_writer_without_the_curator_role_replaces_nothing(
    app: FastAPI, db: AsyncEngine
) -> None:
    key = uuid.uuid4().hex[:8]
    first = await _write(app, _assembly(key, text="first"))
    owner = app.state.resources.default_tenant
    other = Principal(owner, "someone-else", roles=frozenset({Role.EMITTER}))
    later = _assembly(key, triggered=TRIGGERED + timedelta(seconds=1), text="later")
    with pytest.raises(Forbidden):
        await _write(app, later, principal=other)
    stored = await _stored(db, first["id"])
    assert stored["version"] == 1 and stored["context"]["formatted_context"] == "first"
    assert len(await outbox_events(db, str(first["id"]))) == 1


def _outcomes() -> dict[str, Any]:
    return not_embedded_outcomes() | {CHUNKED: NOT_NEEDED_OUTCOME}


async def test_what_the_relay_publishes_is_the_change_event_of_the_stored_row(
    app: FastAPI, db: AsyncEngine
) -> None:
    """The one statement builds its event itself; what the relay publishes (the payload
    with the context of its own column) must be what ``change_event`` of the stored row
    gives, read back through jsonb as the stored context is, for a creation and for a
    replacement."""
    key = uuid.uuid4().hex[:8]
    later = TRIGGERED + timedelta(seconds=1)
    written = [
        (_assembly(key, text='first é \u2028 \\ "'), ChangeKind.created, "create"),
        (_assembly(key, triggered=later, text="later"), ChangeKind.updated, "replace"),
    ]
    for assembly, kind, change in written:
        row = await _write(app, assembly, keep=1)
        stored = await _stored(db, row["id"])
        expected = change_event(kind, stored, change=change).payload
        query = text(
            "SELECT msg_id, payload::text AS payload, context::text AS context FROM outbox"
            " WHERE payload->>'breadcrumb_id' = :id ORDER BY id DESC LIMIT 1"
        )
        as_jsonb = text("SELECT CAST(CAST(:body AS text) AS jsonb)::text")
        async with db.connect() as connection:
            published = (await connection.execute(query, {"id": str(row["id"])})).one()
            expected["event_id"] = str(published.msg_id)
            reference = await connection.scalar(as_jsonb, {"body": json.dumps(expected)})
        assert "context" not in json.loads(published.payload)
        body = published_body(published.payload, published.context)
        assert json.loads(body) == json.loads(reference)


async def test_a_large_context_is_compressed_only_in_its_history(
    app: FastAPI, db: AsyncEngine
) -> None:
    """The outbox row is read once and deleted (revisions 0024, 0026) and the record's row
    is replaced by the next assembly (revision 0025): neither is compressed; the history's
    copies, many per record, are."""
    row = await _write(app, _assembly(uuid.uuid4().hex[:8], text="many words " * 2000))
    query = text(
        "SELECT pg_column_compression(o.context) AS event, pg_column_compression(b.context)"
        " AS record, pg_column_compression(h.context) AS history"
        " FROM outbox o JOIN breadcrumbs b ON b.id = :id"
        " JOIN breadcrumb_history h ON h.breadcrumb_id = :id AND h.version = b.version"
        " WHERE o.payload->>'breadcrumb_id' = CAST(:id AS text)"
    )
    async with db.connect() as connection:
        found = (await connection.execute(query, {"id": row["id"]})).one()
    assert (found.event, found.record, found.history) == (None, None, "pglz")
