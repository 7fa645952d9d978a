"""Each tenant's active webhooks, cached briefly so that an event costs no query."""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Awaitable, Callable

from pydantic import ValidationError
from sqlalchemy import RowMapping
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from cairn.db.engine import tenant_session
from cairn.events.selectors import Selector
from cairn.webhooks import repository
from cairn.webhooks.delivery import Target

log = logging.getLogger(__name__)

Loader = Callable[[uuid.UUID], Awaitable[list[Target]]]
# Past this many cached tenants, expired entries are dropped when a new one is stored.
_PRUNE_ABOVE = 10_000


class TargetCache:
    """Changes to webhooks and secrets reach delivery within ``ttl_s``."""

    def __init__(
        self, load: Loader, ttl_s: float, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.load = load
        self.ttl_s = ttl_s
        self.clock = clock
        self._entries: dict[uuid.UUID, tuple[float, list[Target]]] = {}

    async def for_owner(self, owner_id: uuid.UUID) -> list[Target]:
        now = self.clock()
        entry = self._entries.get(owner_id)
        if entry is not None and now - entry[0] < self.ttl_s:
            return entry[1]
        targets = await self.load(owner_id)
        if len(self._entries) > _PRUNE_ABOVE:
            self._entries = {
                owner: kept for owner, kept in self._entries.items() if now - kept[0] < self.ttl_s
            }
        self._entries[owner_id] = (now, targets)
        return targets


def database_loader(sessions: async_sessionmaker[AsyncSession]) -> Loader:
    async def load(owner_id: uuid.UUID) -> list[Target]:
        async with tenant_session(sessions, owner_id) as session:
            rows = await repository.delivery_targets(session, owner_id)
        return [target for row in rows if (target := target_from_row(row)) is not None]

    return load


def target_from_row(row: RowMapping) -> Target | None:
    try:
        selector = None if row["selector"] is None else Selector.model_validate(row["selector"])
    except ValidationError:  # written by an older version, perhaps: skip it, say so
        log.warning("webhook %s has an unreadable selector; not delivering to it", row["id"])
        return None
    return Target(
        webhook_id=row["id"],
        owner_id=row["owner_id"],
        agent_id=row["agent_id"],
        url=row["url"],
        secret=row["secret"],
        selector=selector,
    )
