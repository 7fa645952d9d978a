"""Prior fixes through the worker's handlers, on the real database: a session that fixed an
error hands its fix to the next session that meets the same error, in the "Prior fixes"
section of its assembled context, with the path named in ``explain``."""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine
from tests.assembly.helpers import post

from cairn.breadcrumbs import repository as breadcrumbs
from cairn.breadcrumbs.repository import insert_breadcrumb
from cairn.config import Settings
from cairn.context.builder import ContextBuilder
from cairn.context.model import Section
from cairn.context.render import section_header
from cairn.context.write import context_record_id
from cairn.db.engine import tenant_session
from cairn.db.tenants import ensure_tenant
from cairn.edges.builder import EdgeOptions
from cairn.events.payloads import ChangeKind, change_event
from cairn.transforms import Transforms
from cairn.worker.app import NoEmbedder
from cairn.worker.handlers import Handlers

ASK = "ask:debugging"
CHAT_AGENT = Path(__file__).resolve().parents[2] / "bootstrap" / "system" / "cairn-chat-agent.json"
HEADER = section_header(Section.prior_fixes)


def failing(where: str, got: int, want: int) -> dict[str, Any]:
    output = (
        f"FAILED {where}::test_total - AssertionError: assert {got} == {want}\n"
        f"1 failed, {got + 1} passed in 0.{want}s"
    )
    return {"command": "pytest -q", "exit_code": 1, "output": output}


GREEN = {"command": "pytest -q", "exit_code": 0, "output": "3 passed in 0.10s"}
FIX = {"tool": "edit", "title": "Edit src/cart.py: round the total once", "text": "changed"}
UNRELATED = {
    "command": "python export.py",
    "exit_code": 1,
    "output": 'Traceback (most recent call last):\n  File "export.py", line 3\n'
    "PermissionError: [Errno 13] Permission denied: '/var/out/report.csv'",
}


@pytest.fixture
async def handlers(app: FastAPI, settings: Settings) -> Handlers:
    """The worker's handlers on the test database, called directly (no consumer)."""
    sessions = app.state.resources.session_factory
    builder = await asyncio.to_thread(
        ContextBuilder.create, settings, sessions, Transforms(settings.transforms), NoEmbedder()
    )
    return Handlers(sessions, EdgeOptions(), builder)


class World:
    """One tenant's records, each handled by the worker's steps as it is posted."""

    def __init__(
        self, app: FastAPI, client: httpx.AsyncClient, handlers: Handlers, owner: uuid.UUID
    ):
        self.app, self.client, self.handlers, self.owner = app, client, handlers, owner

    async def handled(self, **body: Any) -> uuid.UUID:
        record_id = await post(self.client, **body)
        resources = self.app.state.resources
        async with tenant_session(resources.session_factory, self.owner) as session:
            row = await breadcrumbs.get(session, self.owner, record_id)
        assert row is not None
        await self.handlers.handle_event(
            change_event(ChangeKind.created, row, change="create").payload
        )
        return record_id

    async def agent(self, agent_id: str, sources: dict[str, Any]) -> None:
        await self.handled(
            schema_name="agent.def.v1", title=agent_id, tags=["workspace:agents"],
            context={
                "agent_id": agent_id,
                "context_trigger": {"schema_name": "tool.response.v1", "any_tags": [ASK]},
                "context_sources": {"session": {"limit": 5}, **sources},
                "context_budget": 3000,
            },
        )  # fmt: skip

    async def step(self, session: str, context: dict[str, Any], *tags: str) -> uuid.UUID:
        body = dict(context)
        title = body.pop("title", f"ran {body.get('command')}")
        return await self.handled(
            schema_name="tool.response.v1", title=title, tags=[session, *tags], context=body
        )

    async def context_of(self, agent_id: str, session: str, db: AsyncEngine) -> dict[str, Any]:
        query = text("SELECT context FROM breadcrumbs WHERE id = :id")
        record = context_record_id(self.owner, agent_id, session)
        async with db.connect() as connection:
            found = (await connection.execute(query, {"id": record})).scalar_one()
        return dict(found)


