"""Every breadcrumb query. All of them are scoped by ``owner_id`` (row-level security scopes
them again, to the transaction's tenant), except ``get_granted`` (another tenant's record,
through an ACL grant) and the processing retry job, which runs as the schema owner.

The ``*_serialized`` writes take the context as JSON text, cast to ``jsonb`` by PostgreSQL:
for a large document serialized once by the caller rather than again by the driver."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Text,
    and_,
    cast,
    delete,
    func,
    insert,
    literal,
    or_,
    select,
    update,
)
from sqlalchemy.dialects.postgresql import JSONB, insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncSession

from cairn.acl import repository as acl
from cairn.db.models import (
    breadcrumb_history,
    breadcrumbs,
    idempotency_keys,
    outbox,
)
from cairn.events.payloads import ChangeEvent
from cairn.principal import Principal

# A record as stored: a database row, or one assembled from a write's RETURNING and the
# context the writer already holds.
Row = Mapping[Any, Any]


@dataclass(frozen=True, slots=True)
class ListFilter:
    schema_name: str | None = None
    tag: str | None = None
    any_tags: Sequence[str] = ()
    all_tags: Sequence[str] = ()


@dataclass(frozen=True, slots=True)
class Cursor:
    updated_at: datetime
    id: uuid.UUID


# Every column but the generated lexemes, which only the database's searches read.
RECORD_COLUMNS = [column for column in breadcrumbs.c if column.name != "search_vector"]
_CREATED_COLUMNS = [column for column in RECORD_COLUMNS if column.name != "embedding"]
# What a write returns when the writer holds the context it wrote.
_WRITTEN_COLUMNS = [column for column in RECORD_COLUMNS if column.name != "context"]


def written_columns() -> list[Any]:
    """What a write returns when the writer holds the context it wrote."""
    return list(_WRITTEN_COLUMNS)


def _live() -> ColumnElement[bool]:
    return or_(breadcrumbs.c.ttl.is_(None), breadcrumbs.c.ttl > func.now())


def filter_clauses(owner_id: uuid.UUID, flt: ListFilter) -> list[ColumnElement[bool]]:
    clauses = [breadcrumbs.c.owner_id == owner_id, _live()]
    if flt.schema_name is not None:
        clauses.append(breadcrumbs.c.schema_name == flt.schema_name)
    if flt.tag is not None:
        clauses.append(breadcrumbs.c.tags.contains([flt.tag]))
    if flt.any_tags:
        clauses.append(breadcrumbs.c.tags.overlap(list(flt.any_tags)))
    if flt.all_tags:
        clauses.append(breadcrumbs.c.tags.contains(list(flt.all_tags)))
    return clauses


async def insert_breadcrumb(session: AsyncSession, values: dict[str, Any]) -> Row:
    """The stored row but its vector and lexemes: the writer holds the vector it wrote, and
    reading 384 floats back as text and parsing them cost the event loop on every create."""
    statement = insert(breadcrumbs).values(**values).returning(*_CREATED_COLUMNS)
    result = await session.execute(statement)
    row: Row = result.mappings().one()
    return row


async def insert_serialized_if_absent(
    session: AsyncSession, values: dict[str, Any], context_json: str
) -> Row | None:
    """Insert unless a record with this id exists (then None): the create half of an upsert.
    Returns every column but the context."""
    statement = (
        pg_insert(breadcrumbs)
        .values(**values, context=_jsonb(context_json))
        .on_conflict_do_nothing(index_elements=["id"])
        .returning(*_WRITTEN_COLUMNS)
    )
    row: Row | None = (await session.execute(statement)).mappings().one_or_none()
    return row


async def get(
    session: AsyncSession,
    owner_id: uuid.UUID,
    breadcrumb_id: uuid.UUID,
    *,
    for_update: bool = False,
) -> Row | None:
    query = select(*RECORD_COLUMNS).where(
        breadcrumbs.c.id == breadcrumb_id, breadcrumbs.c.owner_id == owner_id, _live()
    )
    if for_update:
        query = query.with_for_update()
    return (await session.execute(query)).mappings().one_or_none()


async def lock_for_replace(
    session: AsyncSession, owner_id: uuid.UUID, breadcrumb_id: uuid.UUID, context_field: str
) -> Row | None:
    """Lock the record for a replacement; returns its ``id``, ``version``, ``created_by`` and
    ``context[context_field]`` (as ``stored``), without reading the whole context."""
    query = (
        select(
            breadcrumbs.c.id,
            breadcrumbs.c.version,
            breadcrumbs.c.created_by,
            breadcrumbs.c.context[context_field].label("stored"),
        )
        .where(breadcrumbs.c.id == breadcrumb_id, breadcrumbs.c.owner_id == owner_id, _live())
        .with_for_update()
    )
    return (await session.execute(query)).mappings().one_or_none()


async def get_granted(
    session: AsyncSession, principal: Principal, breadcrumb_id: uuid.UUID, actions: list[str]
) -> Row | None:
    """Another tenant's record, when an ACL entry grants the caller one of ``actions`` on it
    (row-level security shows such records to the grantee, and nothing else)."""
    query = select(*RECORD_COLUMNS).where(
        breadcrumbs.c.id == breadcrumb_id,
        breadcrumbs.c.id.in_(acl.granted_ids(principal, actions)),
        _live(),
    )
    return (await session.execute(query)).mappings().one_or_none()


async def get_many(
    session: AsyncSession, owner_id: uuid.UUID, breadcrumb_ids: Sequence[uuid.UUID]
) -> Sequence[Row]:
    query = select(*RECORD_COLUMNS).where(
        breadcrumbs.c.id.in_(list(breadcrumb_ids)), breadcrumbs.c.owner_id == owner_id, _live()
    )
    return (await session.execute(query)).mappings().all()


def _at_version(owner_id: uuid.UUID, breadcrumb_id: uuid.UUID, version: int) -> tuple[Any, ...]:
    """The compare-and-set condition: this record of this owner, still at ``version``."""
    return (
        breadcrumbs.c.id == breadcrumb_id,
        breadcrumbs.c.owner_id == owner_id,
        breadcrumbs.c.version == version,
    )


async def update_if_version(
    session: AsyncSession,
    owner_id: uuid.UUID,
    breadcrumb_id: uuid.UUID,
    expected_version: int,
    values: dict[str, Any],
) -> Row | None:
    """Compare-and-set in one statement: None when the version moved on (or the row is gone)."""
    statement = (
        update(breadcrumbs)
        .where(*_at_version(owner_id, breadcrumb_id, expected_version))
        .values(**values, version=breadcrumbs.c.version + 1, updated_at=func.now())
        .returning(breadcrumbs)
    )
    row: Row | None = (await session.execute(statement)).mappings().one_or_none()
    return row


async def replace_serialized_if_version(
    session: AsyncSession,
    owner_id: uuid.UUID,
    breadcrumb_id: uuid.UUID,
    expected_version: int,
    values: dict[str, Any],
    context_json: str,
) -> Row | None:
    """``update_if_version`` with the context as JSON text; returns every column but it."""
    statement = (
        update(breadcrumbs)
        .where(*_at_version(owner_id, breadcrumb_id, expected_version))
        .values(**values, context=_jsonb(context_json))
        .values(version=breadcrumbs.c.version + 1, updated_at=func.now())
        .returning(*_WRITTEN_COLUMNS)
    )
    row: Row | None = (await session.execute(statement)).mappings().one_or_none()
    return row


def _jsonb(document: str) -> ColumnElement[Any]:
    return cast(literal(document, Text), JSONB)


async def delete_breadcrumb(
    session: AsyncSession, owner_id: uuid.UUID, breadcrumb_id: uuid.UUID
) -> Row | None:
    statement = (
        delete(breadcrumbs)
        .where(breadcrumbs.c.id == breadcrumb_id, breadcrumbs.c.owner_id == owner_id)
        .returning(breadcrumbs)
    )
    return (await session.execute(statement)).mappings().one_or_none()


async def list_breadcrumbs(
    session: AsyncSession,
    owner_id: uuid.UUID,
    flt: ListFilter,
    *,
    limit: int,
    offset: int = 0,
    after: Cursor | None = None,
) -> Sequence[Row]:
    clauses = filter_clauses(owner_id, flt)
    if after is not None:
        clauses.append(
            or_(
                breadcrumbs.c.updated_at < after.updated_at,
                and_(breadcrumbs.c.updated_at == after.updated_at, breadcrumbs.c.id < after.id),
            )
        )
    query = (
        select(*breadcrumbs.c[LIST_COLUMNS])
        .where(*clauses)
        .order_by(breadcrumbs.c.updated_at.desc(), breadcrumbs.c.id.desc())
        .limit(limit)
        .offset(offset)
    )
    return (await session.execute(query)).mappings().all()


LIST_COLUMNS = (
    "id", "title", "tags", "schema_name", "version", "updated_at", "created_at",
    "description", "semantic_version", "context", "llm_hints", "domains",
)  # fmt: skip


async def insert_history(session: AsyncSession, row: Row, *, change: str) -> None:
    await session.execute(
        insert(breadcrumb_history).values(
            breadcrumb_id=row["id"],
            owner_id=row["owner_id"],
            version=row["version"],
            title=row["title"],
            tags=row["tags"],
            context=row["context"],
            checksum=row["checksum"],
            change=change,
            updated_at=row["updated_at"],
            updated_by=row["updated_by"],
        )
    )


async def record_stored_change(
    session: AsyncSession, event: ChangeEvent, breadcrumb_id: uuid.UUID, *, change: str
) -> None:
    """``insert_history`` and ``outbox.enqueue`` in one statement, both copying the record
    as this transaction now stores it: its context is not sent again, and is the event's
    ``context`` whatever ``event`` holds there (in the outbox's own column, as stored:
    cairn.events.outbox)."""
    b = breadcrumbs.c
    this_record = (b.id == breadcrumb_id, b.owner_id == event.owner_id)
    history_row = select(
        b.id, b.owner_id, b.version, b.title, b.tags, b.context, b.checksum,
        literal(change, Text), b.updated_at, b.updated_by,
    ).where(*this_record)  # fmt: skip
    history_columns = [
        "breadcrumb_id", "owner_id", "version", "title", "tags", "context", "checksum",
        "change", "updated_at", "updated_by",
    ]  # fmt: skip
    history = insert(breadcrumb_history).from_select(history_columns, history_row)
    rest = {key: value for key, value in event.payload.items() if key != "context"}
    event_row = select(
        literal(event.owner_id, b.owner_id.type),
        literal(event.subject, Text),
        literal(event.event_id, b.id.type),
        literal(rest, JSONB),
        b.context,
    ).where(*this_record)
    columns = ["owner_id", "subject", "msg_id", "payload", "context"]
    statement = insert(outbox).from_select(columns, event_row)
    await session.execute(statement.add_cte(history.cte("history")))


async def history(
    session: AsyncSession, owner_id: uuid.UUID, breadcrumb_id: uuid.UUID, *, limit: int
) -> Sequence[Row]:
    query = (
        select(breadcrumb_history)
        .where(
            breadcrumb_history.c.breadcrumb_id == breadcrumb_id,
            breadcrumb_history.c.owner_id == owner_id,
        )
        .order_by(breadcrumb_history.c.version.desc())
        .limit(limit)
    )
    return (await session.execute(query)).mappings().all()


async def prune_history(
    session: AsyncSession, owner_id: uuid.UUID, breadcrumb_id: uuid.UUID, *, below_version: int
) -> None:
    """Delete the record's history versions older than ``below_version``."""
    h = breadcrumb_history.c
    await session.execute(
        delete(breadcrumb_history).where(
            h.breadcrumb_id == breadcrumb_id, h.owner_id == owner_id, h.version < below_version
        )
    )


