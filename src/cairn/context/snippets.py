"""Snippets: a long record that would take too much of the budget whole is shown by its best
chunks (``breadcrumbs.chunks``) instead, and says so.

A record qualifies when it has chunks (its ``llm_text`` is longer than the encoder's
window) and its whole block would take more than ``SNIPPET_SHARE`` of the budget. Its
block becomes its header, a line naming the excerpt, and the chunks most similar to the
trigger (the first ones when the trigger has no embedding) in their order in the text,
as many as fit in that share (at least one, at most ``MAX_SNIPPET_CHUNKS``). The item's
explanation carries ``"snippet": {"chunks": [ordinals], "of": n}``: nothing is cut silently.
Every other record keeps its block byte for byte.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from cairn.context.blocks import ItemBlocks, item_header, neutralise
from cairn.context.model import Record
from cairn.context.tokens import TokenCounter
from cairn.context.trigger import Probe

SNIPPET_SHARE = 0.5
MAX_SNIPPET_CHUNKS = 3
GAP = "\n[…]\n"


@dataclass(frozen=True, slots=True)
class Snippet:
    chunks: tuple[int, ...]  # ordinals, in text order
    of: int

    def as_explain(self) -> dict[str, Any]:
        return {"chunks": list(self.chunks), "of": self.of}


async def apply_snippets(
    session: AsyncSession,
    owner_id: uuid.UUID,
    probe: Probe,
    records: Mapping[uuid.UUID, Record],
    blocks: ItemBlocks,
    counter: TokenCounter,
    budget: int,
) -> dict[uuid.UUID, Snippet]:
    """Replace the blocks of the long records that qualify with snippets (in ``blocks``);
    returns which records are shown as snippets."""
    share = int(budget * SNIPPET_SHARE)
    large = [
        record.id
        for record in records.values()
        if record.id != probe.trigger_id and blocks.exceeds(record, share)
    ]
    if not large:
        return {}
    chunks = await _ranked_chunks(session, owner_id, probe, large)
    snippets: dict[uuid.UUID, Snippet] = {}
    for record_id, ranked in chunks.items():
        block, snippet = _snippet_block(records[record_id], ranked, counter, share)
        blocks.substitute(record_id, block, counter.count(block))
        snippets[record_id] = snippet
    return snippets


def mark_snippets(explain: dict[str, Any], snippets: Mapping[uuid.UUID, Snippet]) -> None:
    """Mark each selected item shown as a snippet in the assembly's explanation."""
    for item in explain.get("selected", []):
        snippet = snippets.get(uuid.UUID(item["record_id"]))
        if snippet is not None:
            item["snippet"] = snippet.as_explain()


def _snippet_block(
    record: Record, ranked: Sequence[Mapping[str, Any]], counter: TokenCounter, share: int
) -> tuple[str, Snippet]:
    """The best chunks that fit in ``share`` tokens (the best one in any case)."""
    chosen: list[Mapping[str, Any]] = []
    block = ""
    for chunk in ranked[:MAX_SNIPPET_CHUNKS]:
        candidate = _block(record, [*chosen, chunk], len(ranked))
        if chosen and counter.count(candidate) > share:
            break
        chosen.append(chunk)
        block = candidate
    ordinals = tuple(sorted(chunk["ordinal"] for chunk in chosen))
    return block, Snippet(ordinals, len(ranked))


def _block(record: Record, chosen: Sequence[Mapping[str, Any]], total: int) -> str:
    ordered = sorted(chosen, key=lambda chunk: chunk["ordinal"])
    passages = GAP.join(neutralise(chunk["text"]).strip() for chunk in ordered)
    label = f"[excerpt: {len(ordered)} of {total} passages of a longer record]"
    return f"{item_header(record)}{label}\n{passages}\n"


async def _ranked_chunks(
    session: AsyncSession, owner_id: uuid.UUID, probe: Probe, record_ids: list[uuid.UUID]
) -> dict[uuid.UUID, list[dict[str, Any]]]:
    """Each record's chunks, most similar to the trigger first (text order without an
    embedding); records without chunks are absent."""
    query = text(
        f"""
        WITH probe AS ({probe.row_sql()})
        SELECT breadcrumb_id, ordinal, text,
               1 - (embedding <=> (SELECT embedding FROM probe)) AS similarity
        FROM breadcrumb_chunks
        WHERE owner_id = :owner AND breadcrumb_id = ANY(:ids)
        ORDER BY breadcrumb_id, similarity DESC NULLS LAST, ordinal
        """
    )
    params = {**probe.params(), "owner": owner_id, "ids": record_ids}
    out: dict[uuid.UUID, list[dict[str, Any]]] = {}
    for row in (await session.execute(query, params)).mappings():
        out.setdefault(row["breadcrumb_id"], []).append(dict(row))
    return out
