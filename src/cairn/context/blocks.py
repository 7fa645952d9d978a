"""One record's block: its header and rendered body as a context shows it, neutralised so
content cannot forge a delimiter, with its token count and its line in a run of one-line
items; and ``ItemBlocks``, the blocks of one assembly, rendered and counted once and kept
across assemblies (and in ``record_blocks``, context.block_store) by what decides them.
``context.render`` places the blocks in sections and counts the whole text."""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Mapping
from functools import lru_cache
from uuid import UUID

from cairn.context.model import Record
from cairn.context.titles import title_is_redundant
from cairn.context.tokens import TokenCounter
from cairn.transforms.cache import LRU

RenderItem = Callable[[Record], str]

OPEN, CLOSE = "⟦", "⟧"
_NEUTRALISE = str.maketrans({OPEN: "[", CLOSE: "]", "〚": "[", "〛": "]"})
_FORGEABLE = re.compile("[⟦⟧〚〛]")
# Part of every cached block's key: bump it when a block's rendering changes, so a block
# rendered the old way is never served (the cache lives as long as the process).
BLOCK_FORMAT = 5
MAX_TITLE_CHARS = 200


def neutralise(text: str) -> str:
    """``text`` with every delimiter character (and look-alike) made an ordinary bracket."""
    # Most text holds none of them; searching is much cheaper than translating.
    return text if _FORGEABLE.search(text) is None else text.translate(_NEUTRALISE)


def _one_line(text: str) -> str:
    return neutralise(" ".join(text.split()))


def item_header(record: Record, *, titled: bool = True) -> str:
    schema = _one_line(record.schema_name or "") or "record"
    title = _one_line(record.title)[:MAX_TITLE_CHARS] if titled else ""
    label = f"item · {schema} · {title}" if title else f"item · {schema}"
    return f"{OPEN}{label}{CLOSE}\n"


@lru_cache(maxsize=1024)
def untitled_header(schema_name: str | None) -> str:
    """The header of an item of ``schema_name`` whose title adds nothing (asked for every
    record of every assembly, and there are few schemas)."""
    return f"{OPEN}item · {_one_line(schema_name or '') or 'record'}{CLOSE}\n"


def run_header(schema_name: str | None) -> str:
    """The header a run of one-line items of ``schema_name`` shares."""
    return f"{OPEN}items · {_one_line(schema_name or '') or 'record'}{CLOSE}\n"


# What o200k's punctuation piece takes after it (`` ?[^\s\p{L}\p{N}]+[\r\n/]*``).
_RUNS_ON = ("\r", "/")


def run_line(record: Record, block: str) -> str | None:
    """The line ``block`` (the record's) takes in a run: its body, when the header has no
    title and the body is one line; else None (the block stands alone).

    Not a line opening with what o200k's piece for a run of punctuation takes after it
    (``\r``, ``\n``, ``/``): a header's ``⟧\n``, or a line ending in punctuation, would
    run on into the line (``⟧\n/``, ``⟧\n\r/`` are one piece), and the line's own count
    would not add up to the text's. Standing alone, the block is counted whole."""
    head, _, body = block.partition("\n")
    if not body or body.find("\n") != len(body) - 1 or body.startswith(_RUNS_ON):
        return None
    return body if f"{head}\n" == untitled_header(record.schema_name) else None


def item_block(record: Record, render_item: RenderItem) -> str:
    """The record's header and rendered body, neutralised, ending with one newline; the
    header drops a title that adds nothing to the body."""
    body = neutralise(render_item(record)).rstrip()
    titled = not title_is_redundant(record, body)
    return item_header(record, titled=titled) + (f"{body}\n" if body else "")


def item_cost(record: Record, render_item: RenderItem, counter: TokenCounter) -> int:
    """Tokens the record adds to ``formatted_context``: its rendered form and delimiter."""
    return counter.count(item_block(record, render_item))


_UNSEEN = ("", -1)  # no line known yet (None: the record has none)
# A block, its token count and its line's (None: not counted yet, or it has no line).
CachedBlock = tuple[str, int | None, int | None]


