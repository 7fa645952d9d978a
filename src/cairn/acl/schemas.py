"""ACL entries on the wire (RCRT's ``/acl/grant`` body, plus a grantee tenant)."""

from __future__ import annotations

import enum
import uuid
from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field, computed_field

from cairn.webhooks.schemas import AGENT_ID_PATTERN


class AclAction(enum.StrEnum):
    """read_context: the LLM view; read_full: the whole record; update and delete (within
    the owner's tenant only); subscribe: its events over SSE."""

    READ_CONTEXT = "read_context"
    READ_FULL = "read_full"
    UPDATE = "update"
    DELETE = "delete"
    SUBSCRIBE = "subscribe"


# Actions that may cross tenants: reading and watching. Writes stay inside the owner's
# tenant (its history, outbox and edges are the owner's rows).
CROSS_TENANT_ACTIONS = frozenset({AclAction.READ_CONTEXT, AclAction.READ_FULL, AclAction.SUBSCRIBE})


class AclGrantee(BaseModel):
    """Who is granted: an agent of this tenant, every agent of another tenant, or one agent
    of another tenant."""

    model_config = ConfigDict(extra="forbid")

    grantee_agent_id: str | None = Field(default=None, pattern=AGENT_ID_PATTERN)
    grantee_owner_id: uuid.UUID | None = None
    action: AclAction


class AclGrantRequest(AclGrantee):
    breadcrumb_id: uuid.UUID


class AclEntry(BaseModel):
    id: uuid.UUID
    breadcrumb_id: uuid.UUID
    grantee_owner_id: uuid.UUID
    grantee_agent_id: str | None
    action: AclAction
    created_at: datetime
    created_by: str | None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def actions(self) -> list[AclAction]:
        """RCRT's form: an entry there holds a list of actions; here one per entry."""
        return [self.action]


class RevokeResult(BaseModel):
    rows: int
