"""Prior fixes through the worker's handlers, on the real database: a session that fixed an
error hands its fix to the next session that meets the same error, in the "Prior fixes"
section of its assembled context, with the path named in ``explain``."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
from fastapi import FastAPI
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine
from tests.paths.prior_world import (
    ASK,
    FIX,
    GREEN,
    HEADER,
    UNRELATED,
    World,
    failing,
    fixed_in_session_a,
    new_session,
    prior_fixes_of,
    resolved_path,
)

from cairn.breadcrumbs.repository import insert_breadcrumb
from cairn.context.model import Section
from cairn.context.render import section_header
from cairn.db.engine import tenant_session
from cairn.db.tenants import ensure_tenant
from cairn.worker.handlers import Handlers


async def test_the_same_error_in_a_new_session_brings_the_prior_fix(
    app: FastAPI, client: httpx.AsyncClient, handlers: Handlers, db: AsyncEngine,
    tenant: uuid.UUID,
) -> None:  # fmt: skip
    world = World(app, client, handlers, tenant)
    await world.agent("fixer", {"paths": {"enabled": True}})
    await world.agent("plain", {})  # no paths source: no prior fixes
    path_id, path = await resolved_path(db, await fixed_in_session_a(world))
    other = await _another_tenants_path(app, path["signature"])

    # Other paths, other line numbers: only the masked signature is the same.
    b = new_session()
    await world.step(b, failing("services/shop/tests/unit/test_cart.py", 17, 21), ASK)
    context = await world.context_of("fixer", b, db)
    (seed,) = prior_fixes_of(context)
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
    assert prior_fixes_of(plain) == [] and HEADER not in plain["formatted_context"]


async def test_a_similar_error_brings_the_fix_as_similar(
    app: FastAPI, client: httpx.AsyncClient, handlers: Handlers, db: AsyncEngine,
    tenant: uuid.UUID,
) -> None:  # fmt: skip
    world = World(app, client, handlers, tenant)
    await world.agent("fixer", {"paths": {}})
    path_id, _ = await resolved_path(db, await fixed_in_session_a(world))
    similar = failing("tests/test_cart.py", 3, 4)
    similar["output"] = similar["output"].replace("assert 3 ==", "assert subtotal ==")
    b = new_session()
    await world.step(b, similar, ASK)
    (seed,) = prior_fixes_of(await world.context_of("fixer", b, db))
    assert seed["record_id"] == str(path_id) and 0.75 <= seed["score"] < 1.0
    assert seed["detail"].startswith(f"prior fix: path {path_id}, similar error (similarity")


async def test_an_unrelated_error_brings_no_prior_fix(
    app: FastAPI, client: httpx.AsyncClient, handlers: Handlers, db: AsyncEngine,
    tenant: uuid.UUID,
) -> None:  # fmt: skip
    world = World(app, client, handlers, tenant)
    await world.agent("fixer", {"paths": {"enabled": True}})
    path_id, _ = await resolved_path(db, await fixed_in_session_a(world))
    b = new_session()
    await world.step(b, UNRELATED, ASK)
    context = await world.context_of("fixer", b, db)
    assert prior_fixes_of(context) == []
    assert HEADER not in context["formatted_context"]
    assert str(path_id) not in str(context["explain"]["selected"])


async def test_a_trigger_without_an_error_seeds_nothing(
    app: FastAPI, client: httpx.AsyncClient, handlers: Handlers, db: AsyncEngine,
    tenant: uuid.UUID,
) -> None:  # fmt: skip
    world = World(app, client, handlers, tenant)
    await world.agent("fixer", {"paths": {"enabled": True}})
    await fixed_in_session_a(world)
    b = new_session()
    await world.step(b, {"command": "ls", "exit_code": 0, "output": "src tests"}, ASK)
    assert prior_fixes_of(await world.context_of("fixer", b, db)) == []


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
    a = new_session()
    for context in (_no_module("/home/a/shop", 3), failing("tests/test_cart.py", 3, 4)):
        await world.step(a, context)
    for context in (FIX, GREEN, GREEN, GREEN):
        await world.step(a, context)
    path_id, path = await resolved_path(db, a)
    assert "AssertionError" in path["signature"]
    b = new_session()
    await world.step(b, _no_module("/srv/ci/run-71/shop", 9), ASK)
    (seed,) = prior_fixes_of(await world.context_of("fixer", b, db))
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
