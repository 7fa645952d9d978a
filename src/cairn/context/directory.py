"""Per-tenant agents and blacklist, held in memory and refreshed by their own events."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Mapping
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from cairn.context.agents import AGENT_SCHEMA, Agent, parse_agent
from cairn.context.blacklist import BLACKLIST_SCHEMA, excluded_schemas
from cairn.db.engine import tenant_session

_AGENTS = text(
    "SELECT id, context FROM breadcrumbs WHERE owner_id = :owner AND schema_name = :schema"
    " AND (ttl IS NULL OR ttl > now()) ORDER BY updated_at DESC, id DESC"
)
_BLACKLIST = text(
    "SELECT context FROM breadcrumbs WHERE owner_id = :owner AND schema_name = :schema"
    " AND (ttl IS NULL OR ttl > now()) ORDER BY updated_at DESC, id DESC LIMIT 1"
)


class Directory:
    def __init__(self, session_factory: async_sessionmaker[AsyncSession]) -> None:
        self.session_factory = session_factory
        self._agents: dict[uuid.UUID, list[Agent]] = {}
        self._excluded: dict[uuid.UUID, frozenset[str]] = {}
        self._lock = asyncio.Lock()

    async def agents(self, owner_id: uuid.UUID) -> list[Agent]:
        if owner_id not in self._agents:
            await self._load(owner_id)
        return self._agents.get(owner_id, [])

    async def excluded(self, owner_id: uuid.UUID) -> frozenset[str]:
        if owner_id not in self._excluded:
            await self._load(owner_id)
        return self._excluded.get(owner_id, excluded_schemas(None))

    def on_event(self, event: Mapping[str, Any]) -> bool:
        """Forget a tenant's agents and blacklist when one of their records changed."""
        if event.get("schema_name") not in (AGENT_SCHEMA, BLACKLIST_SCHEMA):
            return False
        try:
            owner = uuid.UUID(str(event.get("owner_id")))
        except ValueError:
            return False
        self._agents.pop(owner, None)
        self._excluded.pop(owner, None)
        return True

    async def _load(self, owner_id: uuid.UUID) -> None:
        async with self._lock, tenant_session(self.session_factory, owner_id) as session:
            rows = await session.execute(_AGENTS, {"owner": owner_id, "schema": AGENT_SCHEMA})
            agents: dict[str, Agent] = {}
            for row in rows:
                agent = parse_agent(row.id, owner_id, row.context or {})
                if agent is not None and agent.agent_id not in agents:  # newest wins
                    agents[agent.agent_id] = agent
            blacklist = await session.execute(
                _BLACKLIST, {"owner": owner_id, "schema": BLACKLIST_SCHEMA}
            )
            self._agents[owner_id] = sorted(agents.values(), key=lambda a: a.agent_id)
            self._excluded[owner_id] = excluded_schemas(blacklist.scalar_one_or_none())
