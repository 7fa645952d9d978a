"""``GET /coverage``: how far the caller's tenant's records got through each processing
stage. For operators, gated like the other operator views (``/worker/dead``): curators."""

from __future__ import annotations

from fastapi import APIRouter

from cairn.api.deps import PrincipalDep, SessionDep, require_role
from cairn.principal import Role
from cairn.processing import coverage as service
from cairn.processing.schemas import Coverage

router = APIRouter(tags=["operations"])
CURATOR = require_role(Role.CURATOR)


@router.get("/coverage", dependencies=[CURATOR])
async def get_coverage(session: SessionDep, principal: PrincipalDep) -> Coverage:
    """Per stage: done, pending, failed, not needed and untracked records with the share
    done; the commonest errors; the same by schema and by session tag prefix; islands."""
    return await service.coverage(session, principal.owner_id)
