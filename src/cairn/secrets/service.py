"""Secrets within one tenant: curators manage them; curators and the agents granted a secret
decrypt it. Every create, update, decrypt and delete leaves an audit row in the same
transaction, and audit rows outlive the secret (no foreign key; append-only for the app)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from cairn.db.engine import tenant_session
from cairn.errors import Conflict, Forbidden, InvalidInput, NotFound, Unavailable
from cairn.principal import Principal, Role
from cairn.secrets import repository
from cairn.secrets.crypto import Keyring, Sealed, UndecryptableSecret
from cairn.secrets.schemas import (
    AuditEntry,
    DecryptedSecret,
    ScopeType,
    SecretCreate,
    SecretInfo,
    SecretUpdate,
)
from cairn.secrets.scopes import listing_filter, stored_scope

SEALED_COLUMNS = ("ciphertext", "nonce", "wrapped_key", "key_nonce", "kek_id")
MAX_AUDIT = 1000


class SecretService:
    def __init__(
        self,
        session: AsyncSession,
        principal: Principal,
        keyring: Keyring | None,
        *,
        max_value_bytes: int,
        refusals: async_sessionmaker[AsyncSession] | None = None,
    ) -> None:
        self.session = session
        self.principal = principal
        self.keyring = keyring
        self.max_value_bytes = max_value_bytes
        # Where a refused decrypt is recorded: its own transaction, since the request's
        # rolls back with the 403.
        self.refusals = refusals

    async def create(self, body: SecretCreate) -> SecretInfo:
        keyring = self._keyring()
        _check_text(body.description, "description")
        owner, actor = self.principal.owner_id, self.principal.actor
        scope = stored_scope(body.scope_type, body.scope_id, owner)
        secret_id = uuid.uuid4()
        sealed = keyring.seal(self._value(body.value), owner, secret_id)
        row = await repository.insert_secret(
            self.session,
            {
                "id": secret_id, "owner_id": owner, "name": body.name,
                "scope_type": scope.scope_type, "scope_id": scope.scope_id,
                "description": body.description, "readers": _readers(body.readers),
                "created_by": actor, "updated_by": actor, **_columns(sealed),
            },
        )  # fmt: skip
        if row is None:
            raise Conflict(f"a secret named {body.name!r} exists in that scope")
        await repository.audit(self.session, owner, secret_id, "create", actor)
        return SecretInfo.model_validate(dict(row))

    async def update(self, secret_id: uuid.UUID, body: SecretUpdate) -> SecretInfo:
        _check_text(body.description, "description")
        current = await self._get(secret_id, for_update=True)
        owner, actor = self.principal.owner_id, self.principal.actor
        values: dict[str, Any] = {"updated_at": datetime.now(UTC), "updated_by": actor}
        if body.value is not None:
            sealed = self._keyring().seal(self._value(body.value), owner, current["id"])
            values |= _columns(sealed)
        if "description" in body.model_fields_set:
            values["description"] = body.description
        if body.readers is not None:
            values["readers"] = _readers(body.readers)
        row = await repository.update_secret(self.session, owner, secret_id, values)
        assert row is not None  # locked above
        await repository.audit(self.session, owner, secret_id, "update", actor)
        return SecretInfo.model_validate(dict(row))

    async def delete(self, secret_id: uuid.UUID) -> None:
        owner = self.principal.owner_id
        if not await repository.delete_secret(self.session, owner, secret_id):
            raise NotFound(f"secret {secret_id} not found")
        await repository.audit(self.session, owner, secret_id, "delete", self.principal.actor)

    async def decrypt(self, secret_id: uuid.UUID, reason: str | None) -> DecryptedSecret:
        _check_text(reason, "reason")
        row = await self._get(secret_id)
        if not self._may_read(row):
            await self._record_refusal(secret_id, reason)
            raise Forbidden(f"secret {secret_id}: decrypting needs the curator role or a grant")
        keyring = self._keyring()
        owner = self.principal.owner_id
        sealed = Sealed(**{name: row[name] for name in SEALED_COLUMNS})
        try:
            value = keyring.open(sealed, owner, row["id"])
        except UndecryptableSecret as error:
            raise Unavailable(f"secret {secret_id} cannot be decrypted: {error}") from error
        await repository.audit(
            self.session, owner, secret_id, "decrypt", self.principal.actor, reason
        )
        return DecryptedSecret(id=row["id"], name=row["name"], value=value.decode())

    async def info(self, secret_id: uuid.UUID) -> SecretInfo:
        row = await self._get(secret_id)
        if not self._may_read(row):
            raise NotFound(f"secret {secret_id} not found")
        return SecretInfo.model_validate(dict(row))

    async def listing(
        self, scope_type: ScopeType | None = None, scope_id: str | None = None
    ) -> list[SecretInfo]:
        scope = listing_filter(scope_type, scope_id, self.principal.owner_id)
        if scope is None:
            return []
        actor = None if self._curator() else self.principal.actor
        rows = await repository.list_info(
            self.session, self.principal.owner_id, actor, scope.scope_type, scope.scope_id
        )
        return [SecretInfo.model_validate(dict(row)) for row in rows]

    async def audit_trail(self, secret_id: uuid.UUID, limit: int) -> list[AuditEntry]:
        if not 1 <= limit <= MAX_AUDIT:
            raise InvalidInput(f"limit must be between 1 and {MAX_AUDIT}")
        rows = await repository.audit_trail(
            self.session, self.principal.owner_id, secret_id, limit=limit
        )
        if not rows:
            raise NotFound(f"secret {secret_id} has no audit trail")
        return [AuditEntry.model_validate(dict(row)) for row in rows]

    async def _record_refusal(self, secret_id: uuid.UUID, reason: str | None) -> None:
        if self.refusals is None:
            return
        owner, actor = self.principal.owner_id, self.principal.actor
        async with tenant_session(self.refusals, owner) as session, session.begin():
            await repository.audit(session, owner, secret_id, "decrypt_denied", actor, reason)

    def _may_read(self, row: Any) -> bool:
        actor = self.principal.actor
        agent_scoped = row["scope_type"] == ScopeType.AGENT and row["scope_id"] == actor
        return self._curator() or actor in row["readers"] or agent_scoped

    def _curator(self) -> bool:
        return Role.CURATOR in self.principal.roles

    async def _get(self, secret_id: uuid.UUID, *, for_update: bool = False) -> Any:
        row = await repository.get(
            self.session, self.principal.owner_id, secret_id, for_update=for_update
        )
        if row is None:
            raise NotFound(f"secret {secret_id} not found")
        return row

    def _keyring(self) -> Keyring:
        if self.keyring is None:
            raise Unavailable("secrets need a key-encryption key: set CAIRN_SECRETS__KEK")
        return self.keyring

    def _value(self, value: str) -> bytes:
        _check_text(value, "value")
        data = value.encode()
        if not data or len(data) > self.max_value_bytes:
            raise InvalidInput(f"value: 1 to {self.max_value_bytes} bytes")
        return data


def _check_text(value: str | None, field: str) -> None:
    """Text PostgreSQL can store and UTF-8 can encode: no NUL, no lone surrogates."""
    if value is None:
        return
    if "\x00" in value:
        raise InvalidInput(f"{field}: NUL characters are not allowed")
    try:
        value.encode()
    except UnicodeEncodeError as error:
        raise InvalidInput(f"{field}: not valid Unicode text") from error


def _readers(readers: list[str]) -> list[str]:
    return sorted(set(readers))


def _columns(sealed: Sealed) -> dict[str, Any]:
    return {name: getattr(sealed, name) for name in SEALED_COLUMNS}


async def rewrap_all(session: AsyncSession, keyring: Keyring, *, batch: int = 500) -> int:
    """KEK rotation: re-wrap every data key not wrapped by the current KEK (values are not
    re-encrypted). Runs as the schema owner, across tenants; returns how many changed."""
    changed = 0
    while rows := await repository.wrapped_elsewhere(session, keyring.current_id, limit=batch):
        for row in rows:
            sealed = Sealed(**{name: row[name] for name in SEALED_COLUMNS})
            rewrapped = keyring.rewrap(sealed, row["owner_id"], row["id"])
            await repository.update_secret(session, row["owner_id"], row["id"], _columns(rewrapped))
            changed += 1
    return changed
