"""Granting and revoking: curators of the record's tenant manage its ACL entries."""

from __future__ import annotations

import uuid

from sqlalchemy.ext.asyncio import AsyncSession

from cairn.acl import repository
from cairn.acl.schemas import CROSS_TENANT_ACTIONS, AclEntry, AclGrantee
from cairn.breadcrumbs import repository as breadcrumbs
from cairn.errors import InvalidInput, NotFound
from cairn.principal import Principal

MAX_LIST = 1000


class AclService:
    def __init__(self, session: AsyncSession, principal: Principal) -> None:
        self.session = session
        self.principal = principal

    async def grant(self, breadcrumb_id: uuid.UUID, grantee: AclGrantee) -> AclEntry:
        await self._own_record(breadcrumb_id)
        owner = self.principal.owner_id
        grantee_owner = grantee.grantee_owner_id or owner
        whole_tenant = grantee_owner == owner and grantee.grantee_agent_id is None
        if whole_tenant and grantee.action in CROSS_TENANT_ACTIONS:
            raise InvalidInput("every agent of this tenant reads its records already")
        if grantee_owner != owner and grantee.action not in CROSS_TENANT_ACTIONS:
            raise InvalidInput(
                f"{grantee.action.value}: another tenant may only be granted "
                "read_context, read_full or subscribe"
            )
        row = await repository.upsert(
            self.session,
            {
                "owner_id": owner,
                "breadcrumb_id": breadcrumb_id,
                "grantee_owner_id": grantee_owner,
                "grantee_agent_id": grantee.grantee_agent_id,
                "action": grantee.action.value,
                "created_by": self.principal.actor,
            },
        )
        return AclEntry.model_validate(dict(row))

    async def revoke(self, breadcrumb_id: uuid.UUID, grantee: AclGrantee) -> int:
        await self._own_record(breadcrumb_id)
        return await repository.revoke(
            self.session,
            self.principal.owner_id,
            breadcrumb_id,
            grantee.grantee_owner_id or self.principal.owner_id,
            grantee.grantee_agent_id,
            grantee.action.value,
        )

    async def entries(self, breadcrumb_id: uuid.UUID | None, limit: int) -> list[AclEntry]:
        if not 1 <= limit <= MAX_LIST:
            raise InvalidInput(f"limit must be between 1 and {MAX_LIST}")
        if breadcrumb_id is not None:
            await self._own_record(breadcrumb_id)
        rows = await repository.list_entries(
            self.session, self.principal.owner_id, breadcrumb_id, limit=limit
        )
        return [AclEntry.model_validate(dict(row)) for row in rows]

    async def remove(self, acl_id: uuid.UUID, breadcrumb_id: uuid.UUID | None = None) -> None:
        owner = self.principal.owner_id
        if not await repository.delete_entry(self.session, owner, acl_id, breadcrumb_id):
            raise NotFound(f"ACL entry {acl_id} not found")

    async def _own_record(self, breadcrumb_id: uuid.UUID) -> None:
        if await breadcrumbs.get(self.session, self.principal.owner_id, breadcrumb_id) is None:
            raise NotFound(f"breadcrumb {breadcrumb_id} not found")
