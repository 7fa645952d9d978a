"""Record-level access over HTTP: other tenants get 404 (existence is not revealed), agents
change only what they created unless a curator or an ACL entry allows it."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest
from tests.factories import breadcrumb
from tests.security.conftest import Caller

# Every route that names one record, with a body that would be valid for the owner.
BY_ID: list[tuple[str, str, dict[str, Any] | None]] = [
    ("GET", "/breadcrumbs/{id}", None),
    ("GET", "/breadcrumbs/{id}/full", None),
    ("GET", "/breadcrumbs/{id}/history", None),
    ("PATCH", "/breadcrumbs/{id}", {"title": "taken over"}),
    ("DELETE", "/breadcrumbs/{id}", None),
    ("POST", "/breadcrumbs/{id}/tags/add", {"tags": ["stolen"]}),
    ("POST", "/breadcrumbs/{id}/tags/remove", {"tags": ["deploy"]}),
    ("POST", "/breadcrumbs/{id}/context/merge", {"context": {"text": "overwritten"}}),
    ("POST", "/breadcrumbs/{id}/approve", None),
    ("POST", "/breadcrumbs/{id}/reject", None),
    ("GET", "/breadcrumbs/{id}/acl", None),
    ("POST", "/breadcrumbs/{id}/acl", {"grantee_agent_id": "thief", "action": "update"}),
]
# What an emitter may do to its own records (approve/reject and ACLs are curators' only).
WRITES = [(m, p, b) for m, p, b in BY_ID if (m != "GET" and p.count("/") == 2) or "tags" in p]
WRITES = [w for w in WRITES if not w[1].endswith(("/approve", "/reject", "/acl"))]


async def _create(client: httpx.AsyncClient, **overrides: Any) -> str:
    response = await client.post("/breadcrumbs", json=breadcrumb(**overrides))
    assert response.status_code == 201, response.text
    record_id: str = response.json()["id"]
    return record_id


async def _call(
    client: httpx.AsyncClient, method: str, path: str, body: dict[str, Any] | None, record: str
) -> httpx.Response:
    return await client.request(method, path.format(id=record), json=body)


async def test_another_tenant_gets_404_on_every_route_by_id(
    as_caller: Caller, tenant_a: uuid.UUID, tenant_b: uuid.UUID
) -> None:
    async with as_caller(tenant_a) as a, as_caller(tenant_b) as b:
        record = await _create(a, title="tenant a's record")
        before = (await a.get(f"/breadcrumbs/{record}/full")).json()
        for method, path, body in BY_ID:
            response = await _call(b, method, path, body, record)
            assert response.status_code == 404, (method, path, response.text)
        after = (await a.get(f"/breadcrumbs/{record}/full")).json()
    assert after == before


async def test_another_tenant_lists_and_searches_none_of_its_records(
    as_caller: Caller, tenant_a: uuid.UUID, tenant_b: uuid.UUID, marker: str
) -> None:
    async with as_caller(tenant_a) as a, as_caller(tenant_b) as b:
        await _create(a, title="Oslo quarterly numbers", tags=[marker])
        assert len((await a.get("/breadcrumbs", params={"tag": marker})).json()) == 1
        assert (await b.get("/breadcrumbs", params={"tag": marker})).json() == []
        hits = (await b.get("/breadcrumbs/search", params={"q": "Oslo quarterly numbers"})).json()
        assert hits == []


@pytest.mark.parametrize(("method", "path", "body"), WRITES)
async def test_an_emitter_cannot_change_another_agents_record(
    as_caller: Caller, tenant_a: uuid.UUID, method: str, path: str, body: dict[str, Any] | None
) -> None:
    async with (
        as_caller(tenant_a, "alice", "emitter") as alice,
        as_caller(tenant_a, "bob", "emitter") as bob,
    ):
        record = await _create(alice)
        response = await _call(bob, method, path, body, record)
        assert response.status_code == 403, response.text
        assert (await bob.get(f"/breadcrumbs/{record}")).status_code == 200  # may read
        response = await _call(alice, method, path, body, record)
        assert response.status_code == 200, response.text


async def test_an_acl_grant_lets_another_agent_update_then_delete(
    as_caller: Caller, tenant_a: uuid.UUID
) -> None:
    async with (
        as_caller(tenant_a, "alice", "emitter") as alice,
        as_caller(tenant_a, "bob", "emitter") as bob,
        as_caller(tenant_a, "boss", "curator") as curator,
    ):
        record = await _create(alice)
        assert (await bob.patch(f"/breadcrumbs/{record}", json={"title": "b"})).status_code == 403
        grant = {"grantee_agent_id": "bob", "action": "update"}
        response = await curator.post(f"/breadcrumbs/{record}/acl", json=grant)
        assert response.status_code == 201, response.text
        assert (await bob.patch(f"/breadcrumbs/{record}", json={"title": "b"})).status_code == 200
        assert (await bob.delete(f"/breadcrumbs/{record}")).status_code == 403  # update only
        grant = {"grantee_agent_id": "bob", "action": "delete"}
        assert (await curator.post(f"/breadcrumbs/{record}/acl", json=grant)).status_code == 201
        assert (await bob.delete(f"/breadcrumbs/{record}")).status_code == 200


async def test_a_curator_changes_any_record_of_its_tenant(
    as_caller: Caller, tenant_a: uuid.UUID
) -> None:
    async with (
        as_caller(tenant_a, "alice", "emitter") as alice,
        as_caller(tenant_a, "boss", "curator") as curator,
    ):
        record = await _create(alice)
        assert (await curator.patch(f"/breadcrumbs/{record}", json={"title": "c"})).is_success
        assert (await curator.delete(f"/breadcrumbs/{record}")).is_success


async def test_read_grants_across_tenants(
    as_caller: Caller, tenant_a: uuid.UUID, tenant_b: uuid.UUID
) -> None:
    async with as_caller(tenant_a) as a, as_caller(tenant_b, "reader", "emitter") as b:
        record = await _create(a, title="shared with b")
        view, full = f"/breadcrumbs/{record}", f"/breadcrumbs/{record}/full"
        assert (await b.get(view)).status_code == 404
        grant = {"breadcrumb_id": record, "grantee_owner_id": str(tenant_b)}
        response = await a.post("/acl/grant", json=grant | {"action": "read_context"})
        assert response.status_code == 200, response.text
        assert (await b.get(view)).json()["title"] == "shared with b"
        assert (await b.get(full)).status_code == 404  # the context view only
        await a.post("/acl/grant", json=grant | {"action": "read_full"})
        assert (await b.get(full)).json()["id"] == record
        # Reading is all a grant across tenants gives: still no way to write.
        assert (await b.patch(view, json={"title": "x"})).status_code == 404
        assert (await b.delete(view)).status_code == 404
        revoked = await a.post("/acl/revoke", json=grant | {"action": "read_full"})
        assert revoked.json() == {"rows": 1}
        assert (await b.get(full)).status_code == 404
        assert (await b.get(view)).status_code == 200


async def test_a_grant_to_one_agent_of_another_tenant_is_that_agents_only(
    as_caller: Caller, tenant_a: uuid.UUID, tenant_b: uuid.UUID
) -> None:
    async with (
        as_caller(tenant_a) as a,
        as_caller(tenant_b, "chosen", "subscriber") as chosen,
        as_caller(tenant_b, "other", "subscriber") as other,
    ):
        record = await _create(a)
        grant = {"grantee_owner_id": str(tenant_b), "grantee_agent_id": "chosen"}
        response = await a.post(f"/breadcrumbs/{record}/acl", json=grant | {"action": "read_full"})
        assert response.status_code == 201
        assert (await chosen.get(f"/breadcrumbs/{record}/full")).status_code == 200
        assert (await other.get(f"/breadcrumbs/{record}/full")).status_code == 404


async def test_acl_routes_validate_and_granting_twice_returns_the_same_entry(
    as_caller: Caller, tenant_a: uuid.UUID, tenant_b: uuid.UUID
) -> None:
    async with as_caller(tenant_a) as a, as_caller(tenant_b) as b:
        record = await _create(a)
        grant = {"breadcrumb_id": record, "grantee_owner_id": str(tenant_b), "action": "read_full"}
        first, again = [(await a.post("/acl/grant", json=grant)).json() for _ in range(2)]
        assert first["id"] == again["id"]
        listed = (await a.get("/acl", params={"breadcrumb_id": record})).json()
        assert [entry["id"] for entry in listed] == [first["id"]]
        assert listed[0]["actions"] == ["read_full"] == [listed[0]["action"]]  # RCRT's list
        assert (await b.get("/acl", params={"breadcrumb_id": record})).status_code == 404
        assert (await b.delete(f"/acl/{first['id']}")).status_code == 404  # not b's entry
        for bad in (
            grant | {"action": "own"},  # not an action
            grant | {"action": "update"},  # writes never cross tenants
            grant | {"grantee_owner_id": "not-a-uuid"},
            {"breadcrumb_id": record, "action": "read_full"},  # the whole own tenant reads
            grant | {"grantee_agent_id": "bad agent id"},
        ):
            assert (await a.post("/acl/grant", json=bad)).status_code == 422, bad
        assert (
            await a.post("/acl/grant", json=grant | {"breadcrumb_id": str(uuid.uuid4())})
        ).status_code == 404
        assert (await a.delete(f"/acl/{first['id']}")).json() == {"ok": True}
        assert (await b.get(f"/breadcrumbs/{record}/full")).status_code == 404
