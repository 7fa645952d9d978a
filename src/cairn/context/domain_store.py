"""A tenant's current :class:`DomainSet`, read from its newest live ``context.domains.v1``.

The definition's ``checksum`` is its version: a write reads it with one indexed query
(a tenant without a definition pays that lookup and nothing else), and the parsed set,
with the example centroids embedded once, is cached per (tenant, checksum). Keyed by
content, a cached set is never stale; a new definition simply has another key.

The example centroids need the embedder Cairn runs. A process without one (the worker
embeds nothing) gets a set without example scores, and says so once in the log.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from cairn.context.agents import AGENT_SCHEMA, CONTEXT_SCHEMA
from cairn.context.blacklist import BLACKLIST_SCHEMA
from cairn.context.domains import DOMAINS_SCHEMA, DomainSet, centroid, examples, parse_domains
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
_CURRENT_VERSION = text(f"SELECT checksum {_NEWEST}")
_CURRENT = text(f"SELECT checksum, context {_NEWEST}")
_SETS: LRU[tuple[uuid.UUID, str], DomainSet] = LRU(256)


@dataclass(frozen=True, slots=True)
class Labels:
    domains: tuple[str, ...]
    version: str | None  # the definition's checksum; None: the tenant defines no domains


NO_LABELS = Labels((), None)


async def current_version(session: AsyncSession, owner_id: uuid.UUID) -> str | None:
    found = await session.scalar(_CURRENT_VERSION, {"owner": owner_id, "schema": DOMAINS_SCHEMA})
    return None if found is None else str(found)


async def load_domains(
    session: AsyncSession, owner_id: uuid.UUID, embedder: Embedder
) -> DomainSet | None:
    """The tenant's domains (None: it defines none), within ``session`` scoped to it."""
    version = await current_version(session, owner_id)
    if version is None:
        return None
    cached = _SETS.get((owner_id, version))
    if cached is not None:
        return cached
    row = (await session.execute(_CURRENT, {"owner": owner_id, "schema": DOMAINS_SCHEMA})).first()
    if row is None:  # deleted since the first query
        return None
    return await domain_set(owner_id, str(row.checksum), row.context, embedder)


async def domain_set(
    owner_id: uuid.UUID, version: str, context: Mapping[str, Any], embedder: Embedder
) -> DomainSet:
    """The parsed definition at ``version``, its example centroids embedded once."""
    cached = _SETS.get((owner_id, version))
    if cached is not None:
        return cached
    made = parse_domains(context, version=version, centroids=await _centroids(context, embedder))
    _SETS.put((owner_id, version), made)
    return made


async def _centroids(context: Mapping[str, Any], embedder: Embedder) -> dict[str, np.ndarray]:
    sentences = examples(context)
    flat = [sentence for group in sentences.values() for sentence in group]
    if not flat:
        return {}
    try:
        vectors = await embedder.embed(flat)
    except Exception:
        log.warning("domain examples not embedded; classifying without them", exc_info=True)
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
    if record.get("schema_name") in UNLABELLED_SCHEMAS:
        return NO_LABELS
    domains = await load_domains(session, owner_id, embedder)
    if domains is None:
        return NO_LABELS
    return Labels(label(domains, record), domains.version)


def label(domains: DomainSet, record: Mapping[str, Any]) -> tuple[str, ...]:
    """A stored record's labels, from its stored ``llm_text``, tags and embedding."""
    embedding = record.get("embedding")
    return domains.labels(record.get("llm_text") or "", record.get("tags") or (), embedding)
