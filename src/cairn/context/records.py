"""Loading ``Record``s for the context builder: one query for any number of ids.

With a :class:`RecordCache`, the query still decides which records exist, are live, are
the owner's and are not blacklisted, and at which version; but a record already cached
at that version comes back without its content (title, tags, context, hints), which is
taken from the cache instead of being sent and decoded again. Domain labels are always
sent: the background relabel changes them without a new version. A record sent comes
with its embedding, which the cache keeps for context.ranking."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

import numpy as np
from numpy.typing import NDArray
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from cairn.context.model import Record
from cairn.db.driver import DriverQuery
from cairn.transforms.cache import LRU

COLUMNS = (
    "id, owner_id, schema_name, title, tags, context, llm_hints, created_at, updated_at, version,"
    " domains"
)
LIVE = "(ttl IS NULL OR ttl > now())"
NOT_EXCLUDED = "(schema_name IS NULL OR NOT (schema_name = ANY(:excluded)))"


def isolated_sql(alias: str) -> str:
    """A record (``alias``) is isolated from the trigger's domain: it has domain labels and
    every one of them is in ``:isolated`` (context.domains). Unlabelled records never are by
    their labels; an isolating assembly judges them once the graph is loaded (context.judge)."""
    return f"(cardinality({alias}.domains) > 0 AND {alias}.domains <@ CAST(:isolated AS text[]))"


def to_record(row: Mapping[Any, Any]) -> Record:
    return Record(
        id=row["id"],
        owner_id=row["owner_id"],
        schema_name=row["schema_name"],
        title=row["title"],
        tags=tuple(row["tags"]),
        context=row["context"],
        llm_hints=row["llm_hints"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        version=row["version"],
        domains=tuple(row["domains"]),
    )


async def load_records(
    session: AsyncSession, owner_id: uuid.UUID, ids: Iterable[uuid.UUID], excluded: frozenset[str]
) -> dict[uuid.UUID, Record]:
    query = text(
        f"SELECT {COLUMNS} FROM breadcrumbs WHERE owner_id = :owner AND id = ANY(:ids)"
        f" AND {LIVE} AND {NOT_EXCLUDED}"
    )
    params = {"owner": owner_id, "ids": list(set(ids)), "excluded": sorted(excluded)}
    rows = (await session.execute(query, params)).mappings().all()
    return {row["id"]: to_record(row) for row in rows}


async def load_trigger(
    session: AsyncSession, owner_id: uuid.UUID, trigger_id: uuid.UUID
) -> tuple[Record, list[str], str] | None:
    """The trigger, if live, with its stored keyword pointers and ``llm_text``, in one
    query."""
    rows = await _TRIGGER.fetch(session, {"owner": owner_id, "id": trigger_id})
    if not rows:
        return None
    row = rows[0]
    return to_record(row), list(row["entity_keywords"] or []), row["llm_text"] or ""


_TRIGGER = DriverQuery(
    text(
        f"SELECT {COLUMNS}, entity_keywords, llm_text FROM breadcrumbs"
        f" WHERE owner_id = :owner AND id = :id AND {LIVE}"
    )
)


def unit_vector(sent: bytes) -> NDArray[np.float32]:
    """An embedding from pgvector's binary form (``vector_send``: a 4-byte header, then
    big-endian float4s), scaled to unit length."""
    vector = np.frombuffer(sent, dtype=">f4", offset=4).astype(np.float32)
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm > 0 else vector


class RecordCache:
    """Records by id at their latest loaded version, across assemblies (bounded, LRU), and
    their embeddings as unit vectors. An embedding changes only with the record's text, so
    with its version; one filled in late is cached once it is read."""

    def __init__(self, size: int) -> None:
        self._records: LRU[uuid.UUID, Record] = LRU(size)
        self._vectors: LRU[uuid.UUID, tuple[int, NDArray[np.float32]]] = LRU(size)

    def known(self, ids: Iterable[uuid.UUID]) -> dict[uuid.UUID, Record]:
        """Each of ``ids`` that is cached, as cached (at its ``version``)."""
        wanted = list(ids)
        found = zip(wanted, self._records.get_many(wanted), strict=True)
        return {record_id: record for record_id, record in found if record is not None}

    def get(self, record_id: uuid.UUID, version: int) -> Record | None:
        record = self._records.get(record_id)
        return record if record is not None and record.version == version else None

    def put(self, record: Record) -> None:
        if record.version is not None:
            self._records.put(record.id, record)

    def put_many(self, records: Iterable[Record]) -> None:
        self._records.put_many((r.id, r) for r in records if r.version is not None)

    def vector(self, record_id: uuid.UUID, version: int) -> NDArray[np.float32] | None:
        found = self._vectors.get(record_id)
        return found[1] if found is not None and found[0] == version else None

    def put_vector(self, record_id: uuid.UUID, version: int, vector: NDArray[np.float32]) -> None:
        self._vectors.put(record_id, (version, vector))

    def __len__(self) -> int:
        return len(self._records)


def cached_vectors(
    records: Iterable[Record], cache: RecordCache | None
) -> tuple[dict[uuid.UUID, NDArray[np.float32]], list[uuid.UUID]]:
    """The records' unit vectors ``cache`` holds at their version, and the ids of the
    rest (for the caller's one query)."""
    vectors: dict[uuid.UUID, NDArray[np.float32]] = {}
    missing: list[uuid.UUID] = []
    for record in records:
        cached = None
        if cache is not None and record.version is not None:
            cached = cache.vector(record.id, record.version)
        if cached is None:
            missing.append(record.id)
        else:
            vectors[record.id] = cached
    return vectors, missing


# What a record cached at its version has as it is: only its domains can change without a
# new version, so only they (and the id) are sent for it.
_CONTENT_COLUMNS = (
    ("owner_id", "b.owner_id"), ("schema_name", "b.schema_name"),
    ("created_at", "b.created_at"), ("updated_at", "b.updated_at"),
    ("title", "b.title"), ("tags", "b.tags"), ("context", "b.context"),
    ("llm_hints", "b.llm_hints"),
)  # fmt: skip


# The cache's version of each wanted id rides beside it (NULL: not cached), and each id is
# looked up on its own (a LATERAL subquery, kept apart from the join by its LIMIT): one
# index probe per id under whatever plan PostgreSQL keeps for the prepared statement.
# (Joined the other way, to an ``unnest`` of the cached ids alone, the generic plan it
# settled on after five runs rescanned that ``unnest`` for every record read: ~0.6 of the
# statement's ~2.4 ms at 100k, benchmarks/results/rls.md.)
_CACHED = "(k.version IS NOT DISTINCT FROM b.version)"
_READ = "id, version, domains, " + ", ".join(column for column, _ in _CONTENT_COLUMNS)


def _cached_columns(vectors: bool) -> str:
    sent = [*_CONTENT_COLUMNS, ("vector", "vector_send(b.embedding)" if vectors else "NULL")]
    return ", ".join(f"CASE WHEN NOT {_CACHED} THEN {v} END AS {c}" for c, v in sent)


def _cached_query(vectors: bool) -> str:
    return (
        f"SELECT b.id, b.version, b.domains, {_CACHED} AS cached, {_cached_columns(vectors)}"
        " FROM unnest(CAST(:ids AS uuid[]), CAST(:versions AS int[])) AS k(id, version)"
        f" CROSS JOIN LATERAL (SELECT {_READ}{', embedding' if vectors else ''}"
        "  FROM breadcrumbs WHERE id = k.id AND owner_id = :owner"
        f"  AND {LIVE} AND {NOT_EXCLUDED} LIMIT 1) AS b"
    )


# An embedding is 1.5 kB a record to send and decode; an assembly that neither compares
# content nor judges domains never reads it (context.ranking and context.isolation fetch
# what the cache lacks), so it is sent only when asked for.
_CACHED_QUERIES = {vectors: DriverQuery(text(_cached_query(vectors))) for vectors in (True, False)}


async def load_records_cached(
    session: AsyncSession,
    owner_id: uuid.UUID,
    ids: Iterable[uuid.UUID],
    excluded: frozenset[str],
    cache: RecordCache,
    *,
    vectors: bool = True,
) -> dict[uuid.UUID, Record]:
    """As :func:`load_records`; records cached at their current version are not sent, and
    the others' embeddings only with ``vectors``."""
    wanted = list(set(ids))
    known = cache.known(wanted)
    query = _CACHED_QUERIES[vectors]
    versions = [record.version if (record := known.get(i)) else None for i in wanted]
    params = {"owner": owner_id, "ids": wanted, "versions": versions, "excluded": sorted(excluded)}
    rows = await query.fetch(session, params)
    records: dict[uuid.UUID, Record] = {}
    fresh: list[Record] = []
    for row in rows:
        if not row["cached"]:
            record = to_record(row)
            fresh.append(record)
            if row["vector"] is not None:
                cache.put_vector(record.id, row["version"], unit_vector(row["vector"]))
        else:  # as `known` holds it: the query matched its version
            record = known[row["id"]]
            if record.domains != tuple(row["domains"]):  # relabelled at the same version
                record = replace(record, domains=tuple(row["domains"]))
                fresh.append(record)
        records[record.id] = record
    cache.put_many(fresh)
    return records
