"""The columns a write derives from a record's content — ``llm_text`` as its ``llm_hints``
render it, the embedding of that text, a long text's chunks, keyword pointers and domain
labels — and what became of each processing stage.

New records are derived together (one render pass, embedding calls of a forward pass each,
one look-up of the tenant's domains), so that a batch of creates costs little more than its
embeddings; updates derive only what their change touches. The rendering is shared with
the reindex (:func:`render_llm_texts`), so a reindexed record reads exactly as if it had
just been written. A failed embedding never fails the write: the stage is recorded as
failed and the processing retry job completes it.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from cairn.breadcrumbs.chunks import ChunkWindow, EmbeddedChunk, cut_chunks, embed_cut
from cairn.breadcrumbs.context import BreadcrumbService
from cairn.breadcrumbs.repository import Row
from cairn.breadcrumbs.text import build_llm_text
from cairn.config import Limits
from cairn.context.domain_store import Labels, labels_for, labels_for_many
from cairn.embedding import Embedder, entity_keywords, tag_pointers
from cairn.principal import Principal
from cairn.processing.stages import (
    CHUNKED,
    DONE_OUTCOME,
    NOT_NEEDED_OUTCOME,
    PENDING,
    Outcome,
    failed,
)
from cairn.processing.write_outcomes import (
    Derived,
    derived_outcomes,
    not_embedded_outcomes,
    unchanged_outcomes,
)
from cairn.transforms import Transforms

log = logging.getLogger(__name__)

EMBED_TIMEOUT_S = 10.0
EMBED_SLICE = 32  # texts per embedding call: one forward pass at the default embedding.max_batch
# Outputs, not knowledge: assembled contexts are never searched, so never embedded; debug
# paths and waypoints are written by the worker, which runs no encoder.
NOT_EMBEDDED_SCHEMAS = frozenset({"agent.context.v1", "debug.path.v1", "debug.waypoint.v1"})
TEXT_FIELDS = ("title", "description", "context", "llm_hints", "schema_name")

Vector = list[float] | BaseException  # an embedding, or what it failed with
Chunks = list[EmbeddedChunk] | None  # None: the text did not change, nor may its chunks


def is_embedded(record: Mapping[str, Any]) -> bool:
    return record.get("schema_name") not in NOT_EMBEDDED_SCHEMAS


async def render_llm_texts(
    transforms: Transforms,
    session: AsyncSession,
    owner_id: uuid.UUID,
    records: Sequence[Mapping[str, Any]],
) -> list[str]:
    """Each record's ``llm_text``: its hints (its own, else its schema's) applied to its
    context, then title, description and the transformed context joined (one definitions
    query for the batch)."""
    views = await transforms.render_many(session, owner_id, records)
    return [
        build_llm_text(
            record["title"], record.get("description"), view.context, transformed=view.replaced
        )
        for record, view in zip(records, views, strict=True)
    ]


@dataclass(slots=True)
class NewRecord:
    """A record about to be inserted: its id, the columns written so far, its chunks and
    the outcome of each processing stage (filled by ``derive_created``)."""

    id: uuid.UUID
    values: dict[str, Any]
    chunks: list[EmbeddedChunk] = field(default_factory=list, kw_only=True)
    outcomes: dict[str, Outcome] = field(default_factory=dict, kw_only=True)


class DerivingService(BreadcrumbService):
    def __init__(
        self,
        session: AsyncSession,
        embedder: Embedder,
        limits: Limits,
        principal: Principal,
        transforms: Transforms | None = None,
        *,
        chunk_window: ChunkWindow | None = None,
    ) -> None:
        super().__init__(session, embedder, limits, principal, transforms)
        self.chunk_window = chunk_window or ChunkWindow()

    async def derive_created(self, new: Sequence[NewRecord]) -> None:
        """Add the derived columns, chunks and stage outcomes to each new record."""
        embedded = [each for each in new if is_embedded(each.values)]
        for each in new:
            if not is_embedded(each.values):
                each.values |= not_embedded_columns(each.values)
                each.outcomes = not_embedded_outcomes() | {CHUNKED: NOT_NEEDED_OUTCOME}
        texts = await self._llm_texts([{**each.values, "id": each.id} for each in embedded])
        vectors = await self._embed_many(texts)
        for each, text, vector in zip(embedded, texts, vectors, strict=True):
            keywords = entity_keywords(each.values["tags"], text)
            each.values |= {"entity_keywords": keywords, "llm_text": text, "embedding": _ok(vector)}
        owner, records = self.principal.owner_id, [each.values for each in embedded]
        labels = await labels_for_many(self.session, owner, self.embedder, records)
        for each, found, vector in zip(embedded, labels, vectors, strict=True):
            each.values |= labelled_columns(found, None)
            each.outcomes = derived_outcomes(embedded=_outcome_of(vector), labelled=found.version)
            each.chunks = await self._chunks(each.values, each.outcomes) or []

    async def _derived(
        self,
        values: dict[str, Any],
        *,
        tags: list[str] | None,
        current: Row | None = None,
        new_id: uuid.UUID | None = None,
    ) -> Derived:
        """The derived columns that change with ``values`` (written over ``current``), and
        what became of each processing stage."""
        merged: Mapping[str, Any] = {**(current or {}), **values}
        text_changed = current is None or any(field in values for field in TEXT_FIELDS)
        if not text_changed and tags is None:
            return Derived({}, unchanged_outcomes())
        if not is_embedded(merged):
            columns = not_embedded_columns(merged) | unlabelled_columns(current)
            return Derived(columns, not_embedded_outcomes() | {CHUNKED: NOT_NEEDED_OUTCOME})
        (llm_text,) = await self._llm_texts([{**merged, "id": new_id or merged["id"]}])
        out: dict[str, Any] = {"entity_keywords": entity_keywords(merged["tags"], llm_text)}
        vector: Vector | None = None
        if current is None or llm_text != current["llm_text"]:
            (vector,) = await self._embed_many([llm_text])
            out |= {"llm_text": llm_text, "embedding": _ok(vector)}
        labels = await labels_for(
            self.session, self.principal.owner_id, self.embedder, {**merged, **out}
        )
        out |= labelled_columns(labels, current)
        embedded = None if vector is None else _outcome_of(vector)
        return Derived(out, derived_outcomes(embedded=embedded, labelled=labels.version))

    async def _chunks(self, values: dict[str, Any], outcomes: dict[str, Outcome]) -> Chunks:
        """The chunks of a changed long ``llm_text``, recording the ``chunked`` outcome: not
        needed for a short text, pending when the record's own vector failed (the embedder
        is failing: the retry job cuts them later), failed with its error."""
        if "llm_text" not in values:
            return None
        cut = cut_chunks(values["llm_text"], self.embedder, self.chunk_window)
        if not cut:
            outcomes[CHUNKED] = NOT_NEEDED_OUTCOME
            return []
        if values["embedding"] is None:
            outcomes[CHUNKED] = Outcome(PENDING, due_in_s=0.0)
            return []
        try:
            async with asyncio.timeout(EMBED_TIMEOUT_S):
                chunks = await embed_cut(cut, self.embedder)
        except Exception as error:
            log.warning("embedding chunks failed; stored without them, will retry", exc_info=True)
            outcomes[CHUNKED] = failed(_timeout_named(error))
            return []
        outcomes[CHUNKED] = DONE_OUTCOME
        return chunks

    async def _llm_texts(self, records: Sequence[Mapping[str, Any]]) -> list[str]:
        """The text of each record as its hints render it. Without a version: the write may
        still lose a compare-and-set, so its instance hints are not cached."""
        now = datetime.now(UTC)
        as_written = [{"created_at": now, **record, "version": None} for record in records]
        owner = self.principal.owner_id
        return await render_llm_texts(self.transforms, self.session, owner, as_written)

    async def _embed_many(self, texts: Sequence[str]) -> list[Vector]:
        """One vector per text, or from the first failure or timeout on, the error (the
        write goes on; the processing retry job embeds them later).

        Many texts go in slices of one forward pass each: the encoder runs no faster for a
        longer call, a single create arriving meanwhile waits behind one slice rather than
        a whole batch, and every slice has a single create's deadline."""
        vectors: list[Vector] = []
        for start in range(0, len(texts), EMBED_SLICE):
            try:
                async with asyncio.timeout(EMBED_TIMEOUT_S):
                    vectors += await self.embedder.embed(texts[start : start + EMBED_SLICE])
            except Exception as error:
                missing = len(texts) - start
                log.warning(
                    "embedding failed; %d stored without one, will retry", missing, exc_info=True
                )
                return vectors + [_timeout_named(error)] * missing
        return vectors


def _ok(vector: Vector) -> list[float] | None:
    return None if isinstance(vector, BaseException) else vector


def _outcome_of(vector: Vector) -> BaseException | bool:
    return vector if isinstance(vector, BaseException) else True


def _timeout_named(error: BaseException) -> BaseException:
    """A timeout says how long it waited (its own message is empty)."""
    if isinstance(error, TimeoutError) and not str(error):
        return TimeoutError(f"embedding took longer than {EMBED_TIMEOUT_S:.0f} s")
    return error


def not_embedded_columns(record: Mapping[str, Any]) -> dict[str, Any]:
    return {"entity_keywords": tag_pointers(record["tags"]), "llm_text": None, "embedding": None}


def labelled_columns(labels: Labels, current: Row | None) -> dict[str, Any]:
    """The label columns to write: none when the tenant defines no domains, unless the
    record carried labels of an earlier definition."""
    if labels.version is not None or (current is not None and current["domains_version"]):
        return {"domains": list(labels.domains), "domains_version": labels.version}
    return {}


def unlabelled_columns(current: Row | None) -> dict[str, Any]:
    """Assembled contexts carry no labels (a record may become one by an update)."""
    if current is None or not current["domains_version"]:
        return {}
    return {"domains": [], "domains_version": None}
