"""ACL routes (curators only): RCRT's ``/acl``, ``/acl/grant``, ``/acl/revoke``, and the
same entries under their record (``/breadcrumbs/{id}/acl``)."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Depends, Query, status

from cairn.acl.schemas import AclEntry, AclGrantee, AclGrantRequest, RevokeResult
from cairn.acl.service import AclService
from cairn.api.deps import PrincipalDep, SessionDep, require_role
from cairn.principal import Role

router = APIRouter(tags=["acl"], dependencies=[require_role(Role.CURATOR)])


def get_acl(session: SessionDep, principal: PrincipalDep) -> AclService:
    return AclService(session, principal)


AclDep = Annotated[AclService, Depends(get_acl)]
Limit = Annotated[int, Query(ge=1, le=1000)]


@router.get("/acl")
async def list_acl(
    acl: AclDep, breadcrumb_id: uuid.UUID | None = None, limit: Limit = 100
) -> list[AclEntry]:
    return await acl.entries(breadcrumb_id, limit)


@router.post("/acl/grant")
async def grant_acl(body: AclGrantRequest, acl: AclDep) -> AclEntry:
    return await acl.grant(body.breadcrumb_id, body)


@router.post("/acl/revoke")
async def revoke_acl(body: AclGrantRequest, acl: AclDep) -> RevokeResult:
    return RevokeResult(rows=await acl.revoke(body.breadcrumb_id, body))


@router.delete("/acl/{acl_id}")
async def delete_acl(acl_id: uuid.UUID, acl: AclDep) -> dict[str, bool]:
    await acl.remove(acl_id)
    return {"ok": True}


@router.get("/breadcrumbs/{breadcrumb_id}/acl")
async def list_record_acl(
    breadcrumb_id: uuid.UUID, acl: AclDep, limit: Limit = 100
) -> list[AclEntry]:
    return await acl.entries(breadcrumb_id, limit)


@router.post("/breadcrumbs/{breadcrumb_id}/acl", status_code=status.HTTP_201_CREATED)
async def grant_record_acl(breadcrumb_id: uuid.UUID, body: AclGrantee, acl: AclDep) -> AclEntry:
    return await acl.grant(breadcrumb_id, body)


@router.delete("/breadcrumbs/{breadcrumb_id}/acl/{acl_id}")
async def delete_record_acl(
    breadcrumb_id: uuid.UUID, acl_id: uuid.UUID, acl: AclDep
) -> dict[str, bool]:
    await acl.remove(acl_id, breadcrumb_id)
    return {"ok": True}
