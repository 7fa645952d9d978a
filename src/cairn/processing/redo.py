"""Each stage run again for the rows the retry job claimed, and its result recorded in the
same transaction as the stage's own write."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from cairn.breadcrumbs import repository as breadcrumbs
from cairn.breadcrumbs.chunks import embed_chunks, replace_chunks
from cairn.context.domain_store import labels_for
from cairn.db.engine import tenant_session
from cairn.db.models import breadcrumbs as b
from cairn.edges.builder import EdgeOptions, build_edges
from cairn.edges.repository import CONTEXT_SCHEMA
from cairn.embedding import Embedder, entity_keywords, tag_pointers
from cairn.processing import repository
from cairn.processing.repository import Due
from cairn.processing.retry import Redo, RetryJob
from cairn.processing.stages import (
    CHUNKED,
    DONE_OUTCOME,
    EDGED,
    EMBEDDED,
    FAILED,
    KEYED,
    LABELLED,
    NOT_NEEDED_OUTCOME,
    failed,
)

log = logging.getLogger(__name__)

_COLUMNS = (b.c.id, b.c.owner_id, b.c.schema_name, b.c.llm_text, b.c.tags, b.c.embedding)


async def _records(job: RetryJob, items: Sequence[Due]) -> dict[uuid.UUID, Any]:
    async with job.system() as session:
        query = select(*_COLUMNS).where(b.c.id.in_([due.breadcrumb_id for due in items]))
        return {row.id: row for row in (await session.execute(query)).all()}


async def _vectors(embedder: Embedder, texts: list[str]) -> list[list[float] | BaseException]:
    """One batch; when it fails, one text at a time, so one bad text fails alone."""
    try:
        return list(await embedder.embed(texts))
    except Exception:
        out: list[list[float] | BaseException] = []
        for text in texts:
            try:
                (vector,) = await embedder.embed([text])
                out.append(vector)
            except Exception as error:
                out.append(error)
        return out


async def redo_embedded(job: RetryJob, items: Sequence[Due]) -> None:
    """Embed the stored ``llm_text``; a new vector makes labels and semantic edges due."""
    rows = await _records(job, items)
    todo = [due for due in items if _embeddable(rows.get(due.breadcrumb_id))]
    vectors = await _vectors(job.embedder, [rows[due.breadcrumb_id].llm_text for due in todo])
    results = dict(zip((due.breadcrumb_id for due in todo), vectors, strict=True))
    async with job.system() as session, session.begin():
        for due in items:
            result = results.get(due.breadcrumb_id)
            if result is None:
                await job.finish(session, due, NOT_NEEDED_OUTCOME)
            elif isinstance(result, BaseException):
                await job.finish(session, due, failed(result))
            else:
                text = rows[due.breadcrumb_id].llm_text
                if await breadcrumbs.store_embedding(session, due.breadcrumb_id, text, result):
                    await job.finish(session, due, DONE_OUTCOME)
                    for stage in (LABELLED, EDGED):  # both read the vector
                        await repository.mark_pending(
                            session, due.owner_id, [due.breadcrumb_id], stage
                        )


def _embeddable(row: Any) -> bool:
    return row is not None and row.llm_text is not None and row.schema_name != CONTEXT_SCHEMA


async def redo_chunked(job: RetryJob, items: Sequence[Due]) -> None:
    """Cut and embed the stored ``llm_text`` again, replacing whatever chunks it had."""
    rows = await _records(job, items)
    for due in items:
        row = rows.get(due.breadcrumb_id)
        text = row.llm_text if row is not None and _embeddable(row) else None
        try:
            chunks = await embed_chunks(text, job.embedder, job.chunk_window)
            outcome = DONE_OUTCOME if chunks else NOT_NEEDED_OUTCOME
        except Exception as error:
            chunks, outcome = [], failed(error)
        async with job.system() as session, session.begin():
            if row is not None and outcome.state != FAILED and await _unchanged(session, row):
                await replace_chunks(session, due.owner_id, due.breadcrumb_id, chunks)
            await job.finish(session, due, outcome)


async def _unchanged(session: AsyncSession, row: Any) -> bool:
    """The record still has the text its chunks were cut from (a write may have won)."""
    query = select(b.c.llm_text).where(b.c.id == row.id).with_for_update()
    return bool((await session.execute(query)).scalar_one_or_none() == row.llm_text)


async def redo_keyed(job: RetryJob, items: Sequence[Due]) -> None:
    """Keyword pointers from the stored tags and ``llm_text``."""
    rows = await _records(job, items)
    async with job.system() as session, session.begin():
        for due in items:
            row = rows.get(due.breadcrumb_id)
            if row is None:
                continue
            keywords = (
                tag_pointers(row.tags)
                if row.llm_text is None or row.schema_name == CONTEXT_SCHEMA
                else entity_keywords(row.tags, row.llm_text)
            )
            await session.execute(
                update(b).where(b.c.id == row.id).values(entity_keywords=keywords)
            )
            await job.finish(session, due, DONE_OUTCOME)


async def redo_labelled(job: RetryJob, items: Sequence[Due]) -> None:
    """Labels under the tenant's current domains definition (none: not needed)."""
    rows = await _records(job, items)
    for due in items:
        row = rows.get(due.breadcrumb_id)
        if row is None:
            continue
        async with job.system() as session, session.begin():
            try:
                labels = await labels_for(session, due.owner_id, job.embedder, row._mapping)
            except Exception as error:
                await job.finish(session, due, failed(error))
                continue
            if labels.version is None:
                await job.finish(session, due, NOT_NEEDED_OUTCOME)
                continue
            labelled = {"domains": list(labels.domains), "domains_version": labels.version}
            await session.execute(update(b).where(b.c.id == row.id).values(**labelled))
            await job.finish(session, due, DONE_OUTCOME)


async def redo_edged(job: RetryJob, items: Sequence[Due]) -> None:
    """The record's edges, as the worker builds them, within its tenant."""
    for due in items:
        try:
            async with tenant_session(job.tenants, due.owner_id) as session, session.begin():
                row = await breadcrumbs.get(session, due.owner_id, due.breadcrumb_id)
                outcome = NOT_NEEDED_OUTCOME
                if row is not None and row["schema_name"] != CONTEXT_SCHEMA:
                    await build_edges(session, row, EdgeOptions())
                    outcome = DONE_OUTCOME
                await job.finish(session, due, outcome)
        except Exception as error:
            log.warning("edges of %s failed again", due.breadcrumb_id, exc_info=True)
            async with tenant_session(job.tenants, due.owner_id) as session, session.begin():
                await job.finish(session, due, failed(error))


REDO: dict[str, Redo] = {
    EMBEDDED: redo_embedded,
    CHUNKED: redo_chunked,
    KEYED: redo_keyed,
    LABELLED: redo_labelled,
    EDGED: redo_edged,
}
