"""Vector search: the records nearest a query vector, each scored by the better of its own
vector and its best chunk (long records, see ``breadcrumbs.chunks``)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from pgvector.sqlalchemy import Vector
from sqlalchemy import CTE, Select, bindparam, func, select, text, union
from sqlalchemy.ext.asyncio import AsyncSession

from cairn.breadcrumbs import chunk_store
from cairn.breadcrumbs.repository import LIST_COLUMNS, ListFilter, Row, filter_clauses
from cairn.db.models import EMBEDDING_DIM, breadcrumbs


async def search_vector(
    session: AsyncSession,
    owner_id: uuid.UUID,
    query_vector: Sequence[float],
    flt: ListFilter,
    *,
    nn: int,
) -> Sequence[Row]:
    """Nearest records with a ``score`` column: the cosine similarity of the record's own
    vector or of its best chunk (long records, see ``breadcrumbs.chunks``), whichever is
    higher.

    Unfiltered queries nominate candidates with the HNSW indexes of both tables. pgvector
    filters *after* the HNSW scan, which silently returns fewer rows than asked when a
    filter is selective, so filtered queries rank the filtered subset exactly instead.
    """
    # One parameter however often the query names it: a vector is ~8 KB of text to send
    # and parse.
    vector = bindparam("query_vector", list(query_vector), type_=Vector(EMBEDDING_DIM))
    distance = breadcrumbs.c.embedding.cosine_distance(vector)
    clauses = [*filter_clauses(owner_id, flt), breadcrumbs.c.embedding.is_not(None)]
    own = select(breadcrumbs.c.id, (1 - distance).label("own")).where(*clauses)
    if flt == ListFilter() and not await chunk_store.has_chunks(session, owner_id):
        # No long records: the HNSW scan of the records alone (an index probe decides).
        await session.execute(text(f"SET LOCAL hnsw.ef_search = {max(40, 2 * nn):d}"))
        columns = [*breadcrumbs.c[LIST_COLUMNS], (1 - distance).label("score")]
        plain: Sequence[Row] = (
            (await session.execute(select(*columns).where(*clauses).order_by(distance).limit(nn)))
            .mappings()
            .all()
        )
        return plain
    if flt != ListFilter():
        candidates = own.cte("candidates").prefix_with("MATERIALIZED")
    else:
        ef_search = max(40, 2 * nn)
        await session.execute(text(f"SET LOCAL hnsw.ef_search = {ef_search:d}"))
        by_chunk = chunk_store.nearest_records(owner_id, vector, limit=max(40, 4 * nn))
        nearest = own.order_by(distance).limit(nn).with_only_columns(breadcrumbs.c.id)
        nominated = union(nearest, by_chunk).cte("nominated")
        # Joined from the few nominated ids (index lookups), not a scan filtered by them.
        joined = nominated.join(breadcrumbs, breadcrumbs.c.id == nominated.c.id)
        candidates = own.select_from(joined).cte("candidates")
    best = chunk_store.best_similarity(owner_id, vector, select(candidates.c.id)).cte("best")
    query = _best_first(candidates, best, nn, few=flt == ListFilter())
    rows: Sequence[Row] = (await session.execute(query)).mappings().all()
    return rows


def _best_first(candidates: CTE, best: CTE, nn: int, *, few: bool) -> Select[Any]:
    """The ``nn`` best candidates with their columns. ``few`` (the nominated ones): joined
    whole; else (a filtered subset, maybe thousands) the columns of the ``nn`` kept only."""
    score = func.greatest(candidates.c.own, best.c.similarity).label("score")
    scored = candidates.outerjoin(best, best.c.breadcrumb_id == candidates.c.id)
    columns = breadcrumbs.c[LIST_COLUMNS]
    if few:
        return (
            select(*columns, score)
            .select_from(scored.join(breadcrumbs, breadcrumbs.c.id == candidates.c.id))
            .order_by(score.desc(), candidates.c.id)
            .limit(nn)
        )
    ranked = (
        select(candidates.c.id, score)
        .select_from(scored)
        .order_by(score.desc(), candidates.c.id)
        .limit(nn)
        .subquery("ranked")
    )
    return (
        select(*columns, ranked.c.score)
        .select_from(ranked.join(breadcrumbs, breadcrumbs.c.id == ranked.c.id))
        .order_by(ranked.c.score.desc(), ranked.c.id)
    )