async def find_idempotency_key(session: AsyncSession, owner_id: uuid.UUID, key: str) -> Row | None:
    query = select(idempotency_keys).where(
        idempotency_keys.c.owner_id == owner_id, idempotency_keys.c.key == key
    )
    return (await session.execute(query)).mappings().one_or_none()


async def claim_idempotency_key(
    session: AsyncSession,
    owner_id: uuid.UUID,
    key: str,
    *,
    breadcrumb_id: uuid.UUID,
    request_hash: str,
    response: dict[str, Any],
) -> bool:
    """Record the key; False when another request holds it (waits for that one to commit)."""
    statement = (
        pg_insert(idempotency_keys)
        .values(
            owner_id=owner_id,
            key=key,
            breadcrumb_id=breadcrumb_id,
            request_hash=request_hash,
            response=response,
        )
        .on_conflict_do_nothing()
        .returning(idempotency_keys.c.key)
    )
    return (await session.execute(statement)).first() is not None


async def store_embedding(
    session: AsyncSession, breadcrumb_id: uuid.UUID, llm_text: str, embedding: Sequence[float]
) -> bool:
    """Fill in a late embedding, unless the text changed meanwhile (not a user change)."""
    statement = (
        update(breadcrumbs)
        .where(breadcrumbs.c.id == breadcrumb_id, breadcrumbs.c.llm_text == llm_text)
        .values(embedding=list(embedding), domains_version=None)  # labels: relabel with it
    )
    result = await session.execute(statement)
    return bool(getattr(result, "rowcount", 0))
