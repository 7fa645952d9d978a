"""Blocks stored with the records (context.block_store): an assembly stores the blocks it
rendered and a later one serves them instead of rendering; a block of another version or
other hints is never served; a delete takes it along; other tenants neither see nor write
it; the backfill stores what an assembly would; a failure storing blocks costs nothing but
the next render."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError
from tests.assembly.helpers import own_worker_steps, post, post_agent
from tests.waiting import eventually
from typer.testing import CliRunner

from cairn.cli import app as cli_app
from cairn.config import Settings
from cairn.context import builder as builder_module
from cairn.context.block_store import backfill, backfill_tenants, digest_of
from cairn.db.engine import tenant_session

STORED = text(
    "SELECT record_id, version, digest, block, tokens, line_tokens FROM record_blocks"
    " WHERE owner_id = :owner"
)


async def _world(client: httpx.AsyncClient) -> dict[str, Any]:
    key = uuid.uuid4().hex[:8]
    tools, notes, agent_id = f"tool{key}.v1", f"note{key}.v1", f"agent-{key}"
    definition = await post(
        client, schema_name="schema.def.v1", title=f"{tools} definition", tags=[f"defines:{tools}"],
        context={"defines_schema": tools, "llm_hints": {"exclude": ["code"]}},
    )  # fmt: skip
    always = [
        {"type": "schema", "schema_name": name, "method": "all", "limit": 5}
        for name in (tools, notes)
    ]
    await post_agent(client, agent_id, f"ask:{key}", {"always": always}, 2000)
    tool = await post(
        client, schema_name=tools, title="calculator",
        context={"name": "calculator", "description": "adds numbers", "code": "CODE_ONE"},
    )  # fmt: skip
    note = await post(
        client, schema_name=notes, title="Ada", context={"speaker": "Ada", "text": "Launch moved."}
    )
    trigger = await post(
        client, schema_name="user.message.v1", title="ask", tags=[f"ask:{key}"],
        context={"content": "add two numbers"},
    )  # fmt: skip
    return {
        "agent": agent_id, "definition": definition, "tool": tool, "note": note,
        "trigger": trigger,
    }  # fmt: skip


async def _assembled(client: httpx.AsyncClient, world: dict[str, Any]) -> str:
    body = {"agent_id": world["agent"], "trigger_id": str(world["trigger"])}
    response = await client.post("/contexts/assemble", json=body)
    assert response.status_code == 200, response.text
    return str(response.json()["context"]["formatted_context"])


async def _stored(db: Any, owner: uuid.UUID) -> dict[uuid.UUID, tuple[Any, ...]]:
    async with db.connect() as connection:
        rows = await connection.execute(STORED, {"owner": owner})
        return {row[0]: tuple(row[1:]) for row in rows}


async def _tamper(app: FastAPI, db: Any, record_id: uuid.UUID, old: str, new: str) -> None:
    """Change the stored block behind the assembly's back, and forget the in-process one:
    what the next assembly shows tells whether it served the stored block."""
    async with db.begin() as connection:
        await connection.execute(
            text(
                "UPDATE record_blocks SET block = replace(block, :old, :new) WHERE record_id = :id"
            ),
            {"id": record_id, "old": old, "new": new},
        )
    app.state.resources.contexts.blocks.clear()


async def _version(client: httpx.AsyncClient, record_id: uuid.UUID) -> int:
    return int((await client.get(f"/breadcrumbs/{record_id}")).json()["version"])


async def test_an_assembly_stores_what_it_rendered_and_a_later_one_serves_it(
    client: httpx.AsyncClient, app: FastAPI, db: Any, tenant: uuid.UUID
) -> None:
    world = await _world(client)
    first = await _assembled(client, world)
    stored = await _stored(db, tenant)
    counter = app.state.resources.contexts.counter
    for name in ("tool", "note", "trigger"):
        version, _, block, tokens, _ = stored[world[name]]
        assert version == await _version(client, world[name])
        assert block in first and tokens == counter.count(block)
    assert stored[world["note"]][1] == digest_of(counter.encoding_name, ("plain",))
    # The note takes one line in a run of its schema; the tool's block stands alone.
    assert stored[world["note"]][4] == counter.count("Ada · Launch moved.\n")
    assert stored[world["tool"]][4] is None
    await _tamper(app, db, world["tool"], "adds numbers", "STORED numbers")
    second = await _assembled(client, world)
    assert "STORED numbers" in second and "adds numbers" not in second


async def test_a_block_of_another_version_or_other_hints_is_not_served(
    client: httpx.AsyncClient, app: FastAPI, db: Any, tenant: uuid.UUID
) -> None:
    world = await _world(client)
    await _assembled(client, world)
    await _tamper(app, db, world["tool"], "adds numbers", "STALE numbers")
    edited = {"name": "calculator", "description": "multiplies numbers", "code": "CODE_TWO"}
    response = await client.patch(f"/breadcrumbs/{world['tool']}", json={"context": edited})
    assert response.status_code == 200, response.text
    second = await _assembled(client, world)
    assert "multiplies numbers" in second and "STALE" not in second
    version, _, block, _, _ = (await _stored(db, tenant))[world["tool"]]
    assert version == await _version(client, world["tool"]) and "multiplies numbers" in block

    await _tamper(app, db, world["tool"], "multiplies numbers", "STALE numbers")
    hints = {"defines_schema": "x", "llm_hints": {"exclude": ["description"]}}
    response = await client.patch(f"/breadcrumbs/{world['definition']}", json={"context": hints})
    assert response.status_code == 200, response.text
    third = await _assembled(client, world)
    assert "CODE_TWO" in third and "STALE" not in third and "multiplies" not in third


async def test_a_deleted_record_takes_its_stored_block_along(
    client: httpx.AsyncClient, db: Any, tenant: uuid.UUID
) -> None:
    world = await _world(client)
    await _assembled(client, world)
    assert world["note"] in await _stored(db, tenant)
    response = await client.delete(f"/breadcrumbs/{world['note']}")
    assert response.status_code in (200, 204), response.text
    assert world["note"] not in await _stored(db, tenant)


async def test_another_tenant_neither_sees_nor_writes_a_tenants_stored_blocks(
    client: httpx.AsyncClient, app: FastAPI, tenant: uuid.UUID
) -> None:
    world = await _world(client)
    await _assembled(client, world)
    sessions = app.state.resources.session_factory
    count = text("SELECT count(*) FROM record_blocks")
    async with tenant_session(sessions, tenant) as session, session.begin():
        assert (await session.scalar(count) or 0) >= 3
    other = uuid.uuid4()
    async with tenant_session(sessions, other) as session, session.begin():
        assert await session.scalar(count) == 0
        changed = await session.execute(text("UPDATE record_blocks SET block = 'x'"))
        assert changed.rowcount == 0  # type: ignore[attr-defined]
    with pytest.raises(DBAPIError, match="row-level security"):
        async with tenant_session(sessions, other) as session, session.begin():
            await session.execute(
                text(
                    "INSERT INTO record_blocks (owner_id, record_id, version, digest, block,"
                    " tokens) VALUES (:owner, :id, 99, '\\x00', 'forged', 1)"
                ),
                {"owner": tenant, "id": world["note"]},
            )


async def test_a_failure_storing_blocks_does_not_fail_the_assembly(
    client: httpx.AsyncClient, db: Any, tenant: uuid.UUID, monkeypatch: pytest.MonkeyPatch
) -> None:
    failed: list[int] = []

    async def broken(session: Any, owner: uuid.UUID, blocks: Any) -> None:
        failed.append(len(blocks))
        raise RuntimeError("the block store is down")

    async def not_at_write(self: Any, row: Any) -> None:
        """The worker's edge step renders nothing (else its blocks, cached in the worker,
        would leave the assembly nothing to render and store, depending on timing)."""

    monkeypatch.setattr(builder_module, "store_blocks", broken)
    monkeypatch.setattr(builder_module.ContextBuilder, "store_block", not_at_write)
    world = await _world(client)
    assert "adds numbers" in await _assembled(client, world)
    assert failed and failed[0] >= 3


async def test_the_backfill_stores_the_blocks_an_assembly_renders(
    client: httpx.AsyncClient, app: FastAPI, db: Any, tenant: uuid.UUID
) -> None:
    world = await _world(client)
    await _assembled(client, world)
    rendered = await _stored(db, tenant)
    async with db.begin() as connection:
        await connection.execute(
            text("DELETE FROM record_blocks WHERE owner_id = :owner"), {"owner": tenant}
        )
    contexts = app.state.resources.contexts
    seen: list[int] = []
    args = (app.state.resources.session_factory, tenant, contexts.transforms, contexts.counter)
    stored = await backfill(*args, batch=2, progress=seen.append)
    backfilled = await _stored(db, tenant)
    # Every record of the tenant (the definition and the agent too), in batches of two (a
    # worker of the session may have stored some of them meanwhile).
    assert len(backfilled) == 5 and sum(seen) == stored >= 1 and max(seen) <= 2
    assert {key: backfilled[key] for key in rendered} == rendered
    assert await backfill(*args) == 0  # nothing left to do


async def test_the_worker_stores_the_block_of_a_record_it_links(
    client: httpx.AsyncClient, app: FastAPI, db: Any, tenant: uuid.UUID, worker: None
) -> None:
    note = await post(
        client, schema_name=f"note{uuid.uuid4().hex[:8]}.v1", title="Ada",
        context={"speaker": "Ada", "text": "The launch moved to May."},
    )  # fmt: skip

    async def stored() -> bool:
        return note in await _stored(db, tenant)

    await eventually(stored)
    version, digest, block, tokens, line_tokens = (await _stored(db, tenant))[note]
    counter = app.state.resources.contexts.counter
    assert version == await _version(client, note) and "The launch moved to May." in block
    assert tokens == counter.count(block) and digest == digest_of(counter.encoding_name, ("plain",))
    assert line_tokens == counter.count("Ada · The launch moved to May.\n")


async def test_the_store_blocks_command_backfills_the_tenants_it_is_given(
    client: httpx.AsyncClient, db: Any, tenant: uuid.UUID, settings: Settings
) -> None:
    await _world(client)
    async with db.begin() as connection:
        await connection.execute(
            text("DELETE FROM record_blocks WHERE owner_id = :owner"), {"owner": tenant}
        )
    assert await backfill_tenants(settings, [tenant]) >= 1
    assert len(await _stored(db, tenant)) == 5
    refused = CliRunner().invoke(cli_app, ["store-blocks", "--tenant", "not-a-uuid"])
    assert refused.exit_code == 2


async def test_the_worker_step_stores_the_block_and_one_that_cannot_render_holds_nothing(
    client: httpx.AsyncClient, app: FastAPI, db: Any, tenant: uuid.UUID,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    builder, handlers = own_worker_steps(app)
    fine = await post(client, schema_name="memo.v1", title="fine", context={"text": "fine memo"})
    broken = await post(client, schema_name="memo.v1", title="broken", context={"text": "memo"})
    await handlers.build_edges({"owner_id": str(tenant), "breadcrumb_id": str(fine)})
    assert "fine memo" in (await _stored(db, tenant))[fine][2]

    refused: list[object] = []

    def refuse(*args: Any) -> Any:
        refused.append(args)
        raise ValueError("cannot render")

    monkeypatch.setattr(builder.transforms, "render", refuse)
    # No exception: the record's edges are built and marked done all the same.
    await handlers.build_edges({"owner_id": str(tenant), "breadcrumb_id": str(broken)})
    query = text(
        "SELECT state FROM record_processing WHERE breadcrumb_id = :id AND stage = 'edged'"
    )
    async with db.connect() as connection:
        assert await connection.scalar(query, {"id": broken}) == "done"
    assert refused
