"""The write of a generated record (an assembled context) in ONE statement: its creation or
its version-advancing replacement, its history row, its outbox event, its processing
outcomes and the pruning of its old history, as data-modifying CTEs of one upsert.

Every assembly ends with this write, and the general path (lock, read, insert or
compare-and-set, history and outbox, outcomes, prune) costs five round trips and as many
statement compilations. The first assembly of each (consumer, session) creates its record,
every later one replaces it. ``INSERT … ON CONFLICT DO UPDATE … WHERE`` either inserts the
row or locks the existing one and checks the conditions on its newest version, so the
version cannot move between check and write, and two first writes converge on one record
(the second replaces the first); everything else copies the row the upsert returns (version
1: created). It covers the common case only — absent, or the writer created it (or curates
the tenant), the stored ordering time is comparable and not later, and the record is not
embedded; anything else returns None and the caller takes the general path, which decides
every rule as before.
"""

from __future__ import annotations

import functools
import json
import re
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from cairn.breadcrumbs.repository import Row, written_columns
from cairn.db.driver import DriverQuery
from cairn.events.payloads import ChangeKind, subject_for
from cairn.processing.repository import outcome_params, outcomes_upsert_sql
from cairn.processing.stages import Outcome
from cairn.transforms.definitions import is_definition

# The columns a generated write sets, as ``GeneratedWriter._generated_values`` makes them
# for a record that is not embedded (a creation adds its id, owner and creator). Any other
# set of columns takes the general path.
COLUMNS = frozenset(
    {
        "schema_name", "title", "description", "semantic_version", "tags", "llm_hints",
        "visibility", "sensitivity", "ttl", "checksum", "size_bytes", "entity_keywords",
        "llm_text", "embedding", "updated_by",
    }
)  # fmt: skip
# An ISO time with its offset, as ``datetime.isoformat`` writes an aware time: PostgreSQL
# casts it exactly as ``datetime.fromisoformat`` reads it. Other stored values (absent,
# naive, odd) are compared by the general path.
ISO_AWARE = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?[+-]\d{2}:\d{2}$"
_ISO_AWARE = re.compile(ISO_AWARE)
# ``datetime.isoformat`` of the UTC time the driver returns: microseconds only when any.
ISO_UTC = (
    "to_char(u.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS')"
    " || CASE WHEN CAST(date_part('microseconds', u.updated_at) AS bigint) % 1000000 = 0"
    " THEN '' ELSE to_char(u.updated_at AT TIME ZONE 'UTC', '.US') END || '+00:00'"
)
_RETURNED = ", ".join(column.name for column in written_columns())
_TYPES = {kind: f"breadcrumb.{kind.value}" for kind in (ChangeKind.created, ChangeKind.updated)}


@dataclass(frozen=True, slots=True)
class Rider:
    """One more ``INSERT … SELECT … FROM …`` (no ``WHERE``) that goes with the write (an
    assembly's log row): a CTE of the one statement, made only when the record is written
    there, else its own statement after the general path's write. Its parameters are named
    ``rider_*`` and made when it is sent (``params``: it may time the write)."""

    sql: str
    params: Callable[[], dict[str, Any]]


