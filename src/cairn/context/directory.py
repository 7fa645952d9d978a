"""Per-tenant agents and blacklist, held in memory.

JetStream hands each event to one worker, so a worker cannot rely on seeing the event of a
definition change: another worker may have consumed it. A database trigger counts every
write of a tenant's definitions (``definition_generations``, revision 0011); each event's
handling reads that count first (:meth:`Directory.sync`), and what was loaded at an older
count is loaded again. The count is read after the triggering record's commit, so every
definition committed before the trigger is seen. Events still clear the cache at once in the
process that receives them (the API's listeners, the worker that consumed the event): each
counts as an invalidation, and a load that began before it (its reads may predate the
change) leaves its result stale, to be loaded again.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Mapping
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
_GENERATION = text("SELECT generation FROM definition_generations WHERE owner_id = :owner")
_BLACKLIST = text(
    "SELECT context FROM breadcrumbs WHERE owner_id = :owner AND schema_name = :schema"
    " AND (ttl IS NULL OR ttl > now()) ORDER BY updated_at DESC, id DESC LIMIT 1"
)


class Directory:
    def __init__(
        self,
        session_factory: async_sessionmaker[AsyncSession],
        on_change: Callable[[], object] = lambda: None,
    ) -> None:
        self.session_factory = session_factory
        self.on_change = on_change  # other caches of definitions (schema hints) to forget
        self._agents: dict[uuid.UUID, list[Agent]] = {}
        self._excluded: dict[uuid.UUID, frozenset[str]] = {}
        self._loaded_at: dict[uuid.UUID, int] = {}  # the generation each tenant was loaded at
        self._required: dict[uuid.UUID, int] = {}  # the newest generation seen by sync()
        self._invalidated: dict[uuid.UUID, int] = {}  # invalidations by events so far
        self._loaded_after: dict[uuid.UUID, int] = {}  # those a tenant's load began after
        self._lock = asyncio.Lock()

    async def sync(self, session: AsyncSession, owner_id: uuid.UUID) -> None:
        """Within ``session`` (scoped to ``owner_id``): if the tenant's definitions changed
        since they were loaded here, forget them (and tell ``on_change``)."""
        self.observe(owner_id, await _generation(session, owner_id))

    def observe(self, owner_id: uuid.UUID, generation: int) -> None:
        """``sync`` with the tenant's definitions generation read by the caller (in a
        statement it sends anyway: the worker's edge step reads it with the record)."""
        if generation <= self._required.get(owner_id, 0):
            return
        self._required[owner_id] = generation
        if owner_id in self._loaded_at and self._loaded_at[owner_id] < generation:
            self.on_change()

    async def agents(self, owner_id: uuid.UUID) -> list[Agent]:
        if self._stale(owner_id) or owner_id not in self._agents:
            await self._load(owner_id)
        return self._agents.get(owner_id, [])

    async def excluded(self, owner_id: uuid.UUID) -> frozenset[str]:
        if self._stale(owner_id) or owner_id not in self._excluded:
            await self._load(owner_id)
        return self._excluded.get(owner_id, excluded_schemas(None))

    def _stale(self, owner_id: uuid.UUID) -> bool:
        older = self._loaded_at.get(owner_id, -1) < self._required.get(owner_id, 0)
        earlier = self._loaded_after.get(owner_id, -1) < self._invalidated.get(owner_id, 0)
        return older or earlier

    def on_event(self, event: Mapping[str, Any]) -> bool:
        """Forget a tenant's agents and blacklist when one of their records changed."""
        if event.get("schema_name") not in (AGENT_SCHEMA, BLACKLIST_SCHEMA):
            return False
        try:
            owner = uuid.UUID(str(event.get("owner_id")))
        except ValueError:
            return False
        # What was loaded before it is stale (see _stale): loaded again when next asked.
        self._invalidated[owner] = self._invalidated.get(owner, 0) + 1
        return True

    async def _load(self, owner_id: uuid.UUID) -> None:
        async with self._lock, tenant_session(self.session_factory, owner_id) as session:
            if not self._stale(owner_id) and owner_id in self._agents:
                return  # loaded by another task while this one waited for the lock
            # An invalidation from here on may postdate these reads: it makes them stale.
            invalidated = self._invalidated.get(owner_id, 0)
            # The generation first: the rows read after it are at least as new.
            generation = await _generation(session, owner_id)
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
            self._loaded_at[owner_id] = generation
            self._loaded_after[owner_id] = invalidated


async def _generation(session: AsyncSession, owner_id: uuid.UUID) -> int:
    found = await session.scalar(_GENERATION, {"owner": owner_id})
    return int(found or 0)