async def _resolved_path(db: AsyncEngine, session: str) -> tuple[uuid.UUID, dict[str, Any]]:
    query = text(
        "SELECT id, context FROM breadcrumbs WHERE schema_name = 'debug.path.v1'"
        " AND context->>'session' = :session"
    )
    async with db.connect() as connection:
        (row,) = list(await connection.execute(query, {"session": session}))
    assert row.context["status"] == "resolved"
    return row.id, dict(row.context)


def _prior_fixes(context: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for s in context["explain"]["seeds"] if s["source"] == "paths"]


def _session() -> str:
    return f"session:{uuid.uuid4().hex[:8]}"


async def _fixed_in_session_a(world: World) -> str:
    session = _session()
    for context in (failing("tests/test_cart.py", 3, 4), FIX, GREEN, GREEN, GREEN):
        await world.step(session, context)
    return session


async def test_the_same_error_in_a_new_session_brings_the_prior_fix(
    app: FastAPI, client: httpx.AsyncClient, handlers: Handlers, db: AsyncEngine,
    tenant: uuid.UUID,
) -> None:  # fmt: skip
    world = World(app, client, handlers, tenant)
    await world.agent("fixer", {"paths": {"enabled": True}})
    await world.agent("plain", {})  # no paths source: no prior fixes
    path_id, path = await _resolved_path(db, await _fixed_in_session_a(world))
    other = await _another_tenants_path(app, path["signature"])

    # Other paths, other line numbers: only the masked signature is the same.
    b = _session()
    await world.step(b, failing("services/shop/tests/unit/test_cart.py", 17, 21), ASK)
    context = await world.context_of("fixer", b, db)
    (seed,) = _prior_fixes(context)
    assert seed["record_id"] == str(path_id) and seed["score"] == 1.0
    assert seed["detail"] == f"prior fix: path {path_id}, same error signature"
    (selected,) = [s for s in context["explain"]["selected"] if s["record_id"] == str(path_id)]
    assert selected["section"] == "prior_fixes" and selected["source"] == "paths"
    text_ = context["formatted_context"]
    assert HEADER in text_ and f"Fixed before (path {path_id})" in text_
    assert f"What fixed it: {path['what_fixed_it']}" in text_
    assert "Edit src/cart.py: round the total once" in path["what_fixed_it"]
    assert f"Root cause: {path['root_cause']}" in text_
    assert text_.index(HEADER) < text_.index(section_header(Section.trigger))
    # Neither the other tenant's path of the same error nor B's own (active) path.
    assert str(other) not in str(context)

    plain = await world.context_of("plain", b, db)
    assert _prior_fixes(plain) == [] and HEADER not in plain["formatted_context"]


async def test_a_similar_error_brings_the_fix_as_similar(
    app: FastAPI, client: httpx.AsyncClient, handlers: Handlers, db: AsyncEngine,
    tenant: uuid.UUID,
) -> None:  # fmt: skip
    world = World(app, client, handlers, tenant)
    await world.agent("fixer", {"paths": {}})
    path_id, _ = await _resolved_path(db, await _fixed_in_session_a(world))
    similar = failing("tests/test_cart.py", 3, 4)
    similar["output"] = similar["output"].replace("assert 3 ==", "assert subtotal ==")
    b = _session()
    await world.step(b, similar, ASK)
    (seed,) = _prior_fixes(await world.context_of("fixer", b, db))
    assert seed["record_id"] == str(path_id) and 0.75 <= seed["score"] < 1.0
    assert seed["detail"].startswith(f"prior fix: path {path_id}, similar error (similarity")


