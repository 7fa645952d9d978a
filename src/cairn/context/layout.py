"""How ``formatted_context`` is laid out: the classic sections (context.render) or an agent's
own sections (context.sections), behind the one small interface an assembly uses to select
(cost, fixed overhead, admission, allocation), render and explain.

The section layout, sections in declaration order, each with its items' rendered bodies
(their schema's hints, without the classic item delimiter) under its ``intro``, or its
``empty_text`` when it has none::

    ## Context (Computed)

    ### Patterns to Follow
    - **Repository pattern** (see: src/repo.py)

    ### Warnings
    No known gotchas for this task area.

Content cannot forge a section heading: a body line that Markdown would read as a heading
of level 1 to 3 (``#`` to ``###``, or a setext ``===``/``---`` underline) gets a backslash
in front; deeper headings stay, for item renderings to use below a section's title. The
delimiter characters stay neutralised as in the classic layout. The exact token count is
checked and the lowest-priority items are trimmed (the trigger last) until it fits.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Protocol
from uuid import UUID

from cairn.context.admission import HeadersAsNeeded
from cairn.context.blocks import OPEN, ItemBlocks, neutralise
from cairn.context.model import (
    Dropped,
    DropReason,
    Record,
    Rendered,
    RenderedItem,
    Section,
    Selection,
)
from cairn.context.pathfinder import Admit
from cairn.context.render import assemble_text, fixed_overhead, section_of, victims
from cairn.context.sections import Allocation, Candidate, Sections, SectionSpec, allocate
from cairn.context.tokens import TokenCounter

_CARRIAGE = re.compile(r"\r\n?")
_HEADING = re.compile(r"^( {0,3})(#{1,3}(?=[ \t]|$)|=+[ \t]*$|-+[ \t]*$)", re.MULTILINE)


def escape_headings(text: str) -> str:
    """``text`` with every line Markdown would read as a level 1-3 heading escaped (and its
    carriage returns, which Markdown reads as line ends too, made newlines)."""
    return _HEADING.sub(r"\1\\\2", _CARRIAGE.sub("\n", text))


class Layout(Protocol):
    overhead: int  # tokens of everything that is not an item (an upper bound)

    @property
    def admit(self) -> Admit | None:
        """None: the pathfinder's budget rule."""
        ...

    def cost_of(self, record_id: UUID) -> int:
        """An item's tokens as this layout renders it."""
        ...

    def allocate(self, selection: Selection) -> Selection: ...

    def render(self, selection: Selection, budget: int) -> Rendered: ...

    def explain(self, rendered: Rendered) -> dict[str, Any]: ...


def layout_for(
    sections: Sections | None,
    records: Mapping[UUID, Record],
    blocks: ItemBlocks,
    counter: TokenCounter,
    tier: str = "normal",
    *,
    prior_fixes: bool = False,
    trigger_id: UUID | None = None,
    budget: int | None = None,
) -> Layout:
    """The agent's section layout, or the classic one when it declares no sections
    (with a prior fixes section when the agent has the ``paths`` source). Given the
    ``budget``, the classic layout charges a section's or a run's header to the first
    record that needs it instead of reserving every section's header up front."""
    if sections is None:
        return ClassicLayout(
            records, blocks, counter, prior_fixes=prior_fixes, trigger_id=trigger_id,
            budget=budget,
        )  # fmt: skip
    return SectionLayout(sections, records, blocks, counter, tier)


