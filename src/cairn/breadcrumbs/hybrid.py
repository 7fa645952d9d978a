"""``GET /breadcrumbs/search?mode=hybrid``: dense and BM25 fused, ranked exactly as the
context builder ranks its semantic seeds (context.sources.semantic), so what a search finds
is what an agent's context would be seeded with.

The query text is embedded as it is (as vector mode does) and its lexemes are PostgreSQL's
``to_tsvector('english', q)``, as a record's ``search_vector`` is of its ``llm_text``. With
the embedder down the lexical half ranks alone (``similarity`` null) and the route says so
in ``X-Cairn-Degraded``; vector mode answers 503 instead.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from dataclasses import dataclass

from cairn.breadcrumbs import repository
from cairn.breadcrumbs.queries import BreadcrumbReader
from cairn.breadcrumbs.repository import ListFilter
from cairn.breadcrumbs.schemas import SearchHit
from cairn.context.agents import SemanticSource
from cairn.context.sources.semantic import rank_hybrid
from cairn.context.terms import CommonWords
from cairn.context.trigger import Probe
from cairn.embedding import entity_keywords
from cairn.errors import BadRequest, InvalidInput

log = logging.getLogger(__name__)

EMBED_TIMEOUT_S = 5.0
EMBEDDING = "embedding"


@dataclass(frozen=True, slots=True)
class HybridResult:
    hits: list[SearchHit]
    degraded: list[str]


async def hybrid_search(
    reader: BreadcrumbReader,
    flt: ListFilter,
    *,
    q: str | None,
    nn: int,
    include_context: bool,
    common_words: CommonWords | None = None,
) -> HybridResult:
    if not 1 <= nn <= reader.limits.max_search_nn:
        raise InvalidInput(f"nn must be between 1 and {reader.limits.max_search_nn}")
    if q is None or not q.strip():
        raise BadRequest("hybrid search needs q (text): its words are half of the score")
    if "\x00" in q:
        raise InvalidInput("q: NUL characters are not allowed")
    embedding = await _embed(reader, q)
    owner = reader.principal.owner_id
    source = SemanticSource(
        enabled=True, schemas=(flt.schema_name,) if flt.schema_name else (), limit=nn,
        scope="session" if flt.tag else "global",
    )  # fmt: skip
    # A tag narrows the search as a session tag narrows a session-scoped source. No record
    # has the nil id: the "not the trigger" condition excludes nothing.
    probe = Probe(uuid.UUID(int=0), q, embedding)
    rows = await rank_hybrid(
        reader.session, owner, probe, source, entity_keywords((), q),
        [flt.tag] if flt.tag else [], common_words=common_words,
    )  # fmt: skip
    ranked = rows[:nn]
    records = {
        row["id"]: row
        for row in await repository.get_many(reader.session, owner, [r["id"] for r in ranked])
    }
    hits = []
    for part in ranked:
        row = records.get(part["id"])
        if row is None:
            continue
        hit = SearchHit.model_validate(
            dict(row)
            | {"score": part["score"], "similarity": part["similarity"], "lexical": part["lexical"]}
        )
        hit.context = row["context"] if include_context else None
        hits.append(hit)
    return HybridResult(hits, [] if embedding is not None else [EMBEDDING])


async def _embed(reader: BreadcrumbReader, q: str) -> list[float] | None:
    try:
        async with asyncio.timeout(EMBED_TIMEOUT_S):
            (vector,) = await reader.embedder.embed([q])
        return vector
    except Exception:  # the lexical half still answers; the route says it is degraded
        log.warning("embedding a hybrid search failed; ranking by lexical scores only")
        return None
