"""A tenant's current :class:`DomainSet`, read from its newest live ``context.domains.v1``.

The definition's ``checksum`` is its version: a write reads it with one indexed query
(a tenant without a definition pays that lookup and nothing else), and the parsed set,
with the example centroids embedded once, is cached per (tenant, checksum). Keyed by
content, a cached set is never stale; a new definition simply has another key.

A record the definition's words and examples leave unlabelled is labelled by its nearest
labelled records when they agree (context.neighbours): one nearest-neighbour
query, on the embedding index, for such a record only.

The example centroids need the embedder Cairn runs. The API stores them in
``domain_centroids`` when the definition is written (and the background relabel fills any
gap), so the worker, which runs no encoder, reads them there.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from sqlalchemy import select, text
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from cairn.context.agents import AGENT_SCHEMA, CONTEXT_SCHEMA
from cairn.context.blacklist import BLACKLIST_SCHEMA
from cairn.context.domains import (
    DOMAINS_SCHEMA,
    Domain,
    DomainSet,
    centroid,
    examples,
    parse_domains,
)
from cairn.context.neighbours import NEIGHBOURS, Neighbour
from cairn.db.driver import DriverQuery
from cairn.db.models import domain_centroids
from cairn.embedding import Embedder
from cairn.transforms.cache import LRU
from cairn.transforms.definitions import SCHEMA_DEFINITION

log = logging.getLogger(__name__)

# Outputs and definitions are not knowledge of any domain: never labelled.
UNLABELLED_SCHEMAS = frozenset(
    {CONTEXT_SCHEMA, AGENT_SCHEMA, BLACKLIST_SCHEMA, SCHEMA_DEFINITION, DOMAINS_SCHEMA}
)
_NEWEST = (
    "FROM breadcrumbs WHERE owner_id = :owner AND schema_name = :schema"
    " AND (ttl IS NULL OR ttl > now()) ORDER BY updated_at DESC, id DESC LIMIT 1"
)
# Asked before every assembly (context.builder): sent through the driver.
_CURRENT_VERSION = DriverQuery(text(f"SELECT checksum {_NEWEST}"))
_CURRENT = text(f"SELECT checksum, context {_NEWEST}")
# The nearest records labelled under ``version``: the embedding index orders them.
_NEAREST_LABELLED = text(
    "SELECT id, domains, 1 - (embedding <=> CAST(:probe AS vector)) AS similarity"
    " FROM breadcrumbs WHERE owner_id = :owner AND cardinality(domains) > 0"
    " AND domains_version = :version AND id IS DISTINCT FROM CAST(:self AS uuid)"
    " AND (ttl IS NULL OR ttl > now())"
    " ORDER BY embedding <=> CAST(:probe AS vector) LIMIT :limit"
)
_SETS: LRU[tuple[uuid.UUID, str], DomainSet] = LRU(256)


@dataclass(frozen=True, slots=True)
class Labels:
    domains: tuple[str, ...]
    version: str | None  # the definition's checksum; None: the tenant defines no domains


NO_LABELS = Labels((), None)


async def current_version(session: AsyncSession, owner_id: uuid.UUID) -> str | None:
    rows = await _CURRENT_VERSION.fetch(session, {"owner": owner_id, "schema": DOMAINS_SCHEMA})
    return str(rows[0]["checksum"]) if rows else None


async def load_domains(
    session: AsyncSession, owner_id: uuid.UUID, embedder: Embedder
) -> DomainSet | None:
    """The tenant's domains (None: it defines none), within ``session`` scoped to it. The
    example centroids come from ``domain_centroids``; those missing there are embedded now
    when ``embedder`` can (not stored: this may be a reader's transaction)."""
    version = await current_version(session, owner_id)
    if version is None:
        return None
    cached = _SETS.get((owner_id, version))
    if cached is not None:
        return cached
    row = (await session.execute(_CURRENT, {"owner": owner_id, "schema": DOMAINS_SCHEMA})).first()
    if row is None:  # deleted since the first query
        return None
    version, context = str(row.checksum), row.context
    stored = await _stored_centroids(session, owner_id, version)
    missing = {name: s for name, s in examples(context).items() if name not in stored}
    return _made(owner_id, version, context, stored | await _embedded(missing, embedder))


async def store_domains(
    session: AsyncSession,
    owner_id: uuid.UUID,
    version: str,
    context: Mapping[str, Any],
    embedder: Embedder,
) -> DomainSet:
    """The definition at ``version`` (its checksum), with the example centroids missing from
    ``domain_centroids`` embedded and stored: for the processes that run no encoder."""
    cached = _SETS.get((owner_id, version))
    if cached is not None and all(d.centroid is not None for d in _with_examples(cached, context)):
        return cached
    stored = await _stored_centroids(session, owner_id, version)
    missing = {name: s for name, s in examples(context).items() if name not in stored}
    computed = await _embedded(missing, embedder)
    if computed:
        rows = [
            {"owner_id": owner_id, "version": version, "domain": name, "centroid": vector.tolist()}
            for name, vector in computed.items()
        ]
        await session.execute(insert(domain_centroids).on_conflict_do_nothing(), rows)
    return _made(owner_id, version, context, stored | computed)


def _made(
    owner_id: uuid.UUID, version: str, context: Mapping[str, Any], found: dict[str, np.ndarray]
) -> DomainSet:
    """The set, cached only when complete: a process that could not embed every example
    looks again next time (another process may have stored them meanwhile)."""
    made = parse_domains(context, version=version, centroids=found)
    if all(name in found for name in examples(context)):
        _SETS.put((owner_id, version), made)
    return made


def _with_examples(domains: DomainSet, context: Mapping[str, Any]) -> list[Domain]:
    wanted = examples(context)
    return [domain for domain in domains.domains if domain.name in wanted]


async def _stored_centroids(
    session: AsyncSession, owner_id: uuid.UUID, version: str
) -> dict[str, np.ndarray]:
    c = domain_centroids.c
    query = select(c.domain, c.centroid).where(c.owner_id == owner_id, c.version == version)
    rows = await session.execute(query)
    return {row.domain: np.asarray(row.centroid, dtype=np.float32) for row in rows}


async def _embedded(sentences: dict[str, list[str]], embedder: Embedder) -> dict[str, np.ndarray]:
    flat = [sentence for group in sentences.values() for sentence in group]
    if not flat:
        return {}
    try:
        vectors = await embedder.embed(flat)
    except Exception as error:
        log.debug("domain examples not embedded here (%s); scored without them", error)
        return {}
    out: dict[str, np.ndarray] = {}
    start = 0
    for name, group in sentences.items():
        found = centroid(vectors[start : start + len(group)])
        start += len(group)
        if found is not None:
            out[name] = found
    return out


async def labels_for(
    session: AsyncSession, owner_id: uuid.UUID, embedder: Embedder, record: Mapping[str, Any]
) -> Labels:
    """What a record being written is stored with: its labels under the tenant's current
    definition, and that definition's version."""
    (labels,) = await labels_for_many(session, owner_id, embedder, [record])
    return labels


async def labels_for_many(
    session: AsyncSession,
    owner_id: uuid.UUID,
    embedder: Embedder,
    records: Sequence[Mapping[str, Any]],
) -> list[Labels]:
    """``labels_for`` each of many records written together: the domains are read once."""
    if all(record.get("schema_name") in UNLABELLED_SCHEMAS for record in records):
        return [NO_LABELS] * len(records)
    domains = await load_domains(session, owner_id, embedder)
    if domains is None:
        return [NO_LABELS] * len(records)
    return [
        NO_LABELS
        if record.get("schema_name") in UNLABELLED_SCHEMAS
        else Labels(await label_stored(session, owner_id, domains, record), domains.version)
        for record in records
    ]


def label(
    domains: DomainSet, record: Mapping[str, Any], neighbours: Sequence[Neighbour] = ()
) -> tuple[str, ...]:
    """A stored record's labels, from its stored ``llm_text``, tags and embedding."""
    embedding = record.get("embedding")
    text, tags = record.get("llm_text") or "", record.get("tags") or ()
    return domains.labels(text, tags, embedding, neighbours)


async def label_stored(
    session: AsyncSession, owner_id: uuid.UUID, domains: DomainSet, record: Mapping[str, Any]
) -> tuple[str, ...]:
    """``label``, asking the record's nearest labelled records when nothing else places it."""
    found = label(domains, record)
    embedding = record.get("embedding")
    if found or embedding is None:
        return found
    near = await nearest_labelled(session, owner_id, domains.version, embedding, record.get("id"))
    return label(domains, record, near)


async def nearest_labelled(
    session: AsyncSession,
    owner_id: uuid.UUID,
    version: str,
    embedding: Sequence[float],
    exclude: uuid.UUID | None = None,
) -> list[Neighbour]:
    """The :data:`NEIGHBOURS` records nearest ``embedding`` that carry labels of ``version``
    (``exclude``: the record itself)."""
    params = {
        "owner": owner_id,
        "version": version,
        "self": exclude,
        "probe": "[" + ",".join(repr(float(value)) for value in embedding) + "]",
        "limit": NEIGHBOURS,
    }
    rows = await session.execute(_NEAREST_LABELLED, params)
    return [Neighbour(str(row.id), float(row.similarity), tuple(row.domains)) for row in rows]
