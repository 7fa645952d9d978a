"""Blocks stored with the records (table ``record_blocks``, revision 0023): a record's
rendered block and its token count, computed once when the record is written instead of
by every worker that first meets it in an assembly.

A stored block is identified by the record's version and a digest of everything else that
decides it: the block format, the token encoding and the hints that render the record (a
schema definition's id and version, or the record's own hints). A reader compares both
with what it would render now, so a block of an older version or of other hints is a miss,
never a wrong text. One row per record: a newer version replaces it, a delete cascades.
"""

from __future__ import annotations

import hashlib
import logging
import uuid
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from sqlalchemy import bindparam, text
from sqlalchemy.dialects.postgresql import ARRAY, BYTEA, INTEGER, TEXT, UUID
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from cairn.breadcrumbs.text import body_text
from cairn.config import Settings
from cairn.context.agents import CONTEXT_SCHEMA
from cairn.context.blocks import (
    BLOCK_FORMAT,
    CachedBlock,
    ItemBlocks,
    RenderItem,
    item_block,
    run_line,
)
from cairn.context.model import Record
from cairn.context.records import COLUMNS, LIVE, to_record
from cairn.context.tokens import TokenCounter, ensure_tokenizer_files
from cairn.db.driver import DriverQuery
from cairn.db.engine import create_engine, create_session_factory, tenant_session
from cairn.transforms import Transforms

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class StoredBlock:
    record_id: uuid.UUID
    version: int
    digest: bytes
    block: str
    tokens: int
    line_tokens: int | None  # its line's in a run (None: it has none)
    hints: Hashable = None  # the render key it was rendered under, when known


@lru_cache(maxsize=4096)  # asked for every record an assembly loads; few keys recur
def digest_of(encoding: str, render_key: Hashable) -> bytes:
    """What decides a block besides the record's id and version, in 16 bytes. The render
    key is a tuple of strings, ints and UUIDs, whose ``repr`` is the same in every
    process."""
    decided = repr((BLOCK_FORMAT, encoding, render_key)).encode()
    return hashlib.blake2b(decided, digest_size=16).digest()


_LOAD = DriverQuery(
    text(
        "SELECT record_id, version, digest, block, tokens, line_tokens FROM record_blocks"
        " WHERE record_id = ANY(:ids)"
    ).bindparams(bindparam("ids", type_=ARRAY(UUID(as_uuid=True))))
)


async def load_blocks(
    session: AsyncSession, wanted: Mapping[uuid.UUID, tuple[int, bytes]]
) -> dict[uuid.UUID, CachedBlock]:
    """The stored blocks of ``wanted`` (record id → version and digest) that match both:
    one query. Any other row is a miss."""
    if not wanted:
        return {}
    rows = await _LOAD.fetch(session, {"ids": list(wanted)})
    found: dict[uuid.UUID, CachedBlock] = {}
    for row in rows:
        if wanted.get(row["record_id"]) == (row["version"], bytes(row["digest"])):
            found[row["record_id"]] = (row["block"], row["tokens"], row["line_tokens"])
    return found


_STORE = text(
    "INSERT INTO record_blocks AS b"
    " (owner_id, record_id, version, digest, block, tokens, line_tokens)"
    " SELECT :owner, * FROM unnest(:ids, :versions, :digests, :blocks, :tokens, :lines)"
    " ON CONFLICT (record_id) DO UPDATE SET version = excluded.version,"
    " digest = excluded.digest, block = excluded.block, tokens = excluded.tokens,"
    " line_tokens = excluded.line_tokens"
    " WHERE b.version <= excluded.version"
    " AND (b.version, b.digest) IS DISTINCT FROM (excluded.version, excluded.digest)"
).bindparams(
    bindparam("ids", type_=ARRAY(UUID(as_uuid=True))),
    bindparam("versions", type_=ARRAY(INTEGER)),
    bindparam("digests", type_=ARRAY(BYTEA)),
    bindparam("blocks", type_=ARRAY(TEXT)),
    bindparam("tokens", type_=ARRAY(INTEGER)),
    bindparam("lines", type_=ARRAY(INTEGER)),
)


async def store_blocks(
    session: AsyncSession, owner_id: uuid.UUID, blocks: Sequence[StoredBlock]
) -> None:
    """Keep ``blocks`` (one statement); an older version never replaces a newer one."""
    if not blocks:
        return
    await session.execute(
        _STORE,
        {
            "owner": owner_id,
            "ids": [b.record_id for b in blocks],
            "versions": [b.version for b in blocks],
            "digests": [b.digest for b in blocks],
            "blocks": [b.block for b in blocks],
            "tokens": [b.tokens for b in blocks],
            "lines": [b.line_tokens for b in blocks],
        },
    )


def as_row(record: Record) -> dict[str, Any]:
    """The record as the transforms render it (the same fields wherever it is rendered,
    so a block stored at write time is the block an assembly would render)."""
    return {
        "id": record.id,
        "version": record.version,
        "title": record.title,
        "tags": list(record.tags),
        "schema_name": record.schema_name,
        "created_at": record.created_at,
        "context": record.context,
        "llm_hints": record.llm_hints,
    }


