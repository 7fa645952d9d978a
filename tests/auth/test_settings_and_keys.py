"""Settings that cannot serve safely are refused before anything starts; keys load from the
environment, files or the data directory; rotation keeps the previous key verifying."""

from __future__ import annotations

import os
import stat
import subprocess
import uuid
from pathlib import Path

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from tests.processes import REPO

from cairn.api.app import create_app
from cairn.auth.keys import ensure_generated_key, load_keys
from cairn.auth.local import mint_local, prepare_key
from cairn.auth.service import check_bind, is_loopback
from cairn.auth.tokens import Tokens
from cairn.config import JwtSettings, Settings
from cairn.errors import ConfigurationError, Unauthorized
from cairn.principal import Role

SECRET = "s" * 40
OLD_SECRET = "o" * 40


def _settings(tmp_path: Path, **jwt: object) -> Settings:
    return Settings(data_dir=tmp_path, auth="jwt", jwt=JwtSettings(**jwt))  # type: ignore[arg-type]


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost"])
def test_loopback_addresses(host: str) -> None:
    assert is_loopback(host)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "10.0.0.5", "cairn.example.com", ""])
def test_other_addresses_are_not_loopback(host: str) -> None:
    assert not is_loopback(host)


def test_auth_disabled_off_loopback_refuses_to_build_the_app() -> None:
    with pytest.raises(ConfigurationError, match="loopback"):
        create_app(Settings(host="0.0.0.0", database_url="postgresql+asyncpg://x/y"))
    check_bind(Settings(host="0.0.0.0", auth="jwt"))  # with tokens, any address


def test_cairn_serve_with_auth_disabled_on_all_interfaces_exits_with_the_reason() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CAIRN_")}
    env["CAIRN_AUTH"] = "disabled"
    result = subprocess.run(
        [str(REPO / ".venv/bin/cairn"), "serve", "--host", "0.0.0.0"],
        capture_output=True, text=True, timeout=60, env=env, check=False,
    )  # fmt: skip
    assert result.returncode == 2
    assert "CAIRN_AUTH=disabled" in result.stderr and "loopback" in result.stderr


def test_jwt_without_a_key_refuses(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="CAIRN_JWT__SECRET"):
        load_keys(_settings(tmp_path))
    with pytest.raises(ConfigurationError, match="CAIRN_JWT__PRIVATE_KEY"):
        load_keys(_settings(tmp_path, algorithm="RS256"))


def test_a_short_secret_refuses(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="shorter"):
        load_keys(_settings(tmp_path, secret="short"))


def test_an_unreadable_key_file_refuses(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="cannot read"):
        load_keys(_settings(tmp_path, secret_file=tmp_path / "missing"))


@pytest.mark.parametrize("algorithm", ["HS256", "RS256"])
def test_up_generates_a_private_key_once_and_reuses_it(tmp_path: Path, algorithm: str) -> None:
    settings = _settings(tmp_path, algorithm=algorithm)
    path = prepare_key(settings)
    assert path is not None and path.is_file()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    first = path.read_bytes()
    assert prepare_key(settings) == path and path.read_bytes() == first
    token, _ = mint_local(settings, "ops", {Role.CURATOR}, 600)
    principal = Tokens(load_keys(settings), settings.jwt).verify(token)
    assert principal.actor == "ops" and principal.roles == {Role.CURATOR}


def test_no_key_is_generated_when_one_is_configured(tmp_path: Path) -> None:
    assert prepare_key(_settings(tmp_path, secret=SECRET)) is None
    assert prepare_key(Settings(data_dir=tmp_path)) is None  # auth disabled


def test_rs256_from_pem_in_the_environment_and_a_verify_only_server(tmp_path: Path) -> None:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    public = (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    signer = _settings(tmp_path, algorithm="RS256", private_key=private)
    token, _ = mint_local(signer, "a", {Role.SUBSCRIBER}, 600)
    verifier = Tokens(
        load_keys(_settings(tmp_path, algorithm="RS256", public_key=public)), signer.jwt
    )
    assert not verifier.can_mint
    assert verifier.verify(token).actor == "a"


def test_rotation_keeps_tokens_of_the_previous_key_valid(tmp_path: Path) -> None:
    old = _settings(tmp_path, secret=OLD_SECRET)
    old_token, _ = mint_local(old, "a", {Role.SUBSCRIBER}, 600)
    rotated = _settings(tmp_path, secret=SECRET, previous_keys=[OLD_SECRET])
    tokens = Tokens(load_keys(rotated), rotated.jwt)
    assert tokens.verify(old_token).actor == "a"
    new_token, _ = tokens.mint(uuid.uuid4(), "b", {Role.SUBSCRIBER}, 600)
    assert (
        jwt.get_unverified_header(new_token)["kid"] != jwt.get_unverified_header(old_token)["kid"]
    )
    # Once the previous key is dropped, its tokens stop working.
    dropped = _settings(tmp_path, secret=SECRET)
    with pytest.raises(Unauthorized):
        Tokens(load_keys(dropped), dropped.jwt).verify(old_token)


def test_a_token_without_kid_tries_every_verification_key(tmp_path: Path) -> None:
    rotated = _settings(tmp_path, secret=SECRET, previous_keys=[OLD_SECRET])
    claims = {"sub": "a", "owner_id": str(uuid.uuid4()), "roles": ["emitter"], "exp": 4_000_000_000}
    token = jwt.encode(claims, OLD_SECRET, algorithm="HS256")
    assert Tokens(load_keys(rotated), rotated.jwt).verify(token).roles == {Role.EMITTER}


def test_cairn_token_prints_a_token_signed_with_the_configured_key(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CAIRN_")}
    env.update({"CAIRN_AUTH": "jwt", "CAIRN_JWT__SECRET": SECRET, "CAIRN_JWT__AUDIENCE": "x"})
    owner = str(uuid.uuid4())
    result = subprocess.run(
        [str(REPO / ".venv/bin/cairn"), "token", "--agent-id", "ops", "--roles",
         "curator,emitter", "--owner-id", owner, "--data-dir", str(tmp_path)],
        capture_output=True, text=True, timeout=60, env=env, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    claims = jwt.decode(result.stdout.strip(), SECRET, algorithms=["HS256"], audience="x")
    assert claims["sub"] == "ops" and claims["owner_id"] == owner
    assert sorted(claims["roles"]) == ["curator", "emitter"]


def test_cairn_token_refuses_bad_roles_and_a_missing_key(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CAIRN_")}
    env["CAIRN_AUTH"] = "jwt"
    command = [str(REPO / ".venv/bin/cairn"), "token", "--agent-id", "ops"]
    no_key = subprocess.run(
        [*command, "--data-dir", str(tmp_path)], capture_output=True, text=True, env=env,
        timeout=60, check=False,
    )  # fmt: skip
    assert no_key.returncode == 2 and "CAIRN_JWT__SECRET" in no_key.stderr
    ensure_generated_key(_settings(tmp_path))
    bad_role = subprocess.run(
        [*command, "--roles", "root", "--data-dir", str(tmp_path)], capture_output=True,
        text=True, env=env, timeout=60, check=False,
    )  # fmt: skip
    assert bad_role.returncode == 2