class ClassicLayout:
    """Tools, knowledge, prior fixes, history, additional, trigger (context.render)."""

    def __init__(
        self,
        records: Mapping[UUID, Record],
        blocks: ItemBlocks,
        counter: TokenCounter,
        *,
        prior_fixes: bool = False,
        trigger_id: UUID | None = None,
        budget: int | None = None,
    ) -> None:
        self.records, self.blocks, self.counter = records, blocks, counter
        self.prior_fixes, self.trigger_id = prior_fixes, trigger_id
        trigger = records.get(trigger_id) if trigger_id is not None else None
        self.sessions = trigger.session_tags if trigger is not None else frozenset()
        self.overhead = fixed_overhead(counter, prior_fixes=prior_fixes)
        self.admit: Admit | None = None
        if budget is not None:  # headers are charged as records need them
            self.overhead, self.admit = 0, HeadersAsNeeded(self, budget)

    def section_of(self, record: Record) -> Section:
        return section_of(record, self.trigger_id, self.sessions, prior_fixes=self.prior_fixes)

    def joins_runs(self, record: Record) -> bool:
        """Whether the record is shown as a line in a run of its kind (when not alone)."""
        return record.id != self.trigger_id and self.blocks.line(record) is not None

    def cost_of(self, record_id: UUID) -> int:
        """A one-line item costs its line (it shares a run's header); the trigger, alone in
        its section, its whole block."""
        record = self.records[record_id]
        line = self.blocks.line(record) if record_id != self.trigger_id else None
        return self.blocks.tokens(record) if line is None else line[1]

    def allocate(self, selection: Selection) -> Selection:
        return selection

    def render(self, selection: Selection, budget: int) -> Rendered:
        return assemble_text(
            selection, self.records, self.blocks.text, self.counter, budget,
            blocks=self.blocks, prior_fixes=self.prior_fixes,
        )  # fmt: skip

    def explain(self, rendered: Rendered) -> dict[str, Any]:
        return {}


_Placed = tuple[Record, SectionSpec]


