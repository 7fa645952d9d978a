"""Secret scopes as RCRT clients name them. RCRT's SDK offers ``global``, ``workspace`` and
``tenant``; Cairn stores ``global`` (the whole tenant: every secret belongs to one tenant),
``workspace`` and ``agent``. ``tenant`` is RCRT's name for the tenant-wide scope, its
``scope_id`` the tenant's id, so it is Cairn's ``global`` and may only name the caller's own
tenant."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from cairn.errors import InvalidInput
from cairn.secrets.schemas import ScopeType


@dataclass(frozen=True, slots=True)
class Scope:
    scope_type: ScopeType | None  # in a listing filter, None: any
    scope_id: str | None


def stored_scope(scope_type: ScopeType, scope_id: str | None, owner_id: uuid.UUID) -> Scope:
    """The scope a new secret is stored under; 422 for a combination that means nothing."""
    if scope_type is ScopeType.TENANT:
        if scope_id is not None and scope_id.lower() != str(owner_id):
            raise InvalidInput("scope_id: a tenant-scoped secret belongs to the caller's tenant")
        return Scope(ScopeType.GLOBAL, None)
    if (scope_type is ScopeType.GLOBAL) != (scope_id is None):
        raise InvalidInput("scope_id: required for agent and workspace scopes, else absent")
    return Scope(scope_type, scope_id)


def listing_filter(
    scope_type: ScopeType | None, scope_id: str | None, owner_id: uuid.UUID
) -> Scope | None:
    """What ``GET /secrets?scope_type=&scope_id=`` selects (either part may be absent);
    None when nothing can match (another tenant's id with ``tenant``)."""
    if scope_type is ScopeType.TENANT:
        if scope_id is not None and scope_id.lower() != str(owner_id):
            return None
        return Scope(ScopeType.GLOBAL, None)
    return Scope(scope_type, scope_id)
