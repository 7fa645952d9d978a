"""A realistic assembly for the classic layout (no sections): tools, knowledge, a session's
history, other notes and the trigger, linked by every edge type, with records that hold
delimiters, Markdown headings and more text than a small budget takes.

``python -m tests.context.classic_world`` rewrites the golden output the layout is compared
with (tests/context/test_classic_layout.py); it was generated before agent sections existed.
"""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

from tests.context.helpers import EPOCH, graph, record, render_plain, rid

from cairn.context import (
    Budget,
    BudgetSource,
    EdgeType,
    Graph,
    ItemBlocks,
    Record,
    Seed,
    TokenCounter,
    assemble_text,
    build_explain,
    ensure_tokenizer_files,
    fixed_overhead,
    select_within_budget,
)

GOLDEN = Path(__file__).parent / "golden" / "classic_layout.json"
BUDGETS = (120, 300, 700, 1500, 6000)
SESSION = ("session:s1",)
CAUSAL, TEMPORAL, TAG, SEMANTIC = (
    EdgeType.causal,
    EdgeType.temporal,
    EdgeType.tag,
    EdgeType.semantic,
)


def _records() -> list[Record]:
    at = EPOCH
    tools = [
        record(2, schema_name="tool.code.v1", title="Calculator", tags=("workspace:tools",),
               context={"name": "calculator", "description": "adds and multiplies numbers"}),
        record(3, schema_name="tool.code.v1", title="Web search ⟦section trigger⟧",
               context={"name": "search", "description": "searches ⟦item · fake⟧ the web"}),
    ]  # fmt: skip
    knowledge = [
        record(10 + n, schema_name="knowledge.v1", title=f"Fact {n}", tags=("knowledge",),
               context={"text": f"fact {n}: " + "the kayak leaks near the stern " * (1 + n % 4)})
        for n in range(8)
    ]  # fmt: skip
    knowledge.append(
        record(18, schema_name="knowledge.v1", title="Huge manual", tags=("knowledge",),
               context={"text": "a very long manual page " * 120})
    )  # fmt: skip
    history = [
        record(30 + n, schema_name="user.message.v1" if n % 2 == 0 else "agent.response.v1",
               title=f"Turn {n}", tags=SESSION, created_at=at + timedelta(minutes=n),
               context={"content": f"turn {n} about the red kayak and its repairs"})
        for n in range(10)
    ]  # fmt: skip
    notes = [
        record(50, title="Heading note", context={"text": "## Fake\n### Another\nbody\n---"}),
        record(51, title="Shared-tag note", tags=("topic:kayak",), context={"text": "paddles"}),
        record(52, schema_name=None, title="", context={"text": "no schema, no title"}),
        record(53, title="Unreached note", context={"text": "nothing links here"}),
    ]  # fmt: skip
    trigger = record(
        1, schema_name="user.message.v1", title="Question", tags=(*SESSION, "user:message"),
        created_at=at + timedelta(minutes=20),
        context={"content": "What is wrong with the kayak, and who repaired it?"},
    )  # fmt: skip
    return [trigger, *tools, *knowledge, *history, *notes]


def world() -> tuple[list[Seed], Graph]:
    edges = [
        *((1, 30 + n, TEMPORAL, 1.0) for n in range(10)),
        *((30 + n, 31 + n, TEMPORAL, 1.0) for n in range(9)),
        *((10 + n, 11 + n, SEMANTIC, 0.9 - n / 20) for n in range(8)),
        (1, 50, SEMANTIC, 0.5),
        (50, 51, TAG, 1.0),
        (33, 12, CAUSAL, 1.0),
        (51, 52, TAG, 1.0),
    ]
    seeds = [
        Seed(rid(1), "trigger", 1.0, "the trigger"),
        Seed(rid(2), "always", 1.0, "tools"),
        Seed(rid(3), "always", 0.9, "tools"),
        *(Seed(rid(10 + n), "semantic", 0.8 - n / 12, "hybrid") for n in range(9)),
        *(Seed(rid(39 - n), "session", 1.0 - n / 10, "session") for n in range(6)),
        Seed(rid(50), "semantic", 0.75, "hybrid"),
        Seed(rid(99), "semantic", 0.5, "deleted meanwhile"),
    ]
    return seeds, graph(_records(), edges)


def assemble_classic(counter: TokenCounter, budget: int) -> dict[str, Any]:
    """formatted_context and explain as an agent without sections gets them."""
    seeds, g = world()
    blocks = ItemBlocks(render_plain, counter)
    selection = select_within_budget(
        seeds, g, blocks.cost_of(g.records), budget,
        max_nodes=20, fixed_overhead=fixed_overhead(counter), max_hops=2,
    )  # fmt: skip
    rendered = assemble_text(selection, g.records, blocks.text, counter, budget, blocks=blocks)
    explain = build_explain(
        seeds=seeds, selection=selection, rendered=rendered,
        budget=Budget(budget, BudgetSource.agent), records=g.records,
    )  # fmt: skip
    return {
        "formatted_context": rendered.text,
        "token_count": rendered.token_count,
        "breadcrumb_count": len(rendered.items),
        "explain": explain,
    }


def as_json(outputs: dict[str, Any]) -> str:
    return json.dumps(outputs, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    import tempfile

    counter = TokenCounter.from_dir(ensure_tokenizer_files(Path(tempfile.mkdtemp())))
    GOLDEN.parent.mkdir(exist_ok=True)
    GOLDEN.write_text(as_json({str(b): assemble_classic(counter, b) for b in BUDGETS}))
