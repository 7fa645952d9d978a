"""``CAIRN_COMPAT__OPEN_MINTING``: RCRT's runners mint their tokens with no credential
(``POST /auth/token`` with ``{owner_id, agent_id, roles}``, JSON, no Authorization). Off by
default; on, it is refused off loopback unless forced too, and logged."""

from __future__ import annotations

import logging
import uuid

import httpx
import pytest
from fastapi import FastAPI

from cairn.auth.service import check_open_minting
from cairn.config import CompatSettings, Settings
from cairn.errors import ConfigurationError


def _runner_request(owner_id: uuid.UUID, agent_id: str) -> dict[str, object]:
    return {"owner_id": str(owner_id), "agent_id": agent_id, "roles": ["emitter", "subscriber"]}


async def test_open_minting_lets_an_rcrt_runner_mint_its_token(
    jwt_app: FastAPI, jwt_client: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    owner, agent = uuid.uuid4(), str(uuid.uuid4())
    body = _runner_request(owner, agent)
    assert (await jwt_client.post("/auth/token", json=body)).status_code == 401  # the default

    compat = jwt_app.state.resources.settings.compat
    compat.open_minting = True
    try:
        with caplog.at_level(logging.WARNING, logger="cairn.auth.endpoints"):
            minted = await jwt_client.post("/auth/token", json=body)
    finally:
        compat.open_minting = False

    assert minted.status_code == 200, minted.text
    assert minted.json()["owner_id"] == str(owner) and minted.json()["agent_id"] == agent
    assert any("without a credential" in record.message for record in caplog.records)
    token = {"Authorization": f"Bearer {minted.json()['token']}"}
    assert (await jwt_client.get("/breadcrumbs", headers=token)).status_code == 200


def _settings(host: str, **compat: bool) -> Settings:
    return Settings(auth="jwt", host=host, compat=CompatSettings(open_minting=True, **compat))


def test_open_minting_is_refused_off_loopback_unless_forced(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with pytest.raises(ConfigurationError, match="loopback"):
        check_open_minting(_settings("0.0.0.0"))
    with caplog.at_level(logging.WARNING, logger="cairn.auth.service"):
        check_open_minting(_settings("0.0.0.0", open_minting_off_loopback=True))
        check_open_minting(_settings("127.0.0.1"))
    assert sum("OPEN_MINTING is on" in record.message for record in caplog.records) == 2