class ItemBlocks:
    """Each record's block and token count, rendered once per assembly and shared by the
    pathfinder (``cost_of``) and ``assemble_text``.

    With a ``cache`` (kept across assemblies) and the ``keys`` of this assembly's records
    (record id → what decides its block: id, version and the hints that render it), a
    record seen before at the same version is neither rendered nor counted again: its
    block is taken from the cache when the ``ItemBlocks`` is made (see :meth:`cached`)."""

    def __init__(
        self,
        render_item: RenderItem,
        counter: TokenCounter,
        *,
        cache: LRU[Hashable, CachedBlock] | None = None,
        keys: Mapping[UUID, Hashable | None] | None = None,
    ) -> None:
        self._render_item = render_item
        self._counter = counter
        self._cache = cache
        self._keys = keys or {}
        self._texts: dict[UUID, str] = {}
        self._tokens: dict[UUID, int] = {}
        self._lines: dict[UUID, tuple[str, int] | None] = {}
        self._line_tokens: dict[UUID, int] = {}  # known before the line is cut
        self._cached: set[UUID] = set()
        self._fresh: set[UUID] = set()  # rendered here, with a key: worth storing
        self._snippets: set[UUID] = set()  # shown as a snippet: never cached
        if cache is not None:
            keyed = [(record_id, key) for record_id, key in self._keys.items() if key is not None]
            found = cache.get_many([key for _, key in keyed])
            for (record_id, _), known in zip(keyed, found, strict=True):
                if known is not None:
                    self._take(record_id, known)

    def _take(self, record_id: UUID, known: CachedBlock) -> None:
        self._texts[record_id], tokens, line_tokens = known
        if tokens is not None:
            self._tokens[record_id] = tokens
        if line_tokens is not None:
            self._line_tokens[record_id] = line_tokens
        self._cached.add(record_id)

    def serve(self, stored: Mapping[UUID, CachedBlock]) -> None:
        """Take these records' stored blocks (context.block_store) as cached ones, and keep
        them in the cache for later assemblies."""
        for record_id, known in stored.items():
            self._take(record_id, known)
        if self._cache is not None:
            keys = self._keys
            self._cache.put_many(
                (keys[record_id], known)
                for record_id, known in stored.items()
                if keys.get(record_id) is not None
            )

    def cached(self, record_id: UUID) -> bool:
        """Whether the record's block came from the cache or the store (it needs no
        rendering)."""
        return record_id in self._cached

    def text(self, record: Record) -> str:
        text = self._texts.get(record.id)
        if text is None:
            text = self._texts[record.id] = item_block(record, self._render_item)
            self._remember(record.id)
        return text

    def tokens(self, record: Record) -> int:
        tokens = self._tokens.get(record.id)
        if tokens is None:
            tokens = self._tokens[record.id] = self._counter.count(self.text(record))
            self._remember(record.id)
        return tokens

    def exceeds(self, record: Record, limit: int) -> bool:
        """Whether the block takes more than ``limit`` tokens; counted only when its UTF-8
        length allows it (a token is at least one byte): most blocks are far shorter, and
        most of those are then costed by their line (``run_tokens``), never whole."""
        if record.id not in self._tokens and len(self.text(record).encode()) <= limit:
            return False
        return self.tokens(record) > limit

    def _remember(self, record_id: UUID) -> None:
        """The block, and its count once known, for later assemblies (unless unsaved)."""
        key = self._keys.get(record_id)
        if self._cache is not None and key is not None and record_id not in self._snippets:
            self._cache.put(key, self._known(record_id))
            if record_id not in self._cached:
                self._fresh.add(record_id)

    def _known(self, i: UUID) -> CachedBlock:
        return self._texts[i], self._tokens.get(i), self._line_tokens.get(i)

    def rendered(self) -> list[tuple[UUID, CachedBlock]]:
        """The blocks this assembly rendered that a later one may reuse (not a snippet),
        with their counts when known."""
        return [(i, self._known(i)) for i in sorted(self._fresh)]

    def line(self, record: Record) -> tuple[str, int] | None:
        """The record's line in a run and its tokens, or None when its block stands alone."""
        known = self._lines.get(record.id, _UNSEEN)
        if known is _UNSEEN:
            line = run_line(record, self.text(record))
            if line is not None and record.id not in self._line_tokens:
                self._line_tokens[record.id] = self._counter.count(line)
                self._remember(record.id)
            known = None if line is None else (line, self._line_tokens[record.id])
            self._lines[record.id] = known
        return known

    def run_tokens(self, record: Record) -> int:
        """Tokens the record adds to a run of its kind: its line, or its whole block when it
        cannot join one. What a record costs unless it ends up alone (then its header is
        extra, and the exact count of the text has the last word)."""
        line = self.line(record)
        return self.tokens(record) if line is None else line[1]

    def substitute(self, record_id: UUID, text: str, tokens: int) -> None:
        """Show the record as ``text`` in this assembly (a snippet); never cached."""
        self._texts[record_id], self._tokens[record_id] = text, tokens
        self._lines.pop(record_id, None)
        self._line_tokens.pop(record_id, None)
        self._fresh.discard(record_id)
        self._snippets.add(record_id)

    def cost_of(self, records: Mapping[UUID, Record]) -> Callable[[UUID], int]:
        return lambda record_id: self.tokens(records[record_id])