async def render_blocks(
    session: AsyncSession,
    owner_id: uuid.UUID,
    records: Iterable[Record],
    transforms: Transforms,
    counter: TokenCounter,
) -> list[StoredBlock]:
    """The blocks of ``records`` as an assembly renders them, counted: those that may be
    kept (a saved version, hints that rendered without falling back)."""
    chosen = [record for record in records if record.version is not None]
    rows = [as_row(record) for record in chosen]
    definitions = await transforms.definitions_for(session, owner_id, rows)
    if len(rows) == 1:  # the worker's, per record written: not worth a thread's hop
        views = [transforms.render(rows[0], definitions.get(rows[0]["schema_name"] or ""))]
    else:
        views = await transforms.render_resolved(rows, definitions)
    blocks: list[StoredBlock] = []
    for record, row, view in zip(chosen, rows, views, strict=True):
        key = transforms.render_key(row, definitions.get(record.schema_name or ""))
        if key is None or view.error or record.version is None:
            continue
        body = body_text(view.context, view.source, view.replaced, record.title)
        block = item_block(record, _showing(body))
        digest = digest_of(counter.encoding_name, key)
        tokens, lines = counter.count(block), _line_tokens(record, block, counter)
        blocks.append(StoredBlock(record.id, record.version, digest, block, tokens, lines, key))
    return blocks


def _showing(body: str) -> RenderItem:
    return lambda _: body


def _line_tokens(record: Record, block: str, counter: TokenCounter) -> int | None:
    line = run_line(record, block)
    return None if line is None else counter.count(line)


@dataclass
class Rendering:
    """One assembly's blocks, and the stored-block keys of the records it had to look up:
    what it rendered itself is stored after it (``ContextBuilder.keep_rendered``)."""

    blocks: ItemBlocks | None = None
    wanted: dict[uuid.UUID, tuple[int, bytes]] = field(default_factory=dict)
    records: dict[uuid.UUID, Record] = field(default_factory=dict)

    def fresh(self, counter: TokenCounter, owner_id: uuid.UUID) -> list[StoredBlock]:
        """The blocks rendered here (not snippets) of ``owner_id``'s records, counted (the
        assembly did not count a block it only needed the line of). A record another
        tenant shares is left out: its block is its owner's to store (row-level security
        refuses the row), and this tenant's hints may render it differently anyway."""
        if self.blocks is None:
            return []
        fresh: list[StoredBlock] = []
        for record_id, (block, tokens, lines) in self.blocks.rendered():
            known, record = self.wanted.get(record_id), self.records.get(record_id)
            if known is None or record is None or record.owner_id != owner_id:
                continue
            count = counter.count(block) if tokens is None else tokens
            if lines is None:
                lines = _line_tokens(record, block, counter)
            fresh.append(StoredBlock(record_id, *known, block, count, lines))
        return fresh


# Live records of the tenant (but contexts, which no assembly shows) without a stored block
# at their version, in id order from ``:after``.
_UNSTORED = text(
    f"SELECT {COLUMNS} FROM breadcrumbs r WHERE owner_id = :owner AND id > :after"
    f" AND {LIVE} AND schema_name IS DISTINCT FROM :skipped"
    " AND NOT EXISTS (SELECT 1 FROM record_blocks b"
    " WHERE b.record_id = r.id AND b.version = r.version)"
    " ORDER BY id LIMIT :limit"
)


async def backfill(
    session_factory: async_sessionmaker[AsyncSession],
    owner_id: uuid.UUID,
    transforms: Transforms,
    counter: TokenCounter,
    *,
    batch: int = 1000,
    progress: Callable[[int], None] | None = None,
) -> int:
    """Store the block of every record of the tenant that has none at its version: for
    records written around the worker (a ``COPY`` load, a restore). One transaction per
    ``batch``, so it resumes where it stopped; returns how many blocks it stored, and tells
    ``progress`` the records it went through after each batch."""
    after, stored = uuid.UUID(int=0), 0
    while True:
        async with tenant_session(session_factory, owner_id) as session, session.begin():
            params = {"owner": owner_id, "after": after, "skipped": CONTEXT_SCHEMA}
            found = await session.execute(_UNSTORED, {**params, "limit": batch})
            records = [to_record(row) for row in found.mappings()]
            if not records:
                return stored
            blocks = await render_blocks(session, owner_id, records, transforms, counter)
            await store_blocks(session, owner_id, blocks)
        after, stored = records[-1].id, stored + len(blocks)
        if progress is not None:
            progress(len(records))


async def backfill_tenants(settings: Settings, owners: Sequence[uuid.UUID] | None) -> int:
    """``cairn store-blocks``: :func:`backfill` for ``owners`` (every tenant when None), as
    the schema owner; a log line per tenant."""
    url = settings.system_database_url
    assert url is not None
    options = settings.context
    tokenizers = ensure_tokenizer_files(options.tokenizer_dir or settings.data_dir / "tokenizers")
    counter = TokenCounter.from_dir(tokenizers, options.encoding)
    transforms = Transforms(settings.transforms)
    engine = create_engine(url, settings, pool_size=2, max_overflow=2)
    try:
        if owners is None:
            async with engine.connect() as connection:
                found = await connection.execute(text("SELECT id FROM tenants ORDER BY id"))
                owners = [row[0] for row in found]
        sessions, stored = create_session_factory(engine), 0
        for owner in owners:
            count = await backfill(sessions, owner, transforms, counter)
            log.info("stored %d blocks of tenant %s", count, owner)
            stored += count
        return stored
    finally:
        await engine.dispose()
