"""The dead-letter queue over HTTP: list, delete, retry; all scoped to the caller's tenant."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
from sqlalchemy import insert, select
from sqlalchemy.ext.asyncio import AsyncEngine
from tests.waiting import eventually
from tests.webhooks.receiver import Receiver
from tests.webhooks.test_delivery import SECRET, dead_letters, post, register

from cairn.db.models import agent_secrets, webhook_dlq, webhooks

OTHER_TENANT = uuid.UUID("00000000-0000-0000-0000-0000000000ff")


async def dead_letter_for(
    client: httpx.AsyncClient, receiver: Receiver, marker: str, db: AsyncEngine
) -> dict[str, Any]:
    """A real DLQ entry: an event the receiver refused three times."""
    receiver.always_fail = True
    hook_id = await register(client, receiver.url, {"any_tags": [marker]})
    await post(client, marker)

    async def dead_lettered() -> bool:
        return len(await dead_letters(db, hook_id)) == 1

    await eventually(dead_lettered)
    listed = (await client.get("/dlq")).json()
    [entry] = [item for item in listed if item["webhook_id"] == hook_id]
    return dict(entry)


async def insert_foreign_entry(db: AsyncEngine, url: str) -> uuid.UUID:
    entry_id = uuid.uuid4()
    values = {
        "id": entry_id,
        "owner_id": OTHER_TENANT,
        "webhook_id": uuid.uuid4(),
        "agent_id": "theirs",
        "url": url,
        "event_id": str(uuid.uuid4()),
        "payload": {"owner_id": str(OTHER_TENANT)},
        "attempts": 3,
        "last_error": "HTTP 500",
    }
    async with db.begin() as connection:
        await connection.execute(insert(webhook_dlq).values(**values))
    return entry_id


async def test_list_shows_the_entry_newest_first(
    client: httpx.AsyncClient, receiver: Receiver, marker: str, db: AsyncEngine
) -> None:
    older = await dead_letter_for(client, receiver, f"{marker}-older", db)
    newer = await dead_letter_for(client, receiver, f"{marker}-newer", db)

    listed = (await client.get("/dlq", params={"limit": 2})).json()

    assert [item["id"] for item in listed] == [newer["id"], older["id"]]
    assert newer["attempts"] == 3 and newer["last_error"] == "HTTP 500: no thanks"
    assert newer["payload"]["tags"] == [f"{marker}-newer"] and newer["requeued"] is False
    assert (await client.get("/dlq", params={"limit": 0})).status_code == 422


async def test_delete_removes_the_entry(
    client: httpx.AsyncClient, receiver: Receiver, marker: str, db: AsyncEngine
) -> None:
    entry = await dead_letter_for(client, receiver, marker, db)

    deleted = await client.delete(f"/dlq/{entry['id']}")
    again = await client.delete(f"/dlq/{entry['id']}")

    assert deleted.status_code == 200 and deleted.json() == {"ok": True}
    assert again.status_code == 404 and again.json()["error"] == "not_found"
    assert await dead_letters(db, entry["webhook_id"]) == []


async def test_retry_to_a_healthy_receiver_removes_the_entry(
    client: httpx.AsyncClient, receiver: Receiver, marker: str, db: AsyncEngine
) -> None:
    entry = await dead_letter_for(client, receiver, marker, db)
    receiver.always_fail = False

    response = await client.post(f"/dlq/{entry['id']}/retry")

    assert response.status_code == 202 and response.json() == {"requeued": True}

    async def gone() -> bool:
        return await dead_letters(db, entry["webhook_id"]) == []

    await eventually(gone)
    redelivered = receiver.requests[-1]
    assert redelivered.headers["x-cairn-event-id"] == entry["event_id"]
    assert redelivered.headers["x-cairn-delivery-attempt"] == "4"
    assert redelivered.signed_with(SECRET)
    assert redelivered.event == entry["payload"]


async def test_retry_that_fails_again_keeps_the_entry(
    client: httpx.AsyncClient, receiver: Receiver, marker: str, db: AsyncEngine
) -> None:
    entry = await dead_letter_for(client, receiver, marker, db)

    await client.post(f"/dlq/{entry['id']}/retry")

    async def retried() -> bool:
        [row] = await dead_letters(db, entry["webhook_id"])
        return bool(row["attempts"] == 6)

    await eventually(retried)
    [row] = await dead_letters(db, entry["webhook_id"])
    assert row["requeued_at"] is None and row["last_error"] == "HTTP 500: no thanks"
    assert len(receiver.requests) == 6


async def test_unknown_entry_is_404(client: httpx.AsyncClient) -> None:
    for response in (
        await client.delete(f"/dlq/{uuid.uuid4()}"),
        await client.post(f"/dlq/{uuid.uuid4()}/retry"),
    ):
        assert response.status_code == 404 and response.json()["error"] == "not_found"
    assert (await client.post("/dlq/not-a-uuid/retry")).status_code == 422


async def test_other_tenants_entries_are_invisible(
    client: httpx.AsyncClient, receiver: Receiver, db: AsyncEngine
) -> None:
    entry_id = await insert_foreign_entry(db, receiver.url)

    listed = (await client.get("/dlq", params={"limit": 1000})).json()
    deleted = await client.delete(f"/dlq/{entry_id}")
    retried = await client.post(f"/dlq/{entry_id}/retry")

    assert str(entry_id) not in {item["id"] for item in listed}
    assert deleted.status_code == 404 and retried.status_code == 404
    async with db.connect() as connection:
        query = select(webhook_dlq.c.requeued_at).where(webhook_dlq.c.id == entry_id)
        assert (await connection.execute(query)).one().requeued_at is None


async def test_other_tenants_webhooks_get_none_of_our_events(
    client: httpx.AsyncClient, receiver: Receiver, marker: str, db: AsyncEngine
) -> None:
    theirs = await Receiver().start()
    try:
        async with db.begin() as connection:
            await connection.execute(
                insert(agent_secrets).values(owner_id=OTHER_TENANT, agent_id="theirs", secret="x")
            )
            await connection.execute(
                insert(webhooks).values(
                    id=uuid.uuid4(), owner_id=OTHER_TENANT, agent_id="theirs", url=theirs.url
                )
            )  # no selector: it would take every event of its tenant
        await register(client, receiver.url, {"any_tags": [marker]})

        await post(client, marker)

        await eventually(lambda: len(receiver.requests) == 1)
        assert theirs.requests == []
    finally:
        await theirs.close()
