"""How a prior fix reads in the context: a resolved debug path as its KISS summary, root
cause and what fixed it, with the path's id (``GET /paths/{id}`` has its waypoints).

Rendered here rather than by the ``debug.path.v1`` schema's hints: a path's context also
holds the tracker's state (counts, commands, times), which a tenant without those hints
would see compactly rendered in full. Only assemblies of agents with the ``paths`` source
render paths this way (context.sources.paths); other agents see them as before.
"""

from __future__ import annotations

from collections.abc import Mapping
from uuid import UUID

from cairn.context.blocks import ItemBlocks, item_header, neutralise
from cairn.context.model import Record
from cairn.context.render import is_prior_fix
from cairn.context.tokens import TokenCounter


def prior_fix_block(record: Record) -> str:
    """The path's block: the item header, then one line per part of its resolution."""
    context = record.context
    lines = [f"Fixed before (path {record.id}): {_line(context.get('kiss_summary'))}"]
    for label, key in (("Root cause", "root_cause"), ("What fixed it", "what_fixed_it")):
        if context.get(key):
            lines.append(f"{label}: {_line(context[key])}")
    return item_header(record) + neutralise("\n".join(lines)) + "\n"


def render_prior_fixes(
    records: Mapping[UUID, Record], blocks: ItemBlocks, counter: TokenCounter
) -> list[UUID]:
    """Show every resolved path among ``records`` as a prior fix in this assembly; their ids."""
    shown = []
    for record in records.values():
        if is_prior_fix(record):
            block = prior_fix_block(record)
            blocks.substitute(record.id, block, counter.count(block))
            shown.append(record.id)
    return shown


def _line(value: object) -> str:
    return " ".join(str(value or "").split())