_UPSERT = f"""
    WITH u AS (
        INSERT INTO breadcrumbs AS b (
            id, owner_id, created_by, schema_name, title, description, semantic_version, tags,
            llm_hints, visibility, sensitivity, ttl, checksum, size_bytes, entity_keywords,
            llm_text, embedding, updated_by, context)
        VALUES (
            :id, :owner, :actor, :schema_name, :title, :description, :semantic_version,
            CAST(:tags AS text[]), CAST(:llm_hints AS jsonb), :visibility, :sensitivity, :ttl,
            :checksum, :size_bytes, CAST(:entity_keywords AS text[]), NULL, NULL, :updated_by,
            CAST(:context AS jsonb))
        ON CONFLICT (id) DO UPDATE SET
            schema_name = excluded.schema_name, title = excluded.title,
            description = excluded.description, semantic_version = excluded.semantic_version,
            tags = excluded.tags, llm_hints = excluded.llm_hints,
            visibility = excluded.visibility, sensitivity = excluded.sensitivity,
            ttl = excluded.ttl, checksum = excluded.checksum, size_bytes = excluded.size_bytes,
            entity_keywords = excluded.entity_keywords, llm_text = NULL, embedding = NULL,
            updated_by = excluded.updated_by, context = excluded.context,
            version = b.version + 1, updated_at = now()
        WHERE b.owner_id = :owner AND (b.ttl IS NULL OR b.ttl > now())
          AND (b.created_by = :actor OR CAST(:curator AS boolean))
          AND (CAST(:ordered_by AS text) IS NULL
               OR CASE WHEN jsonb_typeof(b.context -> CAST(:field AS text)) = 'string'
                            AND b.context ->> CAST(:field AS text) ~ '{ISO_AWARE}'
                       THEN CAST(b.context ->> CAST(:field AS text) AS timestamptz)
                            <= CAST(:ordered_by AS timestamptz)
                       ELSE false END)
        RETURNING {_RETURNED}, context
    ),
    history AS (
        INSERT INTO breadcrumb_history (breadcrumb_id, owner_id, version, title, tags, context,
                                        checksum, change, updated_at, updated_by)
        SELECT id, owner_id, version, title, tags, context, checksum,
               CASE WHEN version = 1 THEN 'create' ELSE 'replace' END, updated_at, updated_by
        FROM u
    ),
    event AS (
        INSERT INTO outbox (owner_id, subject, msg_id, payload, context)
        SELECT owner_id,
               CASE WHEN version = 1 THEN CAST(:created_subject AS text)
                    ELSE CAST(:subject AS text) END,
               :event_id,
               CAST(:payload AS jsonb) || jsonb_build_object(
                   'type', CASE WHEN version = 1 THEN CAST(:created_type AS text)
                                ELSE CAST(:type AS text) END,
                   'change', CASE WHEN version = 1 THEN 'create' ELSE 'replace' END,
                   'version', version, 'updated_at', {ISO_UTC}),
               context
        FROM u
    ),
    outcomes AS ({outcomes_upsert_sql("u.owner_id", "u.id", "u,")}),
    pruned AS (
        DELETE FROM breadcrumb_history
        WHERE breadcrumb_id = :id AND owner_id = :owner AND CAST(:keep AS integer) > 0
          AND version < (SELECT version FROM u) - CAST(:keep AS integer) + 1
    )/*rider*/
    SELECT {_RETURNED} FROM u
    """


@functools.cache
def _statement(rider_sql: str | None) -> DriverQuery:
    """The upsert, with a rider's CTE when there is one (built once per rider text)."""
    rider = (
        "" if rider_sql is None else f",\n    rider AS ({rider_sql} WHERE EXISTS (SELECT FROM u))"
    )
    return DriverQuery(text(_UPSERT.replace("/*rider*/", rider)).columns(*written_columns()))


def applies(values: Mapping[str, Any], ordered_by: object, *, ordered: bool) -> bool:
    """Whether the one statement can make this write (else the general path does)."""
    if set(values) != COLUMNS or values["llm_text"] is not None or is_definition(values):
        return False  # a definition's write has more to do (BreadcrumbWriter)
    if values["embedding"] is not None:
        return False
    return not ordered or (isinstance(ordered_by, str) and bool(_ISO_AWARE.match(ordered_by)))


async def upsert_generated(
    session: AsyncSession,
    record: tuple[uuid.UUID, uuid.UUID],
    values: Mapping[str, Any],
    context_json: str,
    outcomes: Mapping[str, Outcome],
    *,
    writer: tuple[str, bool],
    ordering: tuple[str, object] | None,
    keep_versions: int,
    rider: Rider | None = None,
) -> Row | None:
    """``record`` (owner, id) created or replaced by ``values`` and the context as JSON text,
    written by ``writer`` (actor, curates the tenant); ``ordering`` (context field, this
    write's ISO time): unless the stored one is later. The written row without its context,
    or None when a stored record fails any condition above (nothing written)."""
    owner, record_id = record
    event_id = uuid.uuid4()
    payload = {
        "event_id": str(event_id), "breadcrumb_id": str(record_id), "owner_id": str(owner),
        "schema_name": values["schema_name"], "title": values["title"],
        "tags": list(values["tags"]),
    }  # fmt: skip
    field, ordered_by = ordering or ("", None)
    params = {
        **values,
        "llm_hints": None if values["llm_hints"] is None else json.dumps(values["llm_hints"]),
        "context": context_json, "id": record_id, "owner": owner,
        "actor": writer[0], "curator": writer[1], "field": field, "ordered_by": ordered_by,
        "subject": subject_for(record_id, ChangeKind.updated), "event_id": event_id,
        "created_subject": subject_for(record_id, ChangeKind.created),
        "type": _TYPES[ChangeKind.updated], "created_type": _TYPES[ChangeKind.created],
        "payload": json.dumps(payload), "keep": keep_versions, **outcome_params(outcomes),
    }  # fmt: skip
    statement = _statement(None if rider is None else rider.sql)
    if rider is not None:
        params |= rider.params()
    rows = await statement.fetch(session, params)
    return rows[0] if rows else None


async def send_alone(session: AsyncSession, rider: Rider) -> None:
    """The rider as its own statement (the general path wrote the record). On the session's
    connection, as its CTE would have gone: not a session write (see context.answers)."""
    connection = await session.connection()
    await connection.execute(text(rider.sql), rider.params())
