"""A change's history row and outbox event are what the record as stored says they are."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine
from tests.dbcheck import published_events
from tests.factories import breadcrumb

_STORED = text(
    "SELECT b.*, h.version AS h_version, h.title AS h_title, h.tags AS h_tags,"
    " h.context AS h_context, h.checksum AS h_checksum, h.change AS h_change,"
    " h.updated_at AS h_updated_at, h.updated_by AS h_updated_by, h.owner_id AS h_owner_id"
    " FROM breadcrumbs b JOIN breadcrumb_history h ON h.breadcrumb_id = b.id"
    " AND h.version = b.version WHERE b.id = :id"
)


async def _check_last_change(db: AsyncEngine, record_id: str, change: str, **extra: Any) -> None:
    async with db.connect() as connection:
        row = (await connection.execute(_STORED, {"id": record_id})).mappings().one()
    event, published = (await published_events(db, record_id))[-1]
    history = {key[2:]: row[key] for key in row if key.startswith("h_")}
    assert history == {
        key: row[key]
        for key in ("version", "title", "tags", "context", "checksum", "updated_at", "owner_id")
    } | {"change": change, "updated_by": row["updated_by"]}
    kind = "created" if change == "create" else "updated"
    assert event.subject == f"bc.{record_id}.{kind}"
    assert event.owner_id == row["owner_id"]
    assert published == {
        "type": f"breadcrumb.{kind}",
        "event_id": str(event.msg_id),
        "breadcrumb_id": record_id,
        "owner_id": str(row["owner_id"]),
        "version": row["version"],
        "schema_name": row["schema_name"],
        "title": row["title"],
        "tags": list(row["tags"]),
        "updated_at": row["updated_at"].isoformat(),
        "context": row["context"],
        "change": change,
        **extra,
    }


async def test_a_create_and_its_changes_write_the_stored_record(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    context = {"text": "nested", "n": [1, 2.5, {"z": None, "a": True}], "ü": "ß"}
    body = breadcrumb(title=f"rows {uuid.uuid4().hex[:6]}", tags=["b", "a"], context=context)
    created = (await client.post("/breadcrumbs", json=body)).json()
    record_id = created["id"]
    await _check_last_change(db, record_id, "create")
    url = f"/breadcrumbs/{record_id}"
    assert (await client.patch(url, json={"title": "renamed"})).status_code == 200
    await _check_last_change(db, record_id, "update")
    reason = {"reason": "not about this project"}
    assert (await client.post(f"{url}/reject", json=reason)).status_code == 200
    await _check_last_change(db, record_id, "reject", **reason)
