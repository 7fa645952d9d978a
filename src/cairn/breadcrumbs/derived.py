"""The columns a write derives from a record's content: ``llm_text`` as its ``llm_hints``
render it, the embedding of that text, keyword pointers and domain labels.

New records are derived together (one render pass, embedding calls of a forward pass each,
one look-up of the tenant's domains), so that a batch of creates costs little more than its
embeddings; updates derive only what their change touches.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from cairn.breadcrumbs.context import BreadcrumbService
from cairn.breadcrumbs.repository import Row
from cairn.breadcrumbs.text import build_llm_text
from cairn.context.domain_store import Labels, labels_for, labels_for_many
from cairn.embedding import entity_keywords, tag_pointers

log = logging.getLogger(__name__)

EMBED_TIMEOUT_S = 10.0
EMBED_SLICE = 32  # texts per embedding call: one forward pass at the default embedding.max_batch
# Outputs, not knowledge: assembled contexts are never searched, so never embedded.
NOT_EMBEDDED_SCHEMAS = frozenset({"agent.context.v1"})
TEXT_FIELDS = ("title", "description", "context", "llm_hints", "schema_name")


@dataclass(slots=True)
class NewRecord:
    """A record about to be inserted: its id and the columns written so far."""

    id: uuid.UUID
    values: dict[str, Any]


class DerivingService(BreadcrumbService):
    async def derive_created(self, new: Sequence[NewRecord]) -> None:
        """Add the derived columns to each new record's ``values``."""
        embedded = [each for each in new if each.values["schema_name"] not in NOT_EMBEDDED_SCHEMAS]
        for each in new:
            if each.values["schema_name"] in NOT_EMBEDDED_SCHEMAS:
                each.values |= _not_embedded(each.values)
        texts = await self._llm_texts([{**each.values, "id": each.id} for each in embedded])
        vectors = await self._embed_many(texts)
        for each, text, vector in zip(embedded, texts, vectors, strict=True):
            keywords = entity_keywords(each.values["tags"], text)
            each.values |= {"entity_keywords": keywords, "llm_text": text, "embedding": vector}
        owner, records = self.principal.owner_id, [each.values for each in embedded]
        labels = await labels_for_many(self.session, owner, self.embedder, records)
        for each, found in zip(embedded, labels, strict=True):
            each.values |= _labelled(found, None)

    async def _derived(
        self,
        values: dict[str, Any],
        *,
        tags: list[str] | None,
        current: Row | None = None,
        new_id: uuid.UUID | None = None,
    ) -> dict[str, Any]:
        """The derived columns that change with ``values`` (written over ``current``)."""
        merged: Mapping[str, Any] = {**(current or {}), **values}
        text_changed = current is None or any(field in values for field in TEXT_FIELDS)
        if not text_changed and tags is None:
            return {}
        if merged.get("schema_name") in NOT_EMBEDDED_SCHEMAS:
            return _not_embedded(merged) | _unlabelled(current)
        (llm_text,) = await self._llm_texts([{**merged, "id": new_id or merged["id"]}])
        out: dict[str, Any] = {"entity_keywords": entity_keywords(merged["tags"], llm_text)}
        if current is None or llm_text != current["llm_text"]:
            out["llm_text"] = llm_text
            (out["embedding"],) = await self._embed_many([llm_text])
        labels = await labels_for(
            self.session, self.principal.owner_id, self.embedder, {**merged, **out}
        )
        return out | _labelled(labels, current)

    async def _llm_texts(self, records: Sequence[Mapping[str, Any]]) -> list[str]:
        """The text of each record as its hints render it. Without a version: the write may
        still lose a compare-and-set, so its instance hints are not cached."""
        now = datetime.now(UTC)
        as_written = [{"created_at": now, **record, "version": None} for record in records]
        owner = self.principal.owner_id
        views = await self.transforms.render_many(self.session, owner, as_written)
        return [
            build_llm_text(
                record["title"], record.get("description"), view.context, transformed=view.replaced
            )
            for record, view in zip(records, views, strict=True)
        ]

    async def _embed_many(self, texts: Sequence[str]) -> list[list[float] | None]:
        """One vector per text; None from the first failure or timeout on (the write goes on,
        the maintenance task embeds them later).

        Many texts go in slices of one forward pass each: the encoder runs no faster for a
        longer call, a single create arriving meanwhile waits behind one slice rather than
        a whole batch, and every slice has a single create's deadline."""
        vectors: list[list[float] | None] = []
        for start in range(0, len(texts), EMBED_SLICE):
            try:
                async with asyncio.timeout(EMBED_TIMEOUT_S):
                    vectors += await self.embedder.embed(texts[start : start + EMBED_SLICE])
            except Exception:
                missing = len(texts) - start
                log.warning(
                    "embedding failed; %d stored without one, will retry", missing, exc_info=True
                )
                return vectors + [None] * missing
        return vectors


def _not_embedded(record: Mapping[str, Any]) -> dict[str, Any]:
    return {"entity_keywords": tag_pointers(record["tags"]), "llm_text": None, "embedding": None}


def _labelled(labels: Labels, current: Row | None) -> dict[str, Any]:
    """The label columns to write: none when the tenant defines no domains, unless the
    record carried labels of an earlier definition."""
    if labels.version is not None or (current is not None and current["domains_version"]):
        return {"domains": list(labels.domains), "domains_version": labels.version}
    return {}


def _unlabelled(current: Row | None) -> dict[str, Any]:
    """Assembled contexts carry no labels (a record may become one by an update)."""
    if current is None or not current["domains_version"]:
        return {}
    return {"domains": [], "domains_version": None}
