"""One record reindexed: its derived fields and a long record's chunks written, its edges
built again, its processing state recorded.

Derived fields only — ``llm_text``, ``embedding``, ``entity_keywords`` and the domain
labels follow from the content and the hints as they are now, so the record's ``version``,
``updated_at``, history and events stay as they were: nothing a reader or subscriber was
told about has changed, only how it is indexed. The write is a compare-and-set on the
version read before the batch: a record written meanwhile was derived by that write, and is
left alone.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncSession

from cairn.breadcrumbs.chunks import EmbeddedChunk, replace_chunks
from cairn.breadcrumbs.derived import (
    is_embedded,
    labelled_columns,
    not_embedded_columns,
    unlabelled_columns,
)
from cairn.breadcrumbs.repository import RECORD_COLUMNS
from cairn.context.domain_store import (
    NO_LABELS,
    UNLABELLED_SCHEMAS,
    Labels,
    label,
    label_stored,
)
from cairn.context.domains import DomainSet
from cairn.db.models import breadcrumbs
from cairn.edges.builder import EdgeOptions, build_edges
from cairn.embedding import Embedder, entity_keywords
from cairn.processing import EDGED, Outcome as Stage, record_outcomes
from cairn.processing.stages import CHUNKED, DONE_OUTCOME, NOT_NEEDED_OUTCOME
from cairn.processing.write_outcomes import derived_outcomes, not_embedded_outcomes


@dataclass(frozen=True, slots=True)
class Prepared:
    """A record with what the batch computed for it before its transaction."""

    row: Mapping[str, Any]
    llm_text: str | None
    embedding: list[float] | None
    chunks: Sequence[EmbeddedChunk] = ()  # none: a short text, or one never embedded


@dataclass(frozen=True, slots=True)
class Outcome:
    skipped: bool = False  # written or deleted since the batch read it
    changed: bool = False  # its llm_text differs from the stored one
    embedded: bool = False
    edges: int = 0


@dataclass(frozen=True, slots=True)
class Recompute:
    """What every record of a batch is recomputed with."""

    domains: DomainSet | None
    edges: EdgeOptions
    embedder: Embedder  # for what a record needs embedded beyond its one vector


async def reindex_record(session: AsyncSession, prepared: Prepared, using: Recompute) -> Outcome:
    """Write ``prepared``'s derived fields and rebuild its edges, in the batch's transaction
    (the caller wraps it in a savepoint, so one failing record fails alone)."""
    row = prepared.row
    values = derived_values(prepared, using.domains)
    if using.domains is not None and values.get("domains") == [] and prepared.embedding:
        # Placed by nothing but its neighbours, as a write would place it.
        found = await label_stored(session, row["owner_id"], using.domains, {**row, **values})
        values["domains"] = list(found)
    stored = await _store(session, row["owner_id"], row["id"], row["version"], values)
    if stored is None:
        return Outcome(skipped=True)
    await replace_chunks(session, row["owner_id"], row["id"], prepared.chunks)
    counts = await build_edges(session, stored, using.edges)
    outcomes = stage_outcomes(row, values, chunked=bool(prepared.chunks))
    await record_outcomes(session, row["owner_id"], row["id"], outcomes)
    return Outcome(
        changed=prepared.llm_text != row["llm_text"],
        embedded=prepared.embedding is not None,
        edges=sum(counts.values()),
    )


def stage_outcomes(
    row: Mapping[str, Any], values: Mapping[str, Any], *, chunked: bool = False
) -> dict[str, Stage]:
    """The processing state a reindexed record is left in: every stage it has done now."""
    if not is_embedded(row):
        return not_embedded_outcomes() | {CHUNKED: NOT_NEEDED_OUTCOME}
    outcomes = derived_outcomes(embedded=True, labelled=values.get("domains_version"))
    return outcomes | {
        EDGED: DONE_OUTCOME,
        CHUNKED: DONE_OUTCOME if chunked else NOT_NEEDED_OUTCOME,
    }


def derived_values(prepared: Prepared, domains: DomainSet | None) -> dict[str, Any]:
    """The columns to write, as the write path derives them (``breadcrumbs.derived``), with
    the domains read once for the batch."""
    row = prepared.row
    if not is_embedded(row):
        return not_embedded_columns(row) | unlabelled_columns(row)
    text = prepared.llm_text or ""
    out: dict[str, Any] = {
        "entity_keywords": entity_keywords(row["tags"], text),
        "llm_text": text,
        "embedding": prepared.embedding,
    }
    labels = NO_LABELS
    if domains is not None and row["schema_name"] not in UNLABELLED_SCHEMAS:
        labels = Labels(label(domains, {**row, **out}), domains.version)
    return out | labelled_columns(labels, row)


async def _store(
    session: AsyncSession,
    owner_id: uuid.UUID,
    record_id: uuid.UUID,
    version: int,
    values: dict[str, Any],
) -> Mapping[Any, Any] | None:
    b = breadcrumbs.c
    statement = (
        update(breadcrumbs)
        .where(b.id == record_id, b.owner_id == owner_id, b.version == version)
        .values(values)
        .returning(*RECORD_COLUMNS)
    )
    return (await session.execute(statement)).mappings().one_or_none()
