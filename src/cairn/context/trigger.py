"""The trigger of an assembly: a stored record, or a query text standing in for one.

The seed queries compare candidates with the trigger's embedding and lexemes. A stored
trigger's are read by id inside each query (the worker's path, unchanged); a query's are
computed here exactly as a record's would be on write (``build_llm_text``, the embedder,
``entity_keywords``, PostgreSQL's ``to_tsvector('english', llm_text)`` as the generated
``search_vector`` column does) and passed in as parameters. :class:`Probe` supplies the SQL
for either.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from cairn.breadcrumbs.text import build_llm_text
from cairn.context.model import Record
from cairn.context.records import load_trigger
from cairn.embedding import entity_keywords

QUERY_SCHEMA = "context.query.v1"
QUERY_TITLE = "Query"
# The synthetic trigger's id: the same query text in the same session is the same id, so
# its rendered block is cached like a record's at one version.
_QUERY_IDS = uuid.UUID("6b0c3f4e-1f3a-4a8e-9b61-0d6f3c2a9e57")


@dataclass(frozen=True, slots=True)
class Probe:
    """What the seed queries compare with: ``text`` None means a stored trigger, read by
    id; otherwise a query's ``llm_text``, its embedding (None: the embedder was down, only
    the lexical half scores) and the moment it was asked."""

    trigger_id: uuid.UUID | None
    text: str | None = None
    embedding: Sequence[float] | None = None
    created_at: datetime | None = None

    @property
    def stored(self) -> bool:
        return self.text is None

    def row_sql(self) -> str:
        """One row: the trigger's ``embedding`` and lexemes (``tsv``)."""
        if self.stored:
            return "SELECT embedding, search_vector AS tsv FROM breadcrumbs WHERE id = :trigger"
        return (
            "SELECT CAST(:probe_embedding AS vector) AS embedding,"
            " to_tsvector('english'::regconfig, CAST(:probe_text AS text)) AS tsv"
        )

    def join_sql(self) -> str:
        """A join that makes ``probe.embedding`` the trigger's embedding (NULL if none)."""
        if self.stored:
            return "LEFT JOIN breadcrumbs probe ON probe.id = CAST(:trigger AS uuid)"
        return "LEFT JOIN (SELECT CAST(:probe_embedding AS vector) AS embedding) probe ON true"

    def created_at_sql(self) -> str:
        """The trigger's creation time: the session source shows only what came before."""
        if self.stored:
            return "(SELECT created_at FROM breadcrumbs WHERE id = :trigger)"
        return "CAST(:probe_created_at AS timestamptz)"

    def params(self) -> dict[str, Any]:
        if self.stored:
            return {"trigger": self.trigger_id}
        return {
            "trigger": self.trigger_id,
            "probe_text": self.text,
            "probe_embedding": _vector_literal(self.embedding),
            "probe_created_at": self.created_at,
        }


def as_probe(trigger: uuid.UUID | Probe | None) -> Probe:
    return trigger if isinstance(trigger, Probe) else Probe(trigger)


@dataclass(frozen=True, slots=True)
class AssemblyTrigger:
    """The trigger as the pipeline needs it: the record (rendered into the context), its
    keyword pointers, the probe the seed queries use, and the text the signals stage reads
    (a stored trigger's ``llm_text``; a query's own words, not the ``Query``/``query:``
    wrapping it is embedded in, which would read as a mention of "query")."""

    record: Record
    keywords: tuple[str, ...]
    probe: Probe
    text: str = ""


async def stored_trigger(
    session: AsyncSession, owner_id: uuid.UUID, trigger_id: uuid.UUID
) -> AssemblyTrigger | None:
    """The stored trigger, if live (the worker's path)."""
    found = await load_trigger(session, owner_id, trigger_id)
    if found is None:
        return None
    record, keywords, llm_text = found
    return AssemblyTrigger(record, tuple(keywords), Probe(record.id), llm_text)


def query_text(query: str) -> str:
    """The ``llm_text`` a query is embedded and keyword-indexed by: that of a record titled
    ``Query`` whose context is ``{"query": <text>}``."""
    return build_llm_text(QUERY_TITLE, None, {"query": query})


def query_trigger(
    owner_id: uuid.UUID,
    query: str,
    session_id: str | None,
    embedding: Sequence[float] | None,
    now: datetime | None = None,
) -> AssemblyTrigger:
    """A trigger that exists only in memory, tagged with ``session:<session_id>``."""
    tags = (f"session:{session_id}",) if session_id else ()
    llm_text = query_text(query)
    asked = now or datetime.now(UTC)
    record = Record(
        id=uuid.uuid5(_QUERY_IDS, f"{owner_id}\n{session_id or ''}\n{query}"),
        owner_id=owner_id, schema_name=QUERY_SCHEMA, title=QUERY_TITLE, tags=tags,
        context={"query": query}, llm_hints=None, created_at=asked, updated_at=asked,
    )  # fmt: skip
    probe = Probe(record.id, llm_text, embedding, asked)
    return AssemblyTrigger(record, tuple(entity_keywords(tags, llm_text)), probe, query)


def _vector_literal(vector: Sequence[float] | None) -> str | None:
    """pgvector's text form (the app registers no binary codec for ``vector``)."""
    if vector is None:
        return None
    return "[" + ",".join(repr(float(value)) for value in vector) + "]"
