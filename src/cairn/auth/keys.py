"""Token key material: from the environment or files, or generated once by ``cairn up``.

A key set has one signing key (absent when only a public key is configured: such a server
verifies but cannot mint) and every key that still verifies, by key id (``kid``). The key id
is a fingerprint of the verification key, so tokens name the key that signed them and a
rotated-out key keeps verifying while it is listed in ``previous_keys``.
"""

from __future__ import annotations

import hashlib
import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from cairn.config import JwtSettings, Settings
from cairn.errors import ConfigurationError

MIN_SECRET_BYTES = 32
GENERATED_DIR = "auth"
GENERATED_FILES = {"HS256": "jwt-hs256.secret", "RS256": "jwt-rs256.pem"}


@dataclass(frozen=True)
class KeySet:
    algorithm: str
    signing_kid: str | None
    signing_key: Any = field(repr=False)  # bytes (HS256), an RSA private key, or None
    verification: dict[str, Any] = field(repr=False)  # kid -> bytes or RSA public key


def generated_key_path(settings: Settings) -> Path:
    return settings.data_dir / GENERATED_DIR / GENERATED_FILES[settings.jwt.algorithm]


def explicit_key(settings: Settings) -> bool:
    """Whether the environment names a key (else ``cairn up`` generates one)."""
    jwt = settings.jwt
    named: tuple[object, ...] = (jwt.secret, jwt.secret_file)
    if jwt.algorithm == "RS256":
        named = (jwt.private_key, jwt.private_key_file, jwt.public_key, jwt.public_key_file)
    return any(value is not None for value in named)


def ensure_generated_key(settings: Settings) -> Path:
    """Create this data directory's key once (mode 0600); later starts reuse it."""
    path = generated_key_path(settings)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    if path.is_file():
        return path
    if settings.jwt.algorithm == "HS256":
        material = secrets.token_urlsafe(48).encode()
    else:
        private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        material = private.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process made it first: use theirs
        return path
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(material)
    return path


def load_keys(settings: Settings) -> KeySet:
    """The configured keys, or this data directory's generated one; a clear error otherwise."""
    jwt = settings.jwt
    if jwt.algorithm == "HS256":
        secret = _secret(jwt) or _read_generated(settings)
        if secret is None:
            raise ConfigurationError(_missing(settings, "CAIRN_JWT__SECRET"))
        keys = [_hmac_key(secret, "the HS256 secret")]
        keys += [_hmac_key(old.encode(), "a previous key") for old in jwt.previous_keys]
        return KeySet("HS256", _kid(keys[0]), keys[0], {_kid(key): key for key in keys})
    private = _private_key(jwt, settings)
    public = _public_key(jwt) or (private.public_key() if private is not None else None)
    if public is None:
        raise ConfigurationError(_missing(settings, "CAIRN_JWT__PRIVATE_KEY or PUBLIC_KEY"))
    publics = [public] + [_load_public(old, "a previous key") for old in jwt.previous_keys]
    signing_kid = _kid(public) if private is not None else None
    return KeySet("RS256", signing_kid, private, {_kid(key): key for key in publics})


def _missing(settings: Settings, variable: str) -> str:
    return (
        f"CAIRN_AUTH=jwt needs a {settings.jwt.algorithm} key: set {variable} (or its *_FILE), "
        "or start with `cairn up`, which generates one in its data directory"
    )


def _secret(jwt: JwtSettings) -> bytes | None:
    if jwt.secret is not None:
        return jwt.secret.get_secret_value().encode()
    if jwt.secret_file is not None:
        return _read(jwt.secret_file).strip()
    return None


def _read_generated(settings: Settings) -> bytes | None:
    path = generated_key_path(settings)
    return _read(path).strip() if path.is_file() else None


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as error:
        raise ConfigurationError(f"cannot read key file {path}: {error}") from error


def _hmac_key(secret: bytes, what: str) -> bytes:
    if len(secret) < MIN_SECRET_BYTES:
        raise ConfigurationError(f"{what} is shorter than {MIN_SECRET_BYTES} bytes")
    return secret


def _private_key(jwt: JwtSettings, settings: Settings) -> rsa.RSAPrivateKey | None:
    if jwt.private_key is not None:
        pem = jwt.private_key.get_secret_value().encode()
    elif jwt.private_key_file is not None:
        pem = _read(jwt.private_key_file)
    elif jwt.public_key is None and jwt.public_key_file is None:
        pem = _read_generated(settings) or b""
        if not pem:
            return None
    else:
        return None
    try:
        key = serialization.load_pem_private_key(pem, password=None)
    except (ValueError, TypeError) as error:
        raise ConfigurationError(f"the RS256 private key is not a PEM RSA key: {error}") from error
    if not isinstance(key, rsa.RSAPrivateKey):
        raise ConfigurationError("the RS256 private key is not an RSA key")
    return key


def _public_key(jwt: JwtSettings) -> rsa.RSAPublicKey | None:
    if jwt.public_key is not None:
        return _load_public(jwt.public_key, "the RS256 public key")
    if jwt.public_key_file is not None:
        return _load_public(_read(jwt.public_key_file).decode(), "the RS256 public key")
    return None


def _load_public(pem: str, what: str) -> rsa.RSAPublicKey:
    try:
        key = serialization.load_pem_public_key(pem.encode())
    except (ValueError, TypeError) as error:
        raise ConfigurationError(f"{what} is not a PEM RSA public key: {error}") from error
    if not isinstance(key, rsa.RSAPublicKey):
        raise ConfigurationError(f"{what} is not an RSA public key")
    return key


def _kid(key: bytes | rsa.RSAPublicKey) -> str:
    if isinstance(key, bytes):
        material = b"hs256:" + key
    else:
        material = key.public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    return hashlib.sha256(material).hexdigest()[:16]