async def test_an_unrelated_error_brings_no_prior_fix(
    app: FastAPI, client: httpx.AsyncClient, handlers: Handlers, db: AsyncEngine,
    tenant: uuid.UUID,
) -> None:  # fmt: skip
    world = World(app, client, handlers, tenant)
    await world.agent("fixer", {"paths": {"enabled": True}})
    path_id, _ = await _resolved_path(db, await _fixed_in_session_a(world))
    b = _session()
    await world.step(b, UNRELATED, ASK)
    context = await world.context_of("fixer", b, db)
    assert _prior_fixes(context) == []
    assert HEADER not in context["formatted_context"]
    assert str(path_id) not in str(context["explain"]["selected"])


async def test_a_trigger_without_an_error_seeds_nothing(
    app: FastAPI, client: httpx.AsyncClient, handlers: Handlers, db: AsyncEngine,
    tenant: uuid.UUID,
) -> None:  # fmt: skip
    world = World(app, client, handlers, tenant)
    await world.agent("fixer", {"paths": {"enabled": True}})
    await _fixed_in_session_a(world)
    b = _session()
    await world.step(b, {"command": "ls", "exit_code": 0, "output": "src tests"}, ASK)
    assert _prior_fixes(await world.context_of("fixer", b, db)) == []


async def _another_tenants_path(app: FastAPI, signature: str) -> uuid.UUID:
    """A resolved path of the same error in another tenant, written straight to the table."""
    resources, owner, record_id = app.state.resources, uuid.uuid4(), uuid.uuid4()
    await ensure_tenant(resources.engine, owner, f"test-{owner}")
    context = {
        "session": "session:elsewhere", "status": "resolved", "signature": signature,
        "kiss_summary": "When it failed: the other tenant's secret fix.",
        "root_cause": signature, "what_fixed_it": "the other tenant's secret fix",
    }  # fmt: skip
    async with tenant_session(resources.session_factory, owner) as session, session.begin():
        await insert_breadcrumb(
            session,
            {
                "id": record_id, "owner_id": owner, "schema_name": "debug.path.v1",
                "title": "Debug path (resolved)", "tags": ["debug:path"], "context": context,
                "checksum": "sha256:test", "size_bytes": 0,
            },
        )  # fmt: skip
    return record_id


async def test_an_error_the_path_pivoted_away_from_counts_as_the_same(
    app: FastAPI, client: httpx.AsyncClient, handlers: Handlers, db: AsyncEngine,
    tenant: uuid.UUID,
) -> None:  # fmt: skip
    """A's path met the import error first, then the assertion it resolved: its signature
    is the assertion's, one of its waypoints has the import error's."""
    world = World(app, client, handlers, tenant)
    await world.agent("fixer", {"paths": {"enabled": True}})
    a = _session()
    for context in (_no_module("/home/a/shop", 3), failing("tests/test_cart.py", 3, 4)):
        await world.step(a, context)
    for context in (FIX, GREEN, GREEN, GREEN):
        await world.step(a, context)
    path_id, path = await _resolved_path(db, a)
    assert "AssertionError" in path["signature"]
    b = _session()
    await world.step(b, _no_module("/srv/ci/run-71/shop", 9), ASK)
    (seed,) = _prior_fixes(await world.context_of("fixer", b, db))
    assert seed["detail"] == f"prior fix: path {path_id}, same error signature"


def _no_module(root: str, line: int) -> dict[str, Any]:
    output = (
        f"ImportError while loading conftest '{root}/tests/conftest.py'.\n"
        f"tests/conftest.py:{line}: in <module>\n    import yaml\n"
        "E   ModuleNotFoundError: No module named 'yaml'\n"
    )
    return {"command": "pytest -q", "exit_code": 4, "output": output}


