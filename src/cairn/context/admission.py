"""The classic layout's admission by budget: what a record adds to the text where it lands
(its tokens, and the section or run headers its place needs)."""

from __future__ import annotations

import bisect
import weakref
from datetime import datetime
from typing import TYPE_CHECKING
from uuid import UUID

from cairn.context.blocks import run_header, untitled_header
from cairn.context.model import DropReason, Section
from cairn.context.render import section_header

if TYPE_CHECKING:
    from cairn.context.layout import ClassicLayout


class HeadersAsNeeded:
    """The classic layout's admission: a record is taken while its tokens and the headers
    its place in the text adds fit what is left of the budget. Reserving every section's
    header up front left about a short message's worth of the budget unused in a context of
    two sections; a one-line record costs its line, and the header of its run (one item
    header while it is alone, one run header for two or more) is charged where the record
    lands: at the end of its section, or by time in the history, where it may join the
    runs before and after it or split one in two."""

    def __init__(self, layout: ClassicLayout, budget: int) -> None:
        # Weakly: the layout keeps its admission, and a cycle between the two would leave
        # the assembly's records and blocks to the cyclic collector instead of freeing them
        # when the assembly ends (a young collection of ~60,000 objects paused an assembly
        # for 30 ms; benchmarks/results/tails.md).
        self.layout, self.remaining = weakref.proxy(layout), budget
        # Per section, the places of the records taken (in text order) and their run kind
        # (the schema of a one-line record, None for one that stands alone).
        self.places: dict[Section, list[tuple[datetime, int]]] = {}
        self.kinds: dict[Section, list[str | None]] = {}
        self._headers: dict[tuple[str | None, bool], int] = {}

    def __call__(self, record_id: UUID, source: str, tokens: int) -> DropReason | None:
        if tokens > self.remaining:  # whatever headers it would add
            return DropReason.over_budget
        layout = self.layout
        record = layout.records[record_id]
        section = layout.section_of(record)
        kind = (record.schema_name or "") if layout.joins_runs(record) else None
        opened = section in self.kinds
        places, kinds = self.places.setdefault(section, []), self.kinds.setdefault(section, [])
        # The history's order (context.render): by time, then id (a UUID's text sorts as
        # its number does).
        place = (record.created_at, record.id.int)
        at = bisect.bisect(places, place) if section is Section.history else len(places)
        needed = tokens + self._added(kinds, at, kind)
        if not opened:
            needed += layout.counter.count(section_header(section))
        if needed > self.remaining:
            if not opened:
                del self.places[section], self.kinds[section]
            return DropReason.over_budget
        self.remaining -= needed
        places.insert(at, place)
        kinds.insert(at, kind)
        return None

    def _added(self, kinds: list[str | None], at: int, kind: str | None) -> int:
        """Header tokens a record of run ``kind`` adds when inserted at ``at``."""
        before = kinds[at - 1] if at > 0 else None
        after = kinds[at] if at < len(kinds) else None
        left = _run_length(kinds, at - 1, -1, before)
        right = _run_length(kinds, at, 1, after)
        if before is not None and before == after:  # inside one run
            was = self._extra(left + right, before)
            if kind == before:
                return self._extra(left + right + 1, kind) - was
            return (
                self._extra(left, before) + self._extra(right, after) + self._extra(1, kind) - was
            )
        was = self._extra(left, before) + self._extra(right, after)
        if kind is not None and kind == before:
            return self._extra(left + 1, kind) + self._extra(right, after) - was
        if kind is not None and kind == after:
            return self._extra(left, before) + self._extra(right + 1, kind) - was
        return self._extra(1, kind)

    def _extra(self, length: int, kind: str | None) -> int:
        """The header tokens of a run of ``length`` one-line records of schema ``kind``: an
        item's header for one, a run's for more (what their lines do not carry)."""
        if kind is None or length == 0:
            return 0
        key = (kind, length > 1)
        if key not in self._headers:
            header = run_header(kind) if length > 1 else untitled_header(kind)
            self._headers[key] = self.layout.counter.count(header)
        return self._headers[key]


def _run_length(kinds: list[str | None], start: int, step: int, kind: str | None) -> int:
    """How many records from ``start`` on (going ``step``) are of run ``kind``, counted up
    to two: a run's headers depend only on whether it has none, one or more records."""
    if kind is None:
        return 0
    n, at = 0, start
    while n < 2 and 0 <= at < len(kinds) and kinds[at] == kind:
        n, at = n + 1, at + step
    return n
