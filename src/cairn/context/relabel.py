"""Relabel records in the background when a tenant's domains change.

Writes label records with the definition current at the time; a new definition (or its
deletion) leaves older labels behind, each marked with the ``domains_version`` (definition
checksum) it was computed with. This job walks, per tenant, the records whose version
differs from the current one, in id order, in batches that each commit in one transaction:
after a crash the batch in flight is rolled back, and the next run starts again from the
same ``WHERE``. It reuses the stored ``llm_text``, tags and embedding; nothing is embedded
again but the definition's own examples, once (their centroids are stored if missing; those
of former definitions are deleted). A record its content leaves unlabelled asks its nearest
records labelled under the new version (context.neighbours); early in a pass there are few,
so once a pass has labelled records, the records it left unlabelled are asked again in a
second pass, in id order and batches like the first, which only adds labels.

Which tenants to look at comes from ``definition_generations`` (revision 0011), bumped by
every definition write: a tenant is checked again only when its count moved. A tenant done is
looked at once more :data:`SETTLE_S` later, so that a write which read the previous
definition and committed late is relabelled too. It runs on the system sessions (every
tenant; row-level security does not apply) in the API process, like the embedding retries.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from prometheus_client import Counter, Gauge
from sqlalchemy import bindparam, func, or_, select, text, true, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from cairn import processing
from cairn.context.domain_store import UNLABELLED_SCHEMAS, label_stored, store_domains
from cairn.context.domains import DOMAINS_SCHEMA, DomainSet
from cairn.db.models import breadcrumbs
from cairn.embedding import Embedder

log = logging.getLogger(__name__)

SETTLE_S = 60.0
RELABELLED = Counter(
    "cairn_domain_relabelled_records_total",
    "Records whose domain labels were recomputed (or cleared) after a definition change",
)
PENDING_TENANTS = Gauge(
    "cairn_domain_relabel_pending_tenants", "Tenants whose records may carry outdated labels"
)
_GENERATIONS = text("SELECT owner_id, generation FROM definition_generations")
_CURRENT = text(
    "SELECT checksum, context FROM breadcrumbs WHERE owner_id = :owner AND schema_name = :schema"
    " AND (ttl IS NULL OR ttl > now()) ORDER BY updated_at DESC, id DESC LIMIT 1"
)

_FORMER_CENTROIDS = text(
    "DELETE FROM domain_centroids WHERE owner_id = :owner"
    " AND version IS DISTINCT FROM CAST(:version AS text)"
)
_RELABEL = (
    update(breadcrumbs)
    .where(breadcrumbs.c.id == bindparam("record"))
    .values(domains=bindparam("labels"), domains_version=bindparam("labels_version"))
)


@dataclass
class _Target:
    version: str | None  # None: the tenant has no definition, labels are cleared
    context: Any
    quiet_since: float | None = None  # when a batch last found nothing to do
    after: uuid.UUID | None = None  # the pass goes in id order; where the last batch ended
    placing: bool = False  # labels were written: ask the unlabelled records' neighbours again
    placed_after: uuid.UUID | None = None  # where that pass's last batch ended


class Relabeller:
    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        embedder: Embedder,
        *,
        batch: int = 200,
        settle_s: float = SETTLE_S,
    ) -> None:
        self.sessions = sessions
        self.embedder = embedder
        self.batch = batch
        self.settle_s = settle_s
        self._generations: dict[uuid.UUID, int] = {}
        self._targets: dict[uuid.UUID, _Target] = {}

    async def run_once(self) -> int:
        """One batch for every tenant with outdated labels; returns how many records moved."""
        await self._refresh()
        moved = 0
        for owner, target in list(self._targets.items()):
            now = time.monotonic()
            if target.quiet_since is not None and now - target.quiet_since < self.settle_s:
                continue  # done but for late writes: one more look when the time is up
            count = await self._relabel_batch(owner, target)
            moved += count
            if count:
                target.quiet_since = None
                target.placing = target.version is not None
            elif target.after is not None:
                target.after = None  # a pass ended: once more from the start, for the skipped
            elif target.placing:
                moved += await self._place_batch(owner, target)
            elif target.quiet_since is None:
                target.quiet_since = now
            else:
                del self._targets[owner]
        PENDING_TENANTS.set(len(self._targets))
        return moved

    async def _refresh(self) -> None:
        async with self.sessions() as session, session.begin():
            changed = [
                (row.owner_id, row.generation)
                for row in await session.execute(_GENERATIONS)
                if self._generations.get(row.owner_id) != row.generation
            ]
            for owner, generation in changed:
                params = {"owner": owner, "schema": DOMAINS_SCHEMA}
                row = (await session.execute(_CURRENT, params)).first()
                version = None if row is None else str(row.checksum)
                self._targets[owner] = _Target(version, None if row is None else row.context)
                await session.execute(_FORMER_CENTROIDS, {"owner": owner, "version": version})
                self._generations[owner] = generation

    async def _relabel_batch(self, owner: uuid.UUID, target: _Target) -> int:
        async with self.sessions() as session, session.begin():
            domains = None
            if target.version is not None:
                domains = await store_domains(
                    session, owner, target.version, target.context, self.embedder
                )
            query = _outdated(owner, target.version, target.after, self.batch)
            rows = (await session.execute(query)).all()
            if rows:
                await session.execute(_RELABEL, await _labelled(session, owner, rows, domains))
                mark = processing.mark_done if domains is not None else processing.mark_not_needed
                await mark(session, owner, [row.id for row in rows], processing.LABELLED)
                target.after = rows[-1].id
        if rows:
            RELABELLED.inc(len(rows))
            log.info(
                "relabelled %d records of tenant %s for domains version %s",
                len(rows), owner, target.version or "(none: cleared)",
            )  # fmt: skip
        return len(rows)

    async def _place_batch(self, owner: uuid.UUID, target: _Target) -> int:
        """One batch of the records left unlabelled under the current version, each labelled
        by its neighbours if they now agree; returns how many were looked at."""
        assert target.version is not None
        async with self.sessions() as session, session.begin():
            domains = await store_domains(
                session, owner, target.version, target.context, self.embedder
            )
            query = _unplaced(owner, target.version, target.placed_after, self.batch)
            rows: Sequence[Any] = (await session.execute(query)).all()
            placed = [
                {"record": row.id, "labels": list(found), "labels_version": target.version}
                for row in rows
                if (found := await label_stored(session, owner, domains, row._mapping))
            ]
            if placed:
                await session.execute(_RELABEL, placed)
        if placed:
            RELABELLED.inc(len(placed))
            log.info("labelled %d records of tenant %s by their neighbours", len(placed), owner)
        target.placed_after = rows[-1].id if rows else None
        target.placing = bool(rows)
        return len(rows)


def _unplaced(owner: uuid.UUID, version: str, after: uuid.UUID | None, batch: int) -> Any:
    """The next batch of records unlabelled under ``version`` that have an embedding."""
    b = breadcrumbs.c
    return (
        select(b.id, b.llm_text, b.tags, b.embedding)
        .where(
            b.owner_id == owner,
            b.id > after if after is not None else true(),
            b.domains_version == version,
            func.cardinality(b.domains) == 0,
            b.embedding.is_not(None),
            or_(b.schema_name.is_(None), b.schema_name.not_in(sorted(UNLABELLED_SCHEMAS))),
            or_(b.ttl.is_(None), b.ttl > func.now()),
        )
        .order_by(b.id)
        .limit(batch)
        .with_for_update(skip_locked=True)
    )


def _outdated(owner: uuid.UUID, version: str | None, after: uuid.UUID | None, batch: int) -> Any:
    """The next batch of records labelled under another version, locked (records another
    transaction holds are skipped: the pass that follows the last batch finds them)."""
    b = breadcrumbs.c
    return (
        select(b.id, b.llm_text, b.tags, b.embedding)
        .where(
            b.owner_id == owner,
            b.id > after if after is not None else true(),
            # IS NOT NULL when clearing: the partial index of labelled records answers it.
            b.domains_version.is_not(None)
            if version is None
            else b.domains_version.is_distinct_from(version),
            or_(b.schema_name.is_(None), b.schema_name.not_in(sorted(UNLABELLED_SCHEMAS))),
            or_(b.ttl.is_(None), b.ttl > func.now()),
        )
        .order_by(b.id)
        .limit(batch)
        .with_for_update(skip_locked=True)
    )


async def _labelled(
    session: AsyncSession, owner: uuid.UUID, rows: Sequence[Any], domains: DomainSet | None
) -> list[dict[str, Any]]:
    """Parameters of an executemany ``UPDATE ... WHERE id = :id`` for the locked rows."""
    if domains is None:
        return [{"record": row.id, "labels": [], "labels_version": None} for row in rows]
    return [
        {
            "record": row.id,
            "labels": list(await label_stored(session, owner, domains, row._mapping)),
            "labels_version": domains.version,
        }
        for row in rows
    ]


async def run_relabelling(relabeller: Relabeller, interval_s: float) -> None:
    """Forever: drain outdated labels, then look again after ``interval_s``."""
    while True:
        try:
            while await relabeller.run_once():
                pass
        except asyncio.CancelledError:
            raise
        except Exception:
            log.warning("domain relabel failed; next attempt in %.0f s", interval_s, exc_info=True)
        await asyncio.sleep(interval_s)
