"""Secrets: envelope encryption round trip, nothing readable in the database, an audit trail
that outlives the secret, and decrypt only for curators or agents granted it."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import uuid

import pytest
from fastapi import FastAPI
from sqlalchemy import text
from tests.processes import REPO
from tests.security.conftest import Caller

from cairn.config import Settings
from cairn.secrets.crypto import Keyring, UndecryptableSecret, new_kek as fresh_kek, parse_kek
from cairn.secrets.service import rewrap_all

PLAINTEXT = "sk-live-4f3c2b1a-the-plaintext-value"


async def _create(client, name: str = "openrouter", **extra: object) -> str:  # type: ignore[no-untyped-def]
    body = {"name": name, "value": PLAINTEXT, "description": "LLM key", **extra}
    response = await client.post("/secrets", json=body)
    assert response.status_code == 201, response.text
    assert "value" not in response.json()
    secret_id: str = response.json()["id"]
    return secret_id


async def test_round_trip_and_only_ciphertext_in_the_database(
    app: FastAPI, as_caller: Caller, tenant_a: uuid.UUID
) -> None:
    async with as_caller(tenant_a) as curator:
        secret_id = await _create(curator)
        decrypted = await curator.post(f"/secrets/{secret_id}/decrypt", json={"reason": "test"})
        assert decrypted.status_code == 200 and decrypted.json()["value"] == PLAINTEXT
    async with app.state.resources.system_engine.connect() as connection:
        row = (
            (
                await connection.execute(
                    text("SELECT * FROM secrets WHERE id = :id"), {"id": secret_id}
                )
            )
            .mappings()
            .one()
        )
    stored = b"".join(bytes(row[c]) for c in ("ciphertext", "wrapped_key", "nonce", "key_nonce"))
    assert PLAINTEXT.encode() not in stored and PLAINTEXT[:12].encode() not in stored
    assert len(row["wrapped_key"]) == 32 + 16  # a 256-bit data key plus its GCM tag


async def test_the_audit_trail_survives_the_delete(as_caller: Caller, tenant_a: uuid.UUID) -> None:
    async with as_caller(tenant_a, "boss") as curator:
        secret_id = await _create(curator)
        await curator.put(f"/secrets/{secret_id}", json={"value": "rotated-value"})
        decrypted = await curator.post(f"/secrets/{secret_id}/decrypt", json={"reason": "deploy"})
        assert decrypted.json()["value"] == "rotated-value"
        assert (await curator.delete(f"/secrets/{secret_id}")).json() == {"ok": True}
        assert (await curator.post(f"/secrets/{secret_id}/decrypt")).status_code == 404
        trail = (await curator.get(f"/secrets/{secret_id}/audit")).json()
    assert [(e["action"], e["actor"]) for e in trail] == [
        ("create", "boss"), ("update", "boss"), ("decrypt", "boss"), ("delete", "boss"),
    ]  # fmt: skip
    assert trail[2]["reason"] == "deploy"


async def test_decrypt_only_for_curators_and_granted_agents(
    as_caller: Caller, tenant_a: uuid.UUID
) -> None:
    async with (
        as_caller(tenant_a, "boss") as curator,
        as_caller(tenant_a, "tool-runner", "subscriber") as granted,
        as_caller(tenant_a, "nosy", "emitter") as other,
    ):
        secret_id = await _create(curator, readers=["tool-runner"])
        assert (await granted.post(f"/secrets/{secret_id}/decrypt")).json()["value"] == PLAINTEXT
        refused = await other.post(f"/secrets/{secret_id}/decrypt", json={"reason": "curious"})
        assert refused.status_code == 403
        trail = (await curator.get(f"/secrets/{secret_id}/audit")).json()
        assert [(e["action"], e["actor"], e["reason"]) for e in trail][-2:] == [
            ("decrypt", "tool-runner", None), ("decrypt_denied", "nosy", "curious"),
        ]  # fmt: skip
        assert [s["id"] for s in (await granted.get("/secrets")).json()] == [secret_id]
        assert (await other.get("/secrets")).json() == []
        assert (await other.get(f"/secrets/{secret_id}")).status_code == 404
        for method, path in (("PUT", ""), ("DELETE", ""), ("GET", "/audit")):
            body = {"value": "x"} if method == "PUT" else None
            response = await granted.request(method, f"/secrets/{secret_id}{path}", json=body)
            assert response.status_code == 403, (method, path)


async def test_an_agent_scoped_secret_is_that_agents(
    as_caller: Caller, tenant_a: uuid.UUID
) -> None:
    async with (
        as_caller(tenant_a, "boss") as curator,
        as_caller(tenant_a, "mailer", "subscriber") as mailer,
    ):
        secret_id = await _create(curator, scope_type="agent", scope_id="mailer")
        assert (await mailer.post(f"/secrets/{secret_id}/decrypt")).json()["value"] == PLAINTEXT


async def test_another_tenant_gets_404_on_every_secret_route(
    as_caller: Caller, tenant_a: uuid.UUID, tenant_b: uuid.UUID
) -> None:
    async with as_caller(tenant_a) as a, as_caller(tenant_b) as b:
        secret_id = await _create(a)
        for method, path, body in (
            ("GET", "", None), ("PUT", "", {"value": "x"}), ("DELETE", "", None),
            ("POST", "/decrypt", None), ("GET", "/audit", None),
        ):  # fmt: skip
            response = await b.request(method, f"/secrets/{secret_id}{path}", json=body)
            assert response.status_code == 404, (method, path, response.text)
        assert (await b.get("/secrets")).json() == []
        assert (await a.post(f"/secrets/{secret_id}/decrypt")).json()["value"] == PLAINTEXT


@pytest.mark.parametrize(
    "body",
    [
        {"name": "", "value": "v"},
        {"name": "a b", "value": "v"},
        {"name": "k", "value": ""},
        {"name": "k", "value": "v", "scope_type": "agent"},
        {"name": "k", "value": "v", "scope_type": "galaxy", "scope_id": "x"},
        {"name": "k", "value": "v", "readers": ["not an agent id"]},
        {"name": "k", "value": "v", "unknown": 1},
        {"name": "k", "value": "x" * (64 * 1024 + 1)},
        {"name": "k", "value": "nul\u0000inside"},
        '{"name": "k", "value": "v", "description": "lone \\ud800 surrogate"}',
    ],
)
async def test_bad_input_gets_4xx(
    as_caller: Caller, tenant_a: uuid.UUID, body: dict[str, object] | str
) -> None:
    raw = {"content": body, "headers": {"content-type": "application/json"}}
    async with as_caller(tenant_a) as curator:
        sent = raw if isinstance(body, str) else {"json": body}
        response = await curator.post("/secrets", **sent)  # type: ignore[arg-type]
    assert 400 <= response.status_code < 500, response.text


async def test_a_duplicate_name_in_a_scope_is_409(as_caller: Caller, tenant_a: uuid.UUID) -> None:
    async with as_caller(tenant_a) as curator:
        await _create(curator, name="dup")
        response = await curator.post("/secrets", json={"name": "dup", "value": "v"})
    assert response.status_code == 409


def test_kek_rotation_rewraps_without_reencrypting() -> None:
    old, new = parse_kek(fresh_kek()), parse_kek(fresh_kek())
    owner, secret = uuid.uuid4(), uuid.uuid4()
    sealed = Keyring(old).seal(b"value", owner, secret)
    rotating = Keyring(new, [old])
    rewrapped = rotating.rewrap(sealed, owner, secret)
    assert rewrapped.ciphertext == sealed.ciphertext and rewrapped.kek_id == rotating.current_id
    assert Keyring(new).open(rewrapped, owner, secret) == b"value"
    with pytest.raises(UndecryptableSecret):
        Keyring(new).open(sealed, owner, secret)  # the old wrapping needs the old KEK
    with pytest.raises(UndecryptableSecret):
        rotating.open(rewrapped, owner, uuid.uuid4())  # bound to its id


async def test_rotate_kek_rewraps_every_stored_data_key(
    app: FastAPI, as_caller: Caller, tenant_a: uuid.UUID, settings: Settings
) -> None:
    current = parse_kek(settings.secrets.kek.get_secret_value())  # type: ignore[union-attr]
    newer = parse_kek(fresh_kek())
    async with as_caller(tenant_a) as curator:
        secret_id = await _create(curator, name="rotated")
        sessions = app.state.resources.system_sessions  # what `cairn rotate-kek` runs as
        async with sessions() as session, session.begin():
            assert await rewrap_all(session, Keyring(newer, [current])) >= 1
        async with app.state.resources.system_engine.connect() as connection:
            query = text("SELECT kek_id FROM secrets WHERE id = :id")
            assert await connection.scalar(query, {"id": secret_id}) == Keyring(newer).current_id
        # This server only knows the old KEK now: a clear 503, not a 500 or a wrong value.
        assert (await curator.post(f"/secrets/{secret_id}/decrypt")).status_code == 503
        async with sessions() as session, session.begin():  # and back, for the other tests
            await rewrap_all(session, Keyring(current, [newer]))
        decrypted = await curator.post(f"/secrets/{secret_id}/decrypt")
    assert decrypted.json()["value"] == PLAINTEXT


def _rotate(settings: Settings, kek: str, previous: str) -> str:
    env = {
        **os.environ,
        "CAIRN_ADMIN_DATABASE_URL": str(settings.admin_database_url),
        "DATABASE_URL": str(settings.database_url),
        "CAIRN_SECRETS__KEK": kek,
        "CAIRN_SECRETS__PREVIOUS_KEKS": json.dumps([previous]),
    }
    done = subprocess.run(
        [str(REPO / ".venv/bin/cairn"), "rotate-kek"],
        capture_output=True, text=True, timeout=60, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


async def test_the_rotate_kek_command_round_trip(
    as_caller: Caller, tenant_a: uuid.UUID, settings: Settings
) -> None:
    current = settings.secrets.kek.get_secret_value()  # type: ignore[union-attr]
    newer = fresh_kek()
    async with as_caller(tenant_a) as curator:
        secret_id = await _create(curator, name="cli-rotated")
        out = await asyncio.to_thread(_rotate, settings, newer, current)
        assert "data keys re-wrapped" in out and not out.startswith("0 ")
        assert (await curator.post(f"/secrets/{secret_id}/decrypt")).status_code == 503
        await asyncio.to_thread(_rotate, settings, current, newer)
        decrypted = await curator.post(f"/secrets/{secret_id}/decrypt")
    assert decrypted.json()["value"] == PLAINTEXT
