"""``POST /auth/token``: the admin credential mints for any tenant, a curator for its own
tenant only and never beyond its roles; everyone else is refused."""

from __future__ import annotations

import uuid

import httpx
import jwt
from tests.auth.conftest import ADMIN_TOKEN, AUDIENCE, DEFAULT_TENANT, SECRET, Mint, bearer


async def _mint(
    client: httpx.AsyncClient, credential: str | None, **body: object
) -> httpx.Response:
    headers = bearer(credential) if credential else {}
    body.setdefault("agent_id", f"agent-{uuid.uuid4().hex[:8]}")
    return await client.post("/auth/token", json=body, headers=headers)


def _decoded(token: str) -> dict[str, object]:
    return jwt.decode(token, SECRET, algorithms=["HS256"], audience=AUDIENCE)


async def test_the_admin_credential_mints_for_a_new_tenant(jwt_client: httpx.AsyncClient) -> None:
    tenant = uuid.uuid4()
    name = f"tenant-{tenant.hex[:8]}"
    response = await _mint(
        jwt_client, ADMIN_TOKEN, owner_id=str(tenant), roles=["curator"], tenant_name=name
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["owner_id"] == str(tenant) and body["roles"] == ["curator"]
    claims = _decoded(body["token"])
    assert claims["owner_id"] == str(tenant) and claims["sub"] == body["agent_id"]
    assert claims["exp"] == body["exp"]
    # The token works, and the tenant and the agent exist.
    tenants = await jwt_client.get("/tenants", headers=bearer(body["token"]))
    assert tenants.status_code == 200 and tenants.json()[0]["name"] == name
    agent = await jwt_client.get(f"/agents/{body['agent_id']}", headers=bearer(body["token"]))
    assert agent.status_code == 200 and agent.json()["roles"] == ["curator"]


async def test_admin_minting_defaults_to_the_default_tenant_and_every_role(
    jwt_client: httpx.AsyncClient,
) -> None:
    response = await _mint(jwt_client, ADMIN_TOKEN)
    assert response.status_code == 200, response.text
    assert response.json()["owner_id"] == str(DEFAULT_TENANT)
    assert response.json()["roles"] == ["subscriber", "emitter", "curator"]


async def test_minting_without_a_credential_gets_401(jwt_client: httpx.AsyncClient) -> None:
    response = await _mint(jwt_client, None, owner_id=str(uuid.uuid4()))
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"] == "Bearer"


async def test_a_wrong_admin_credential_gets_401(jwt_client: httpx.AsyncClient) -> None:
    response = await _mint(jwt_client, ADMIN_TOKEN + "x", owner_id=str(uuid.uuid4()))
    assert response.status_code == 401


async def test_emitters_and_subscribers_cannot_mint(
    jwt_client: httpx.AsyncClient, mint: Mint
) -> None:
    for roles in (["emitter"], ["subscriber"], ["subscriber", "emitter"]):
        response = await _mint(jwt_client, mint(roles=roles), roles=["subscriber"])
        assert response.status_code == 403, (roles, response.text)


async def test_a_curator_mints_for_its_own_tenant(
    jwt_client: httpx.AsyncClient, mint: Mint
) -> None:
    tenant = uuid.uuid4()
    response = await _mint(jwt_client, mint(owner_id=tenant), roles=["emitter"])
    assert response.status_code == 200, response.text
    assert _decoded(response.json()["token"])["owner_id"] == str(tenant)
    assert response.json()["roles"] == ["emitter"]


async def test_a_curator_cannot_mint_for_another_tenant(
    jwt_client: httpx.AsyncClient, mint: Mint
) -> None:
    curator = mint(owner_id=uuid.uuid4())
    response = await _mint(jwt_client, curator, owner_id=str(uuid.uuid4()))
    assert response.status_code == 403


async def test_a_minted_token_never_has_more_roles_than_its_minter(
    jwt_client: httpx.AsyncClient, mint: Mint
) -> None:
    # A curator token without the curator role is impossible, so the check is on the
    # minter's roles: minting from the curator's own minted subscriber token is refused.
    curator = mint(owner_id=uuid.uuid4())
    sub = (await _mint(jwt_client, curator, roles=["subscriber"])).json()["token"]
    response = await _mint(jwt_client, sub, roles=["curator"])
    assert response.status_code == 403


async def test_a_ttl_over_the_maximum_is_refused(jwt_client: httpx.AsyncClient) -> None:
    response = await _mint(jwt_client, ADMIN_TOKEN, ttl_sec=10 * 365 * 24 * 3600)
    assert response.status_code == 422


async def test_bad_mint_bodies_get_422(jwt_client: httpx.AsyncClient) -> None:
    bodies = [
        {"agent_id": "bad agent"},
        {"agent_id": "a", "roles": ["root"]},
        {"agent_id": "a", "owner_id": "nope"},
        {"agent_id": "a", "ttl_sec": 1},
    ]
    for body in bodies:
        response = await jwt_client.post("/auth/token", json=body, headers=bearer(ADMIN_TOKEN))
        assert response.status_code == 422, (body, response.text)


async def test_a_taken_tenant_name_is_a_conflict(jwt_client: httpx.AsyncClient) -> None:
    name = f"taken-{uuid.uuid4().hex[:8]}"
    first = await _mint(jwt_client, ADMIN_TOKEN, owner_id=str(uuid.uuid4()), tenant_name=name)
    assert first.status_code == 200
    second = await _mint(jwt_client, ADMIN_TOKEN, owner_id=str(uuid.uuid4()), tenant_name=name)
    assert second.status_code == 409, second.text


async def test_minting_with_auth_disabled_is_a_400(client: httpx.AsyncClient) -> None:
    response = await client.post("/auth/token", json={"agent_id": "a"})
    assert response.status_code == 400
