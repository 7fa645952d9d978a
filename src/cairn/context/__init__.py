"""The context builder's pure core (ARCHITECTURE §7): plain data in, plain data out.

``seeds → graph`` come from the database side as ``Seed``, ``Graph``; then
``select_within_budget`` (pathfinder) → ``assemble_text`` (render) → ``build_explain``.
Budgets come from ``resolve_budget``, token counts from ``TokenCounter``.
"""

from cairn.context.blocks import ItemBlocks, RenderItem, item_cost
from cairn.context.budget import resolve_budget
from cairn.context.explain import Timer, build_explain
from cairn.context.model import (
    SECTION_ORDER,
    TRIGGER_SOURCE,
    Budget,
    BudgetSource,
    Dropped,
    DropReason,
    Edge,
    EdgeType,
    Graph,
    Record,
    Rendered,
    RenderedItem,
    Section,
    Seed,
    Selected,
    Selection,
)
from cairn.context.pathfinder import DEFAULT_COSTS, CostModel, select_within_budget
from cairn.context.render import assemble_text, fixed_overhead, section_of
from cairn.context.tokens import (
    DEFAULT_ENCODING,
    TokenCounter,
    TokenizerFilesError,
    encoding_for_model,
    ensure_tokenizer_files,
)

__all__ = [
    "DEFAULT_COSTS",
    "DEFAULT_ENCODING",
    "SECTION_ORDER",
    "TRIGGER_SOURCE",
    "Budget",
    "BudgetSource",
    "CostModel",
    "DropReason",
    "Dropped",
    "Edge",
    "EdgeType",
    "Graph",
    "ItemBlocks",
    "Record",
    "RenderItem",
    "Rendered",
    "RenderedItem",
    "Section",
    "Seed",
    "Selected",
    "Selection",
    "Timer",
    "TokenCounter",
    "TokenizerFilesError",
    "assemble_text",
    "build_explain",
    "encoding_for_model",
    "ensure_tokenizer_files",
    "fixed_overhead",
    "item_cost",
    "resolve_budget",
    "section_of",
    "select_within_budget",
]
