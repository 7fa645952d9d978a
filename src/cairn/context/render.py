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

from collections.abc import Callable, Iterable, Mapping
from typing import TypeVar
from uuid import UUID

from cairn.context.blocks import CLOSE, OPEN, ItemBlocks, RenderItem, run_header
from cairn.context.model import (
    SECTION_ORDER,
    Record,
    Rendered,
    RenderedItem,
    Section,
    Selection,
)
from cairn.context.tokens import TokenCounter
from cairn.paths.repository import PATH_SCHEMA

T = TypeVar("T")

HISTORY_SCHEMAS = ("user.message.", "agent.response.", "tool.response.")
TOOL_SCHEMAS = ("tool.",)
KNOWLEDGE_SCHEMAS = ("knowledge.",)
TOOL_TAGS = frozenset({"workspace:tools"})
KNOWLEDGE_TAGS = frozenset({"knowledge", "workspace:knowledge"})


def section_header(section: Section) -> str:
    return f"{OPEN}section {section.value}{CLOSE}\n"


def fixed_overhead(counter: TokenCounter, *, prior_fixes: bool = False) -> int:
    """Tokens of every section header: an upper bound on what is not items. The prior
    fixes' header counts only for an agent that has them (context.sources.paths)."""
    return sum(counter.count(section_header(section)) for section in sections(prior_fixes))


def sections(prior_fixes: bool) -> tuple[Section, ...]:
    return tuple(s for s in SECTION_ORDER if prior_fixes or s is not Section.prior_fixes)


def is_prior_fix(record: Record) -> bool:
    """A resolved debug path: what the ``paths`` source offers as a prior fix."""
    return record.schema_name == PATH_SCHEMA and record.context.get("status") == "resolved"


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
