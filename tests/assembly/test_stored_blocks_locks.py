"""The worker's edge step and a concurrent update of the same record take their locks in
one order: the update locks the record, then its processing row; the step stores the
record's block (a key-share lock on the record) only after its own transaction, which
wrote that processing row, has committed. Storing it inside the step deadlocked."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import httpx
from fastapi import FastAPI
from sqlalchemy import text
from tests.assembly.helpers import own_worker_steps, post
from tests.waiting import eventually

WAITING = text(
    "SELECT count(*) FROM pg_stat_activity"
    " WHERE wait_event_type = 'Lock' AND query LIKE '%record_blocks%'"
)


async def test_the_edge_step_and_a_concurrent_update_of_its_record_do_not_deadlock(
    client: httpx.AsyncClient, app: FastAPI, db: Any, tenant: uuid.UUID, worker: None
) -> None:
    _, handlers = own_worker_steps(app)
    note = await post(client, schema_name="memo.v1", title="locks", context={"text": "a memo"})
    ids = {"id": note}

    async def edged() -> bool:  # the session's own worker is done with it
        async with db.connect() as connection:
            done = await connection.scalar(
                text(
                    "SELECT count(*) FROM record_processing"
                    " WHERE breadcrumb_id = :id AND stage = 'edged' AND state = 'done'"
                ),
                ids,
            )
            stored = await connection.scalar(
                text("SELECT count(*) FROM record_blocks WHERE record_id = :id"), ids
            )
        return bool(done and stored)

    await eventually(edged)
    async with db.begin() as connection:  # so that the step inserts its block again
        await connection.execute(text("DELETE FROM record_blocks WHERE record_id = :id"), ids)

    async with db.connect() as update:
        # As an update does: the record locked, then (below) its processing row written.
        await update.execute(text("SELECT 1 FROM breadcrumbs WHERE id = :id FOR UPDATE"), ids)
        step = asyncio.create_task(
            handlers.build_edges({"owner_id": str(tenant), "breadcrumb_id": str(note)})
        )

        async def blocked() -> bool:
            async with db.connect() as connection:
                return bool(await connection.scalar(WAITING))

        await eventually(blocked)  # the block's insert waits for the record
        await update.execute(
            text(
                "UPDATE record_processing SET updated_at = now()"
                " WHERE breadcrumb_id = :id AND stage = 'edged'"
            ),
            ids,
        )
        await update.commit()
    await asyncio.wait_for(step, timeout=30)
    assert await edged()