class SectionLayout:
    """One assembly's section layout: admission by match, allocation by section, rendering
    and the per-section explanation (``explain.sections``)."""

    def __init__(
        self,
        sections: Sections,
        records: Mapping[UUID, Record],
        blocks: ItemBlocks,
        counter: TokenCounter,
        tier: str = "normal",
    ) -> None:
        self.sections, self.records, self.blocks = sections, records, blocks
        self.counter, self.tier = counter, tier
        self.allocation = Allocation((), ())
        self._bodies: dict[UUID, tuple[str, int]] = {}
        self._sections: dict[tuple[UUID, str], SectionSpec | None] = {}
        self._headers = [_section_header(spec) for spec in sections.specs]
        self._heading = f"{_one_line(sections.heading)}\n" if sections.heading.strip() else ""
        skeleton = [self._heading, *self._headers]
        skeleton += [_text(s.empty_text) + _text(s.intro) for s in sections.specs]
        # Each chunk after the first follows a blank line: one more newline per section.
        self.overhead = sum(counter.count(part) for part in skeleton) + len(sections.specs)

    def body(self, record: Record) -> tuple[str, int]:
        """The record's text in a section (its block without the item delimiter line, or
        its title when the body is empty) and its tokens."""
        known = self._bodies.get(record.id)
        if known is None:
            block = self.blocks.text(record)
            text = block.partition("\n")[2] if block.startswith(OPEN) else block
            text = escape_headings(text or (f"{_one_line(record.title)}\n" * bool(record.title)))
            known = self._bodies[record.id] = (text, self.counter.count(text))
        return known

    def cost_of(self, record_id: UUID) -> int:
        return self.body(self.records[record_id])[1]

    def section_of(self, record_id: UUID, source: str) -> SectionSpec | None:
        """The section that takes the record reached from ``source`` (asked for in the
        search, the allocation and every trimming round: matched once)."""
        key = (record_id, source)
        if key not in self._sections:
            self._sections[key] = self.sections.section_for(self.records[record_id], source)
        return self._sections[key]

    @property
    def admit(self) -> Admit:
        # Made when asked for, not kept: a bound method kept on the layout would make it a
        # reference cycle, left (with every block of the assembly) to the collector.
        return self._admit

    def _admit(self, record_id: UUID, source: str, tokens: int) -> DropReason | None:
        """Taken for now when a section matches; the sections decide in ``allocate``."""
        return None if self.section_of(record_id, source) is not None else DropReason.no_section

    def allocate(self, selection: Selection) -> Selection:
        """The pathfinder's candidates (in its order) as their sections take them."""
        candidates: list[Candidate] = []
        unmatched: set[UUID] = set()
        for item in selection.selected:
            spec = self.section_of(item.record_id, item.source)
            if spec is None:
                unmatched.add(item.record_id)
            else:
                candidates.append(Candidate(item.record_id, spec.name, item.tokens))
        available = selection.budget_tokens - selection.fixed_overhead
        self.allocation = allocate(candidates, self.sections, available, self.tier)
        taken = self.allocation.taken
        kept = [item for item in selection.selected if item.record_id in taken]
        left_out = [
            Dropped(
                item.record_id,
                DropReason.no_section if item.record_id in unmatched else DropReason.sections_full,
                item.tokens,
                item.path_cost,
            )
            for item in selection.selected
            if item.record_id not in taken
        ]
        trigger = selection.trigger_id
        return Selection(
            selected=kept,
            dropped=[*selection.dropped, *left_out],
            budget_tokens=selection.budget_tokens,
            fixed_overhead=selection.fixed_overhead,
            tokens_used=selection.fixed_overhead + sum(item.tokens for item in kept),
            trigger_over_budget=trigger is not None and trigger in self.allocation.rejected,
        )

    def render(self, selection: Selection, budget: int) -> Rendered:
        """The section layout of the selection; trimmed, lowest priority first, to fit."""
        placed: list[_Placed] = []
        for item in selection.selected:
            spec = self.section_of(item.record_id, item.source)
            if spec is not None:
                placed.append((self.records[item.record_id], spec))
        trigger = selection.trigger_id
        trimmed: list[UUID] = []
        while True:
            text, items = self._compose(placed)
            token_count = self.counter.count(text)
            if token_count <= budget:
                return Rendered(text, token_count, items, trimmed)
            if not placed:  # not even the headings fit: nothing does
                return Rendered("", 0, [], trimmed)
            chosen = victims(
                placed, token_count - budget,
                tokens=lambda item: self.body(item[0])[1],
                is_trigger=lambda item: item[0].id == trigger,
            )  # fmt: skip
            for victim in chosen:
                placed.remove(victim)
                trimmed.append(victim[0].id)

    def explain(self, rendered: Rendered) -> dict[str, Any]:
        used: dict[str, list[int]] = {spec.name: [] for spec in self.sections.specs}
        for item in rendered.items:
            used[str(item.section)].append(item.tokens)
        uses = {use.name: use for use in self.allocation.sections}
        return {
            "sections": [
                {
                    "name": spec.name,
                    "title": spec.title,
                    "allocated": uses[spec.name].allocated if spec.name in uses else 0,
                    "used": sum(used[spec.name]),
                    "items": len(used[spec.name]),
                    "max_items": self.sections.max_items(spec, self.tier),
                    "empty": not used[spec.name],
                    "candidates": uses[spec.name].candidates if spec.name in uses else 0,
                }
                for spec in self.sections.specs
            ]
        }

    def _compose(self, placed: list[_Placed]) -> tuple[str, list[RenderedItem]]:
        members: dict[str, list[Record]] = {spec.name: [] for spec in self.sections.specs}
        for record, spec in placed:
            members[spec.name].append(record)
        chunks = [self._heading] if self._heading else []
        items: list[RenderedItem] = []
        for spec, header in zip(self.sections.specs, self._headers, strict=True):
            parts = [header, _text(spec.intro) if members[spec.name] else _text(spec.empty_text)]
            for record in _ordered(members[spec.name], spec.order_by):
                body, tokens = self.body(record)
                parts.append(body)
                items.append(RenderedItem(record.id, spec.name, tokens))
            chunks.append("".join(parts))
        return "\n".join(chunks), items


def _ordered(records: list[Record], order_by: str) -> list[Record]:
    if order_by == "relevance":
        return records
    oldest_first = sorted(records, key=lambda r: (r.created_at, r.id.int))
    return oldest_first if order_by == "oldest" else oldest_first[::-1]


def _one_line(text: str) -> str:
    return neutralise(" ".join(text.split()))


def _section_header(spec: SectionSpec) -> str:
    return f"### {_one_line(spec.title)}\n"


def _text(agent_text: str) -> str:
    """An agent's own text (an empty text, an intro) as a block of whole lines."""
    text = neutralise(agent_text).strip("\n")
    return f"{text}\n" if text.strip() else ""
