"""``GET /coverage`` answered from a per-tenant cache, counted again whenever what it counts
has changed.

The figures count every live record of the tenant (a few scans, 0.1-1 s of database work at
10k records), and an open Health page asks for them again and again, mostly to find them
unchanged. Before answering from the cache, one statement of a few index look-ups and one
narrow scan checks what the figures depend on:

- records written, updated or deleted: the tenant's newest event in the outbox (every write
  puts one there, in its own transaction);
- edges (islands): the tenant's newest row in ``graph_changes``, which triggers fill for
  every edge written or removed, whoever writes it;
- processing states and errors, which the worker and the retry job change without an event:
  the count and a digest of the tenant's (record, stage, state, error) rows — only what the
  figures count, so that a stage marked done again, or a retry's attempt counted, keeps
  them (hashes of the record's uuid and of short texts: ~35 ms for 50k rows on a busy
  2-CPU machine, where hashing each row's whole text took ~60);
- records whose ``ttl`` ran out, which leave the figures with no write at all: how many of
  the tenant's records have expired.

Any difference, or figures older than ``max_age_s`` (a bound for a change none of these
shows), and they are counted again. The answer's ``computed_at`` says when. Entries are
keyed by tenant and filled from the tenant's own session: no tenant is answered with
another's figures. Concurrent asks of one tenant wait for one count.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from cairn.processing import coverage as service
from cairn.processing.schemas import Coverage

MAX_AGE_S = 60.0

# The newest rows are found from the primary key's end; expired records from the ttl index.
# The outbox keeps published rows a day (CAIRN_EVENTS__OUTBOX_RETENTION_S), graph_changes
# ten minutes: both far longer than MAX_AGE_S, so a tenant's newest row cannot be written
# and pruned between two asks that the cache would answer alike.
_STAMP = text(
    "SELECT (SELECT o.id FROM outbox o WHERE o.owner_id = :owner ORDER BY o.id DESC LIMIT 1),"
    " (SELECT g.id FROM graph_changes g WHERE g.owner_id = :owner ORDER BY g.id DESC LIMIT 1),"
    " (SELECT count(*) FROM breadcrumbs b WHERE b.owner_id = :owner AND b.ttl <= now()),"
    " p.rows, p.digest FROM (SELECT count(*) AS rows, sum(uuid_hash(p.breadcrumb_id)::bigint"
    " * hashtext(p.stage || p.state) + hashtext(coalesce(p.last_error, ''))) AS digest"
    " FROM record_processing p WHERE p.owner_id = :owner) p"
)


async def change_stamp(session: AsyncSession, owner: uuid.UUID) -> tuple[Any, ...]:
    """What differs whenever anything the tenant's figures count has changed."""
    row = (await session.execute(_STAMP, {"owner": owner})).one()
    return tuple(row)


@dataclass
class _Entry:
    stamp: tuple[Any, ...]
    counted: float  # on the cache's clock
    figures: Coverage


@dataclass
class CoverageCache:
    max_age_s: float = MAX_AGE_S
    clock: Callable[[], float] = time.monotonic
    _entries: dict[uuid.UUID, _Entry] = field(default_factory=dict)
    _locks: dict[uuid.UUID, asyncio.Lock] = field(default_factory=dict)

    async def coverage(self, session: AsyncSession, owner: uuid.UUID) -> Coverage:
        """``owner``'s figures: the cached ones while nothing says they changed and they
        are younger than ``max_age_s``, else counted now on ``session``."""
        async with self._locks.setdefault(owner, asyncio.Lock()):
            stamp = await change_stamp(session, owner)
            entry = self._entries.get(owner)
            now = self.clock()
            if entry and entry.stamp == stamp and now - entry.counted < self.max_age_s:
                return entry.figures
            figures = await service.coverage(session, owner)
            figures.computed_at = dt.datetime.now(dt.UTC)
            self._entries[owner] = _Entry(stamp, now, figures)
            return figures
