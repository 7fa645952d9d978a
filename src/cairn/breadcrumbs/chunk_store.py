"""Queries of ``breadcrumb_chunks``: replace a record's chunks, read them back, and the
"best chunk" similarity the searches fuse with a record's own."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy import ColumnElement, Select, delete, func, insert, null, select
from sqlalchemy.ext.asyncio import AsyncSession

from cairn.db.models import breadcrumb_chunks

if TYPE_CHECKING:
    from cairn.breadcrumbs.chunks import EmbeddedChunk

chunks = breadcrumb_chunks.c


async def delete_chunks(session: AsyncSession, owner_id: uuid.UUID, record_id: uuid.UUID) -> None:
    await session.execute(
        delete(breadcrumb_chunks).where(
            chunks.owner_id == owner_id, chunks.breadcrumb_id == record_id
        )
    )


async def insert_chunks(
    session: AsyncSession,
    owner_id: uuid.UUID,
    record_id: uuid.UUID,
    embedded: Sequence[EmbeddedChunk],
) -> None:
    if not embedded:
        return
    rows = [
        {
            "owner_id": owner_id, "breadcrumb_id": record_id, "ordinal": e.chunk.ordinal,
            "char_start": e.chunk.start, "char_end": e.chunk.end, "text": e.chunk.text,
            "embedding": e.embedding,
        }
        for e in embedded
    ]  # fmt: skip
    await session.execute(insert(breadcrumb_chunks), rows)


async def chunk_rows(
    session: AsyncSession,
    owner_id: uuid.UUID,
    record_ids: Sequence[uuid.UUID],
    probe: Sequence[float] | None = None,
) -> list[dict[str, Any]]:
    """The chunks of these records (``breadcrumb_id, ordinal, char_start, char_end, text,
    similarity``), in order; ``similarity`` to ``probe`` (None without one)."""
    similarity = (
        (1 - chunks.embedding.cosine_distance(list(probe))).label("similarity")
        if probe is not None
        else null().label("similarity")
    )
    query = (
        select(
            chunks.breadcrumb_id, chunks.ordinal, chunks.char_start, chunks.char_end,
            chunks.text, similarity,
        )
        .where(chunks.owner_id == owner_id, chunks.breadcrumb_id.in_(list(record_ids)))
        .order_by(chunks.breadcrumb_id, chunks.ordinal)
    )  # fmt: skip
    return [dict(row) for row in (await session.execute(query)).mappings().all()]


def nearest_records(owner_id: uuid.UUID, vector: ColumnElement[Any], *, limit: int) -> Select[Any]:
    """The records of the ``limit`` chunks nearest to ``vector`` (the HNSW index)."""
    distance = chunks.embedding.cosine_distance(vector)
    return (
        select(chunks.breadcrumb_id)
        .where(chunks.owner_id == owner_id)
        .order_by(distance)
        .limit(limit)
    )


def best_similarity(
    owner_id: uuid.UUID, vector: ColumnElement[Any], records: Select[Any]
) -> Select[Any]:
    """``breadcrumb_id, similarity``: the best chunk of each of ``records`` that has any."""
    similarity = func.max(1 - chunks.embedding.cosine_distance(vector))
    return (
        select(chunks.breadcrumb_id, similarity.label("similarity"))
        .where(chunks.owner_id == owner_id, chunks.breadcrumb_id.in_(records))
        .group_by(chunks.breadcrumb_id)
    )


async def has_chunks(session: AsyncSession, owner_id: uuid.UUID) -> bool:
    """Whether any record of the tenant is long (one probe of the owner index)."""
    query = select(chunks.owner_id).where(chunks.owner_id == owner_id).limit(1)
    return (await session.execute(query)).first() is not None
