"""Secret routes (RCRT's ``/secrets``): curators create, update, delete and read the audit
trail; any caller lists and decrypts the secrets it is granted (curators: all of them)."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Depends, Query, status

from cairn.api.deps import PrincipalDep, ResourcesDep, SessionDep, require_role
from cairn.principal import Role
from cairn.secrets.schemas import (
    AuditEntry,
    DecryptedSecret,
    DecryptRequest,
    ScopeType,
    SecretCreate,
    SecretInfo,
    SecretUpdate,
)
from cairn.secrets.service import SecretService
from cairn.webhooks.schemas import AGENT_ID_PATTERN

router = APIRouter(prefix="/secrets", tags=["secrets"])
CURATOR = [require_role(Role.CURATOR)]
SUBSCRIBER = [require_role(Role.SUBSCRIBER)]


def get_secrets(
    session: SessionDep, principal: PrincipalDep, resources: ResourcesDep
) -> SecretService:
    limit = resources.settings.secrets.max_value_bytes
    return SecretService(
        session,
        principal,
        resources.keyring,
        max_value_bytes=limit,
        refusals=resources.session_factory,
    )


SecretsDep = Annotated[SecretService, Depends(get_secrets)]


@router.post("", status_code=status.HTTP_201_CREATED, dependencies=CURATOR)
async def create_secret(body: SecretCreate, secrets: SecretsDep) -> SecretInfo:
    return await secrets.create(body)


@router.get("", dependencies=SUBSCRIBER)
async def list_secrets(
    secrets: SecretsDep,
    scope_type: ScopeType | None = None,
    scope_id: Annotated[str | None, Query(pattern=AGENT_ID_PATTERN)] = None,
) -> list[SecretInfo]:
    return await secrets.listing(scope_type, scope_id)


@router.get("/{secret_id}", dependencies=SUBSCRIBER)
async def get_secret(secret_id: uuid.UUID, secrets: SecretsDep) -> SecretInfo:
    return await secrets.info(secret_id)


@router.put("/{secret_id}", dependencies=CURATOR)
async def update_secret(
    secret_id: uuid.UUID, body: SecretUpdate, secrets: SecretsDep
) -> SecretInfo:
    return await secrets.update(secret_id, body)


@router.delete("/{secret_id}", dependencies=CURATOR)
async def delete_secret(secret_id: uuid.UUID, secrets: SecretsDep) -> dict[str, bool]:
    await secrets.delete(secret_id)
    return {"ok": True}


@router.post("/{secret_id}/decrypt", dependencies=SUBSCRIBER)
async def decrypt_secret(
    secret_id: uuid.UUID, secrets: SecretsDep, body: DecryptRequest | None = None
) -> DecryptedSecret:
    return await secrets.decrypt(secret_id, body.reason if body else None)


@router.get("/{secret_id}/audit", dependencies=CURATOR)
async def secret_audit(
    secret_id: uuid.UUID,
    secrets: SecretsDep,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> list[AuditEntry]:
    return await secrets.audit_trail(secret_id, limit)
