"""``GET /coverage``: how far the caller's tenant's records got through each processing
stage. For operators, gated like the other operator views (``/worker/dead``): curators.
``GET /breadcrumbs/{id}/processing``: the same for one record, for anyone who may read it in
its tenant (its page in the console)."""

from __future__ import annotations

import uuid

from fastapi import APIRouter

from cairn.api.deps import PrincipalDep, ResourcesDep, SessionDep, require_role
from cairn.errors import NotFound
from cairn.principal import Role
from cairn.processing import queries
from cairn.processing.schemas import Coverage, RecordProcessing, StageState
from cairn.processing.stages import STAGES

router = APIRouter(tags=["operations"])
CURATOR = require_role(Role.CURATOR)
SUBSCRIBER = require_role(Role.SUBSCRIBER)


@router.get("/coverage", dependencies=[CURATOR])
async def get_coverage(
    session: SessionDep, principal: PrincipalDep, resources: ResourcesDep
) -> Coverage:
    """Per stage: done, pending, failed, not needed and untracked records with the share
    done; the commonest errors; the same by schema and by session tag prefix; islands.
    Kept per tenant until anything they count changes (``computed_at``: when counted)."""
    return await resources.coverage.coverage(session, principal.owner_id)


@router.get("/breadcrumbs/{breadcrumb_id}/processing", dependencies=[SUBSCRIBER])
async def get_record_processing(
    breadcrumb_id: uuid.UUID, session: SessionDep, principal: PrincipalDep
) -> RecordProcessing:
    """Each stage's state for one record of the caller's tenant: done, pending (and when it
    is tried again), failed with its error, not needed, or untracked."""
    rows = await queries.record_states(session, principal.owner_id, breadcrumb_id)
    if rows is None:
        raise NotFound(f"breadcrumb {breadcrumb_id} not found")
    by_stage = {row.stage: row for row in rows}
    stages = [
        StageState.model_validate(by_stage[stage], from_attributes=True)
        if stage in by_stage
        else StageState(stage=stage, state="untracked")
        for stage in STAGES
    ]
    return RecordProcessing(id=breadcrumb_id, stages=stages)
