"""RCRT's admin routes as RCRT's SDK reads them (``listAgents``, ``getAgent``): each agent
carries RCRT's ``id`` beside Cairn's ``agent_id``."""

from __future__ import annotations

import uuid

import httpx
from tests.auth.conftest import Mint, bearer


async def test_agents_carry_rcrt_id(jwt_client: httpx.AsyncClient, mint: Mint) -> None:
    curator = bearer(mint(owner_id=uuid.uuid4(), roles=["curator"]))
    agent = f"00000000-0000-0000-0000-{uuid.uuid4().hex[:12]}"  # RCRT's agent ids are UUIDs
    registered = await jwt_client.post(
        f"/agents/{agent}", json={"roles": ["emitter"]}, headers=curator
    )
    assert registered.status_code == 200, registered.text

    one = (await jwt_client.get(f"/agents/{agent}", headers=curator)).json()
    listed = (await jwt_client.get("/agents", headers=curator)).json()

    assert one["id"] == one["agent_id"] == agent and one["roles"] == ["emitter"]
    assert [row["id"] for row in listed if row["agent_id"] == agent] == [agent]
    assert all(row["id"] == row["agent_id"] for row in listed)
