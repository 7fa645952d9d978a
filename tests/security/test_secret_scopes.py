"""``GET /secrets?scope_type=&scope_id=`` filters (a tool must not pick another scope's
secret), and RCRT's ``tenant`` scope, as RCRT's SDK sends them (``listSecrets``,
``createSecret(name, value, scope_type, scope_id)``)."""

from __future__ import annotations

import uuid

from tests.security.conftest import Caller


async def _create(client, name: str, scope_type: str | None, scope_id: str | None = None) -> dict:  # type: ignore[no-untyped-def]
    body = {"name": name, "value": "v-" + name, "scope_type": scope_type, "scope_id": scope_id}
    response = await client.post("/secrets", json={k: v for k, v in body.items() if v})
    assert response.status_code == 201, response.text
    created: dict = response.json()  # type: ignore[type-arg]
    return created


async def test_listing_filters_by_scope(as_caller: Caller, tenant_a: uuid.UUID) -> None:
    async with as_caller(tenant_a) as curator:
        shared = await _create(curator, "shared", None)
        ws1 = await _create(curator, "key", "workspace", "ws-1")
        ws2 = await _create(curator, "key", "workspace", "ws-2")
        mine = await _create(curator, "key", "agent", "tool-a")

        async def names(**params: str) -> list[str]:
            response = await curator.get("/secrets", params=params)
            assert response.status_code == 200, response.text
            return [secret["id"] for secret in response.json()]

        assert await names(scope_type="workspace", scope_id="ws-1") == [ws1["id"]]
        assert sorted(await names(scope_type="workspace")) == sorted([ws1["id"], ws2["id"]])
        assert await names(scope_type="agent", scope_id="tool-a") == [mine["id"]]
        assert await names(scope_type="global") == [shared["id"]]
        assert await names(scope_type="tenant", scope_id=str(tenant_a)) == [shared["id"]]
        assert len(await names()) == 4


async def test_tenant_scope_is_the_callers_tenant(
    as_caller: Caller, tenant_a: uuid.UUID, tenant_b: uuid.UUID
) -> None:
    async with as_caller(tenant_a) as curator:
        created = await _create(curator, "rcrt-tenant", "tenant", str(tenant_a))
        assert (created["scope_type"], created["scope_id"]) == ("global", None)
        foreign = await curator.post(
            "/secrets",
            json={"name": "x", "value": "v", "scope_type": "tenant", "scope_id": str(tenant_b)},
        )
        assert foreign.status_code == 422, foreign.text
        listed = await curator.get(
            "/secrets", params={"scope_type": "tenant", "scope_id": str(tenant_b)}
        )
        assert listed.status_code == 200 and listed.json() == []
    async with as_caller(tenant_b) as other:
        assert (await other.get("/secrets", params={"scope_type": "tenant"})).json() == []


async def test_a_bad_scope_filter_is_422(as_caller: Caller, tenant_a: uuid.UUID) -> None:
    async with as_caller(tenant_a) as curator:
        for params in ({"scope_type": "planet"}, {"scope_id": "has space"}):
            response = await curator.get("/secrets", params=params)
            assert response.status_code == 422, (params, response.text)
            assert set(response.json()) == {"error", "detail"}
