"""Who is calling: the tenant every query is scoped to, the acting agent, and its roles."""

from __future__ import annotations

import enum
import uuid
from dataclasses import dataclass, field


class Role(enum.StrEnum):
    """The three roles of a token; each route requires one of them.

    subscriber: read, search, stream. emitter: create, update and delete its own records,
    tag operations. curator: everything within its tenant (ACLs, webhooks, DLQ, secrets,
    admin routes).
    """

    SUBSCRIBER = "subscriber"
    EMITTER = "emitter"
    CURATOR = "curator"


ALL_ROLES: frozenset[Role] = frozenset(Role)


@dataclass(frozen=True, slots=True)
class Principal:
    owner_id: uuid.UUID
    actor: str
    # Internal callers (the worker, bootstrap, the disabled-auth default) act with every role.
    roles: frozenset[Role] = field(default=ALL_ROLES)

    def has(self, role: Role) -> bool:
        """Curators may do everything; emitters may also read."""
        if Role.CURATOR in self.roles:
            return True
        if role is Role.SUBSCRIBER:
            return bool(self.roles & {Role.SUBSCRIBER, Role.EMITTER})
        return role in self.roles