async def test_the_lookup_scans_the_resolved_paths_only(app: FastAPI, tenant: uuid.UUID) -> None:
    """The schema name is a literal, so the partial index of migration 0020 fits, also
    as the application role under row-level security: the tenant's resolved paths, never
    a scan of its records."""
    from cairn.context.sources.paths import _PRIOR_FIXES, SCANNED

    params = {
        "owner": tenant, "signature": "KeyError: 'user_id'", "words": "KeyError user_id",
        "excluded": [], "floor": 0.375, "limit": 8, "scanned": SCANNED,
    }  # fmt: skip
    resources = app.state.resources
    async with tenant_session(resources.session_factory, tenant) as session:
        await session.execute(text("SET LOCAL enable_seqscan = off"))
        rows = await session.execute(text(f"EXPLAIN {_PRIOR_FIXES}"), params)
        plan = "\n".join(row[0] for row in rows)
    scans = [line for line in plan.splitlines() if " on breadcrumbs" in line]
    assert len(scans) == 2
    assert all("using ix_debug_paths_resolved" in line for line in scans), plan


async def test_the_chat_agent_brings_a_prior_fix_for_an_error_a_user_pastes(
    app: FastAPI, client: httpx.AsyncClient, handlers: Handlers, db: AsyncEngine,
    tenant: uuid.UUID,
) -> None:  # fmt: skip
    """The bootstrap chat agent as shipped: a user message quoting a traceback is a trigger
    with an error."""
    agent = json.loads(CHAT_AGENT.read_text())
    world = World(app, client, handlers, tenant)
    await world.handled(**agent)
    a = _session()
    run = "python scripts/export.py --since 2026-11-01"
    failed = "Traceback (most recent call last):\n  File \"/home/a/crm/scripts/export.py\"," \
        " line 64, in main\n    row[\"user_id\"]\nKeyError: 'user_id'"  # fmt: skip
    await world.step(a, {"command": run, "exit_code": 1, "output": failed})
    await world.step(a, {"tool": "edit", "title": "Edit export.py: use row.get('user_id')"})
    for _ in range(3):
        await world.step(a, {"command": run, "exit_code": 0, "output": "exported 1200 rows"})
    path_id, _ = await _resolved_path(db, a)
    b = _session()
    pasted = failed.replace("/home/a/crm", "/srv/crm/current").replace("line 64", "line 71")
    await world.handled(
        schema_name="user.message.v1", title="Export fails", tags=[b, "user:message"],
        context={"content": f"The export crashes again, any idea?\n{pasted}"},
    )  # fmt: skip
    context = await world.context_of("cairn-chat", b, db)
    (seed,) = _prior_fixes(context)
    assert seed["record_id"] == str(path_id)
    assert "use row.get('user_id')" in context["formatted_context"]


async def test_an_agent_with_its_own_sections_places_prior_fixes_by_their_source(
    app: FastAPI, client: httpx.AsyncClient, handlers: Handlers, db: AsyncEngine,
    tenant: uuid.UUID,
) -> None:  # fmt: skip
    world = World(app, client, handlers, tenant)
    await world.handled(
        schema_name="agent.def.v1", title="sectioned", tags=["workspace:agents"],
        context={
            "agent_id": "sectioned",
            "context_trigger": {"schema_name": "tool.response.v1", "any_tags": [ASK]},
            "context_sources": {"session": {"limit": 5}, "paths": {}},
            "context_budget": 3000,
            "sections": [
                {"name": "fixes", "title": "Prior fixes", "match": {"sources": ["paths"]}},
                {"name": "rest", "title": "Everything else"},
            ],
        },
    )  # fmt: skip
    path_id, _ = await _resolved_path(db, await _fixed_in_session_a(world))
    b = _session()
    await world.step(b, failing("lib/tests/test_cart.py", 8, 9), ASK)
    text_ = (await world.context_of("sectioned", b, db))["formatted_context"]
    fixes = text_.split("### Prior fixes\n", 1)[1].split("### Everything else", 1)[0]
    assert fixes.startswith(f"Fixed before (path {path_id})")
