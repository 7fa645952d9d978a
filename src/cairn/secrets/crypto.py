"""Envelope encryption: a random data key per secret (AES-256-GCM), wrapped by the
key-encryption key (KEK) from the environment.

The database holds only ciphertexts: the value under its data key, and the data key under
the KEK. Both are bound to the secret's tenant and id (GCM additional data), so a row copied
to another id or tenant does not decrypt. Rotating the KEK re-wraps data keys only; values
are never re-encrypted (``cairn rotate-kek``).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from cairn.config import SecretSettings
from cairn.errors import ConfigurationError

KEY_BYTES = 32
NONCE_BYTES = 12


class UndecryptableSecret(Exception):
    """The stored secret does not open with any known KEK (wrong key, or tampered data)."""


@dataclass(frozen=True, slots=True)
class Sealed:
    ciphertext: bytes
    nonce: bytes
    wrapped_key: bytes
    key_nonce: bytes
    kek_id: str


def kek_id(kek: bytes) -> str:
    """A fingerprint naming a KEK without revealing it."""
    return hashlib.sha256(b"cairn-kek\x00" + kek).hexdigest()[:16]


def parse_kek(raw: str) -> bytes:
    text = raw.strip()
    try:
        key = base64.b64decode(text + "=" * (-len(text) % 4), altchars=b"-_", validate=False)
    except (binascii.Error, ValueError) as error:
        raise ConfigurationError("the secrets KEK must be base64") from error
    if len(key) != KEY_BYTES:
        raise ConfigurationError(f"the secrets KEK must be {KEY_BYTES} bytes, got {len(key)}")
    return key


def new_kek() -> str:
    return base64.b64encode(os.urandom(KEY_BYTES)).decode()


def _aad(owner_id: uuid.UUID, secret_id: uuid.UUID, part: str) -> bytes:
    return f"cairn-secret:{owner_id}:{secret_id}:{part}".encode()


class Keyring:
    def __init__(self, current: bytes, previous: Sequence[bytes] = ()) -> None:
        self.current_id = kek_id(current)
        self._keks = {kek_id(key): key for key in (*previous, current)}

    @classmethod
    def from_settings(cls, settings: SecretSettings) -> Keyring | None:
        """None when no KEK is configured (the secret routes then answer 503)."""
        raw = settings.kek.get_secret_value() if settings.kek else None
        if not raw and settings.kek_file is not None:
            try:
                raw = settings.kek_file.read_text()
            except OSError as error:
                raise ConfigurationError(f"cannot read the secrets KEK file: {error}") from error
        if not raw or not raw.strip():
            return None
        previous = [parse_kek(key.get_secret_value()) for key in settings.previous_keks]
        return cls(parse_kek(raw), previous)

    def seal(self, value: bytes, owner_id: uuid.UUID, secret_id: uuid.UUID) -> Sealed:
        data_key = AESGCM.generate_key(bit_length=KEY_BYTES * 8)
        nonce = os.urandom(NONCE_BYTES)
        ciphertext = AESGCM(data_key).encrypt(nonce, value, _aad(owner_id, secret_id, "value"))
        key_nonce, wrapped = self._wrap(data_key, owner_id, secret_id)
        return Sealed(ciphertext, nonce, wrapped, key_nonce, self.current_id)

    def open(self, sealed: Sealed, owner_id: uuid.UUID, secret_id: uuid.UUID) -> bytes:
        data_key = self._unwrap(sealed, owner_id, secret_id)
        try:
            aad = _aad(owner_id, secret_id, "value")
            return AESGCM(data_key).decrypt(sealed.nonce, sealed.ciphertext, aad)
        except InvalidTag as error:
            raise UndecryptableSecret("the stored value does not authenticate") from error

    def rewrap(self, sealed: Sealed, owner_id: uuid.UUID, secret_id: uuid.UUID) -> Sealed:
        """The same value under the same data key, now wrapped with the current KEK."""
        data_key = self._unwrap(sealed, owner_id, secret_id)
        key_nonce, wrapped = self._wrap(data_key, owner_id, secret_id)
        return Sealed(sealed.ciphertext, sealed.nonce, wrapped, key_nonce, self.current_id)

    def _wrap(
        self, data_key: bytes, owner_id: uuid.UUID, secret_id: uuid.UUID
    ) -> tuple[bytes, bytes]:
        key_nonce = os.urandom(NONCE_BYTES)
        kek = AESGCM(self._keks[self.current_id])
        return key_nonce, kek.encrypt(key_nonce, data_key, _aad(owner_id, secret_id, "key"))

    def _unwrap(self, sealed: Sealed, owner_id: uuid.UUID, secret_id: uuid.UUID) -> bytes:
        kek = self._keks.get(sealed.kek_id)
        if kek is None:
            raise UndecryptableSecret(f"wrapped by KEK {sealed.kek_id}, which is not configured")
        try:
            aad = _aad(owner_id, secret_id, "key")
            return AESGCM(kek).decrypt(sealed.key_nonce, sealed.wrapped_key, aad)
        except InvalidTag as error:
            raise UndecryptableSecret("the data key does not unwrap") from error


def ensure_local_kek(settings: SecretSettings, data_dir: Path) -> SecretSettings:
    """``cairn up`` without a configured KEK: the data directory's own (generated once, mode
    0600, reused afterwards). Losing it loses every secret: back it up with the data."""
    if settings.kek is not None or settings.kek_file is not None:
        return settings
    path = data_dir / "secrets" / "kek"
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    if not path.is_file():
        try:
            descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:  # another process made it first: use theirs
            descriptor = None
        if descriptor is not None:
            with os.fdopen(descriptor, "w") as handle:
                handle.write(new_kek())
    return settings.model_copy(update={"kek_file": path})
