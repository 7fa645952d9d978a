"""Token verification over HTTP: anything but a valid, unexpired token for this issuer and
audience, signed with the configured key, gets 401 with ``WWW-Authenticate: Bearer``."""

from __future__ import annotations

import base64
import json
import uuid

import httpx
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from tests.auth.conftest import SECRET, Mint, bearer, claims, sign

PROBE = "/breadcrumbs?limit=1"


async def _status(client: httpx.AsyncClient, token: str) -> httpx.Response:
    return await client.get(PROBE, headers=bearer(token))


def _unsigned(payload: dict[str, object]) -> str:
    def part(data: dict[str, object]) -> str:
        return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()

    return f"{part({'alg': 'none', 'typ': 'JWT'})}.{part(payload)}."


async def test_a_valid_token_is_accepted(jwt_client: httpx.AsyncClient, mint: Mint) -> None:
    response = await _status(jwt_client, mint(roles=["subscriber"]))
    assert response.status_code == 200, response.text


async def test_no_token_gets_401_with_a_bearer_challenge(jwt_client: httpx.AsyncClient) -> None:
    response = await jwt_client.get(PROBE)
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"] == "Bearer"
    assert response.json()["error"] == "unauthorized"


@pytest.mark.parametrize(
    ("case", "token"),
    [
        ("forged signature", sign(claims(), key="another-secret-0123456789-0123456789")),
        ("expired", sign(claims(exp=1_600_000_000, iat=1_599_999_000))),
        ("wrong audience", sign(claims(aud="someone-else"))),
        ("no audience", sign(claims(aud=None))),
        ("wrong issuer", sign(claims(iss="https://elsewhere.example"))),
        ("no issuer", sign(claims(iss=None))),
        ("missing exp", sign(claims(exp=None))),
        ("missing sub", sign({k: v for k, v in claims().items() if k != "sub"})),
        ("sub not an agent id", sign(claims(sub="has spaces and /slashes"))),
        ("alg none", _unsigned(claims())),
        ("not before in the future", sign(claims(nbf=4_000_000_000))),
        ("owner_id not a uuid", sign(claims(owner_id="tenant-a"))),
        ("unknown role", sign(claims(roles=["root"]))),
        ("no roles", sign(claims(roles=[]))),
        ("garbage", "not-a-jwt"),
        ("admin credential is not a token", "test-admin-credential-0123456789"),
    ],
)
async def test_bad_tokens_get_401(jwt_client: httpx.AsyncClient, case: str, token: str) -> None:
    response = await _status(jwt_client, token)
    assert response.status_code == 401, (case, response.text)
    assert response.headers["WWW-Authenticate"] == "Bearer"
    assert response.json()["error"] == "unauthorized"


async def test_a_token_naming_an_unknown_key_gets_401(jwt_client: httpx.AsyncClient) -> None:
    import jwt

    token = jwt.encode(claims(), SECRET, algorithm="HS256", headers={"kid": "0123456789abcdef"})
    assert (await _status(jwt_client, token)).status_code == 401


async def test_an_rs256_token_is_refused_by_an_hs256_server(jwt_client: httpx.AsyncClient) -> None:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    token = sign(claims(), key=pem.decode(), algorithm="RS256")
    assert (await _status(jwt_client, token)).status_code == 401


async def test_a_recently_expired_token_within_the_leeway_is_accepted(
    jwt_client: httpx.AsyncClient,
) -> None:
    import time

    now = int(time.time())
    token = sign(claims(exp=now - 2, iat=now - 60))  # leeway is 5 s in these tests
    assert (await _status(jwt_client, token)).status_code == 200


async def test_a_token_for_a_new_tenant_creates_its_row(
    jwt_client: httpx.AsyncClient, mint: Mint
) -> None:
    tenant = uuid.uuid4()
    token = mint(owner_id=tenant, roles=["emitter"])
    response = await jwt_client.post(
        "/breadcrumbs",
        headers=bearer(token),
        json={"schema_name": "note.v1", "title": "first", "tags": [], "context": {}},
    )
    assert response.status_code == 201, response.text


async def test_the_query_token_is_refused_outside_the_event_stream(
    jwt_client: httpx.AsyncClient, mint: Mint
) -> None:
    token = mint(roles=["subscriber"])
    response = await jwt_client.get(PROBE, params={"access_token": token})
    assert response.status_code == 401
