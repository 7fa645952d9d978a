"""A debug path is linked to the records that stand for the files it touched (tagged
``file:<path>``), real database, through ``Handlers.track_paths``."""

from __future__ import annotations

import uuid

import httpx
from fastapi import FastAPI
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine
from tests.assembly.helpers import post
from tests.paths.test_tracking import FAILING, _edit, _event, _paths_of, _record

from cairn.edges.builder import TAG
from cairn.worker.handlers import Handlers


async def _note(client: httpx.AsyncClient, file: str) -> uuid.UUID:
    return await post(client, schema_name="note.v1", title=f"About {file}",
                      tags=[f"file:{file}"], context={"text": "mind the rounding"})  # fmt: skip


async def test_a_path_is_linked_to_the_records_of_the_files_it_touched(
    handlers: Handlers, client: httpx.AsyncClient, app: FastAPI, db: AsyncEngine
) -> None:
    names = ("src/cart.py", "tests/test_cart.py", "src/x.py")
    cart, tests, other = [await _note(client, name) for name in names]
    session = f"session:{uuid.uuid4().hex[:8]}"
    for context in (FAILING, _edit(10)):  # the error names the test file, the edit the source
        await handlers.track_paths(await _event(app, await _record(client, session, dict(context))))
    (path,) = await _paths_of(db, session)
    query = text("SELECT to_id FROM breadcrumb_edges WHERE from_id = :path AND edge_type = :tag")
    async with db.connect() as connection:
        linked = {
            row.to_id for row in await connection.execute(query, {"path": path.id, "tag": TAG})
        }
    assert {cart, tests} <= linked and other not in linked
