"""``formatted_context``: the selected records in sections, with delimiters content cannot
forge, and an exact token count within the budget.

Delimiters are the only place ``⟦`` and ``⟧`` (U+27E6/U+27E7) occur: every title, schema
name and rendered body has them (and their look-alikes ``〚〛``) replaced by ``[``/``]``
before it is placed, and titles and schema names are folded onto one line. So every ``⟦``
in the text opens a delimiter Cairn wrote, whatever the records contain.

Layout, one line per delimiter::

    ⟦section tools⟧
    ⟦item · tool.code.v1 · Calculator⟧
    <rendered body>

Every block ends with one newline and the next starts with ``⟦``, a boundary tiktoken's
pre-tokenizers (o200k, cl100k) never merge across, so the token count of the whole text is
the sum of its blocks' counts. The exact count of the final text is checked all the same
(:func:`exact_count`: chunk by chunk at those boundaries, so the blocks' counts come from
the counter's cache instead of encoding the whole text again), and the lowest-priority
items are trimmed if it were over.

A header has no title when the title says nothing the block does not: the body contains
it, or it only repeats the schema's name (``User Message`` on a ``user.message.v1``). A
record without hints is rendered compactly (see ``breadcrumbs.text.compact_text``); one
that fits one line joins the run of its schema like any one-line item::

    ⟦items · locomo.turn.v1⟧
    Caroline · 8 May 2023 · I went to a LGBTQ support group yesterday.
    Melanie · 8 May 2023 · That's brave of you.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Iterable, Mapping
from functools import lru_cache
from typing import TypeVar
from uuid import UUID

from cairn.context.model import (
    SECTION_ORDER,
    Record,
    Rendered,
    RenderedItem,
    Section,
    Selection,
)
from cairn.context.titles import title_is_redundant
from cairn.context.tokens import TokenCounter
from cairn.paths.repository import PATH_SCHEMA
from cairn.transforms.cache import LRU

RenderItem = Callable[[Record], str]
T = TypeVar("T")

OPEN, CLOSE = "⟦", "⟧"
_NEUTRALISE = str.maketrans({OPEN: "[", CLOSE: "]", "〚": "[", "〛": "]"})
_FORGEABLE = re.compile("[⟦⟧〚〛]")
# Part of every cached block's key: bump it when a block's rendering changes, so a block
# rendered the old way is never served (the cache lives as long as the process).
BLOCK_FORMAT = 5
MAX_TITLE_CHARS = 200
HISTORY_SCHEMAS = ("user.message.", "agent.response.", "tool.response.")
TOOL_SCHEMAS = ("tool.",)
KNOWLEDGE_SCHEMAS = ("knowledge.",)
TOOL_TAGS = frozenset({"workspace:tools"})
KNOWLEDGE_TAGS = frozenset({"knowledge", "workspace:knowledge"})


def neutralise(text: str) -> str:
    """``text`` with every delimiter character (and look-alike) made an ordinary bracket."""
    # Most text holds none of them; searching is much cheaper than translating.
    return text if _FORGEABLE.search(text) is None else text.translate(_NEUTRALISE)


def _one_line(text: str) -> str:
    return neutralise(" ".join(text.split()))


def section_header(section: Section) -> str:
    return f"{OPEN}section {section.value}{CLOSE}\n"


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


def run_line(record: Record, block: str) -> str | None:
    """The line ``block`` (the record's) takes in a run: its body, when the header has no
    title and the body is one line; else None (the block stands alone)."""
    head, _, body = block.partition("\n")
    if not body or body.find("\n") != len(body) - 1:
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


def fixed_overhead(counter: TokenCounter, *, prior_fixes: bool = False) -> int:
    """Tokens of every section header: an upper bound on what is not items. The prior
    fixes' header counts only for an agent that has them (context.sources.paths)."""
    return sum(counter.count(section_header(section)) for section in sections(prior_fixes))


def sections(prior_fixes: bool) -> tuple[Section, ...]:
    return tuple(s for s in SECTION_ORDER if prior_fixes or s is not Section.prior_fixes)


def is_prior_fix(record: Record) -> bool:
    """A resolved debug path: what the ``paths`` source offers as a prior fix."""
    return record.schema_name == PATH_SCHEMA and record.context.get("status") == "resolved"


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
            for record_id, key in self._keys.items():
                known = None if key is None else cache.get(key)
                if known is not None:
                    self._texts[record_id], tokens, line_tokens = known
                    if tokens is not None:
                        self._tokens[record_id] = tokens
                    if line_tokens is not None:
                        self._line_tokens[record_id] = line_tokens
                    self._cached.add(record_id)

    def cached(self, record_id: UUID) -> bool:
        """Whether the record's block came from the cache (it needs no rendering)."""
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


def section_of(
    record: Record,
    trigger_id: UUID | None,
    trigger_sessions: frozenset[str],
    *,
    prior_fixes: bool = False,
) -> Section:
    """Conversation schemas are history; then tools and knowledge by schema or tag; then
    anything sharing a session with the trigger is history; the rest is additional. With
    ``prior_fixes``, resolved debug paths are prior fixes."""
    schema = record.schema_name or ""
    if record.id == trigger_id:
        return Section.trigger
    if prior_fixes and is_prior_fix(record):
        return Section.prior_fixes
    if schema.startswith(HISTORY_SCHEMAS):
        return Section.history
    if schema.startswith(TOOL_SCHEMAS) or not TOOL_TAGS.isdisjoint(record.tags):
        return Section.tools
    if schema.startswith(KNOWLEDGE_SCHEMAS) or not KNOWLEDGE_TAGS.isdisjoint(record.tags):
        return Section.knowledge
    if not trigger_sessions.isdisjoint(record.session_tags):
        return Section.history
    return Section.additional


_Placed = tuple[Record, Section]


def assemble_text(
    selection: Selection,
    records: Mapping[UUID, Record],
    render_item: RenderItem,
    counter: TokenCounter,
    budget: int,
    *,
    blocks: ItemBlocks | None = None,
    prior_fixes: bool = False,
) -> Rendered:
    """Render the selection in sections (tools, knowledge, prior fixes, history by time,
    additional, trigger), in selection order within a section. If the exact count exceeds
    ``budget``, the lowest-priority items go first (the trigger last) until it fits. Pass
    the ``blocks`` whose ``cost_of`` the pathfinder used, so no record is rendered twice."""
    blocks = blocks or ItemBlocks(render_item, counter)
    placed = _place(selection, records, prior_fixes)
    trimmed: list[UUID] = []
    while True:
        chunks, items = _compose(placed, blocks)
        text, token_count = "".join(chunks), exact_count(counter, chunks)
        if token_count <= budget or not placed:
            return Rendered(text, token_count, items, trimmed)
        chosen = victims(
            placed, token_count - budget,
            tokens=lambda item: blocks.tokens(item[0]),
            is_trigger=lambda item: item[1] is Section.trigger,
        )  # fmt: skip
        for victim in chosen:
            placed.remove(victim)
            trimmed.append(victim[0].id)


def _place(
    selection: Selection, records: Mapping[UUID, Record], prior_fixes: bool
) -> list[_Placed]:
    trigger_id = selection.trigger_id
    sessions = records[trigger_id].session_tags if trigger_id is not None else frozenset()
    chosen = [records[item.record_id] for item in selection.selected]
    return [
        (record, section_of(record, trigger_id, sessions, prior_fixes=prior_fixes))
        for record in chosen
    ]


def _compose(placed: list[_Placed], blocks: ItemBlocks) -> tuple[list[str], list[RenderedItem]]:
    """The text as chunks (a section header, a block, a run with its header) and its
    items."""
    members: dict[Section, list[Record]] = {section: [] for section in SECTION_ORDER}
    for record, section in placed:
        members[section].append(record)
    members[Section.history].sort(key=lambda record: (record.created_at, str(record.id)))
    chunks: list[str] = []
    items: list[RenderedItem] = []
    for section in SECTION_ORDER:
        if members[section]:
            chunks.append(section_header(section))
        for run in runs(members[section], blocks):
            if len(run) == 1:
                chunks.append(blocks.text(run[0]))
                items.append(RenderedItem(run[0].id, section, blocks.tokens(run[0])))
                continue
            parts = [run_header(run[0].schema_name)]
            for record in run:
                line, tokens = blocks.line(record) or ("", 0)
                parts.append(line)
                items.append(RenderedItem(record.id, section, tokens))
            chunks.append("".join(parts))
    return chunks, items


def exact_count(counter: TokenCounter, chunks: Iterable[str]) -> int:
    """The token count of ``"".join(chunks)``, counted chunk by chunk where a chunk ends
    with a newline and the next starts with ``⟦``: no pre-token of o200k or cl100k spans
    that boundary (a newline ends every piece that holds one but a run of punctuation's,
    which takes only newlines and ``/`` after it, and ``⟦`` opens no whitespace piece), so
    the sum is the count of the whole. Elsewhere chunks are counted together."""
    total, pending = 0, ""
    for chunk in chunks:
        if pending.endswith("\n") and chunk.startswith(OPEN):
            total += counter.count(pending)
            pending = chunk
        else:
            pending += chunk
    return total + (counter.count(pending) if pending else 0)


def runs(records: list[Record], blocks: ItemBlocks) -> list[list[Record]]:
    """``records`` in order, cut into runs: consecutive one-line items of one schema share a
    run; any other item is a run of its own."""
    cut: list[list[Record]] = []
    joins: str | None = None  # the schema of the open run, if it takes one-line items
    for record in records:
        schema = record.schema_name or ""
        if blocks.line(record) is None:
            cut.append([record])
            joins = None
        elif joins == schema:
            cut[-1].append(record)
        else:
            cut.append([record])
            joins = schema
    return cut


def victims(
    placed: list[T], excess: int, *, tokens: Callable[[T], int], is_trigger: Callable[[T], bool]
) -> list[T]:
    """What to trim when the exact count is ``excess`` tokens over: the last-selected items
    whose tokens cover it; the trigger alone, once nothing else is left. Never empty while
    anything is placed, so trimming progresses."""
    others = [item for item in reversed(placed) if not is_trigger(item)]
    if not others:
        return placed[:1]
    chosen: list[T] = []
    freed = 0
    for candidate in others:
        chosen.append(candidate)
        freed += tokens(candidate)
        if freed >= excess:
            break
    return chosen
