"""``POST /auth/token``: tokens for the admin credential (any tenant) or a curator (its own
tenant, never more roles than it holds). Minting creates the tenant and registers the agent."""

from __future__ import annotations

import logging
import uuid

from fastapi import APIRouter

from cairn.api.deps import BearerDep, ResourcesDep
from cairn.auth import repository
from cairn.auth.schemas import MintedToken, MintRequest
from cairn.db.engine import tenant_session
from cairn.errors import BadRequest, Forbidden, InvalidInput
from cairn.principal import ALL_ROLES, Principal, Role

log = logging.getLogger(__name__)
router = APIRouter(tags=["auth"])


@router.post(
    "/auth/token",
    responses={401: {"description": "no credential"}, 403: {"description": "not allowed"}},
)
async def mint_token(body: MintRequest, resources: ResourcesDep, bearer: BearerDep) -> MintedToken:
    """Send ``Authorization: Bearer <CAIRN_ADMIN_TOKEN>`` or a curator's token."""
    auth = resources.auth
    if auth.tokens is None:
        raise BadRequest("authentication is disabled (CAIRN_AUTH=disabled): no tokens to mint")
    if not auth.tokens.can_mint:
        raise Forbidden("this server holds only a public key: mint where the private key is")
    credential = bearer.credentials if bearer else None
    open_minting = not credential and resources.settings.compat.open_minting
    if auth.is_admin(credential) or open_minting:
        if open_minting:  # RCRT's runners mint this way (refused off loopback at start)
            log.warning("minting a token without a credential for agent %s", body.agent_id)
        owner_id = body.owner_id or auth.default.owner_id
        roles = set(body.roles or ALL_ROLES)
    else:
        caller = auth.authenticate(credential)
        owner_id, roles = _curator_grant(caller, body)
    ttl = body.ttl_sec or resources.settings.jwt.token_ttl_s
    if ttl > resources.settings.jwt.max_token_ttl_s:
        raise InvalidInput(f"ttl_sec is over {resources.settings.jwt.max_token_ttl_s}")
    async with tenant_session(resources.session_factory, owner_id) as session, session.begin():
        await repository.ensure_tenant(session, owner_id, body.tenant_name)
        await repository.upsert_agent(session, owner_id, body.agent_id, roles)
    auth.ensure_known(owner_id)
    token, exp = auth.tokens.mint(owner_id, body.agent_id, roles, ttl)
    ordered = sorted(roles, key=list(Role).index)
    return MintedToken(
        token=token, owner_id=owner_id, agent_id=body.agent_id, roles=ordered, exp=exp
    )


def _curator_grant(caller: Principal, body: MintRequest) -> tuple[uuid.UUID, set[Role]]:
    """What a curator may mint: its own tenant, and only roles it holds (curators hold all)."""
    if not caller.has(Role.CURATOR):
        raise Forbidden("minting tokens needs the curator role or the admin credential")
    owner_id = body.owner_id or caller.owner_id
    if owner_id != caller.owner_id:
        raise Forbidden("a curator mints tokens for its own tenant only")
    roles = set(body.roles or caller.roles)
    beyond = sorted(role.value for role in roles if not caller.has(role))
    if beyond:
        raise Forbidden(f"a token cannot carry roles its minter lacks: {', '.join(beyond)}")
    return owner_id, roles
