"""Without the options added since, selection, layout and explanation stay byte-identical.

A fixed world — tools, knowledge, two sessions of history, notes, every edge type, one
oversized record — is selected, rendered and explained at several budgets, and the result
is compared with ``golden/layout.json``, written by the code as it was before sections,
domains and the ranking options existed. The renderer is the test's own (compact JSON), so
the comparison is about the pipeline, not about how a record's text is rendered.

Regenerate (only when a change of output is intended and explained in the commit)::

    .venv/bin/python -m tests.context.test_golden_layout --write
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

from tests.context.helpers import graph, record, render_plain, rid

import cairn.context as core
from cairn.context import (
    Budget,
    BudgetSource,
    EdgeType,
    ItemBlocks,
    Seed,
    TokenCounter,
    assemble_text,
    build_explain,
    ensure_tokenizer_files,
    fixed_overhead,
    select_within_budget,
)

GOLDEN = Path(__file__).parent / "golden" / "layout.json"
BUDGETS = (150, 400, 900, 3000)
_SOURCE = getattr(core, "SeedSource", str)  # seeds named their source by an enum before


def _world() -> tuple[list[Seed], Any]:
    rng = random.Random(20261126)
    records = [record(1, schema_name="user.message.v1", tags=("session:a",), title="Question")]
    for n in range(2, 61):
        kind = n % 6
        if kind == 0:
            records.append(record(n, schema_name="tool.code.v1", title=f"Tool {n}"))
        elif kind == 1:
            records.append(record(n, schema_name="knowledge.v1", title=f"Fact {n}"))
        elif kind in (2, 3):
            session = "session:a" if kind == 2 else "session:b"
            schema = "user.message.v1" if n % 2 else "agent.response.v1"
            records.append(record(n, schema_name=schema, tags=(session,), title=""))
        elif n == 40:
            records.append(record(n, context={"text": "long " * 600}))
        else:
            records.append(record(n, tags=("workspace:knowledge",) if n % 5 == 0 else ()))
    edges = [
        (rng.randint(1, 60), rng.randint(1, 60), rng.choice(list(EdgeType)), rng.random())
        for _ in range(140)
    ]
    seeds = [Seed(rid(1), _SOURCE("trigger"), 1.0, "the trigger")]
    for source in ("always", "semantic", "session"):
        for n in rng.sample(range(2, 61), 6):
            seeds.append(Seed(rid(n), _SOURCE(source), round(rng.random(), 3), source))
    return seeds, graph(records, edges)


def produce(counter: TokenCounter) -> dict[str, Any]:
    seeds, world = _world()
    out: dict[str, Any] = {}
    for tokens in BUDGETS:
        blocks = ItemBlocks(render_plain, counter)
        selection = select_within_budget(
            seeds, world, blocks.cost_of(world.records), tokens,
            max_nodes=40, fixed_overhead=fixed_overhead(counter), max_hops=2,
        )  # fmt: skip
        rendered = assemble_text(
            selection, world.records, render_plain, counter, tokens, blocks=blocks
        )
        explain = build_explain(
            seeds=seeds, selection=selection, rendered=rendered,
            budget=Budget(tokens, BudgetSource.agent), records=world.records,
        )  # fmt: skip
        out[str(tokens)] = {"text": rendered.text, "tokens": rendered.token_count} | explain
    return json.loads(json.dumps(out))


def test_the_pipeline_without_new_options_matches_the_golden_output(
    counter: TokenCounter,
) -> None:
    expected = json.loads(GOLDEN.read_text())
    produced = produce(counter)
    for budget in BUDGETS:
        assert produced[str(budget)] == expected[str(budget)], f"budget {budget}"


if __name__ == "__main__" and "--write" in sys.argv:
    from tempfile import mkdtemp

    counted = TokenCounter.from_dir(ensure_tokenizer_files(Path(mkdtemp())))
    GOLDEN.write_text(json.dumps(produce(counted), indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {GOLDEN}")
