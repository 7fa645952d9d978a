"""An agent without sections gets, byte for byte, the formatted_context and explanation it
got before sections existed: the golden output was generated from the code before them."""

from __future__ import annotations

import json

import pytest
from tests.context.classic_world import BUDGETS, GOLDEN, as_json, assemble_classic, world
from tests.context.helpers import render_plain

from cairn.context import (
    Budget,
    BudgetSource,
    ItemBlocks,
    TokenCounter,
    blocks,
    build_explain,
    select_within_budget,
)
from cairn.context.layout import layout_for


@pytest.fixture(autouse=True)
def titles_as_before(monkeypatch: pytest.MonkeyPatch) -> None:
    """Headers keep every title, as they did when the golden output was written. Leaving out
    a title that only repeats the body is a deliberate change of the rendering, tested on
    its own in tests/context/test_render.py; the layout around it must not move."""
    monkeypatch.setattr(blocks, "title_is_redundant", lambda record, body: False)


@pytest.fixture(autouse=True)
def blocks_as_before(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every item keeps its own block and costs it, as when the golden output was written.
    Runs of one-line items under one header (charged their lines) are a deliberate change
    of the rendering, tested on their own in tests/context/test_render.py."""
    monkeypatch.setattr(blocks, "run_line", lambda record, block: None)


@pytest.mark.parametrize("budget", BUDGETS)
def test_the_classic_layout_is_byte_identical(counter: TokenCounter, budget: int) -> None:
    golden = json.loads(GOLDEN.read_text())[str(budget)]
    assert as_json(assemble_classic(counter, budget)) == as_json(golden)


def test_the_golden_output_covers_drops_trims_and_every_section() -> None:
    """The comparison means something only if the world exercises what could change."""
    golden = json.loads(GOLDEN.read_text())
    reasons = {d["reason"] for out in golden.values() for d in out["explain"]["dropped"]}
    assert {"over_budget", "not_loaded", "max_nodes"} <= reasons
    sections = {s["section"] for out in golden.values() for s in out["explain"]["selected"]}
    assert sections == {"tools", "knowledge", "history", "additional", "trigger"}
    assert "## Fake" in golden["6000"]["formatted_context"]


@pytest.mark.parametrize("budget", BUDGETS)
def test_the_assembly_path_without_sections_is_byte_identical(
    counter: TokenCounter, budget: int
) -> None:
    """The stages as context.assemble runs them now (a layout for an agent without sections,
    its admission, allocation, rendering and explanation) give the golden output too. The
    layout is not given the budget: charging headers where records land instead of
    reserving every section's (which context.assemble does) is a deliberate change of the
    selection, tested in tests/context/test_render.py."""
    golden = json.loads(GOLDEN.read_text())[str(budget)]
    seeds, g = world()
    blocks = ItemBlocks(render_plain, counter)
    layout = layout_for(None, g.records, blocks, counter)
    selection = layout.allocate(
        select_within_budget(
            seeds, g, layout.cost_of, budget, max_nodes=20,
            fixed_overhead=layout.overhead, max_hops=2, admit=layout.admit,
        )
    )  # fmt: skip
    rendered = layout.render(selection, budget)
    explain = build_explain(
        seeds=seeds, selection=selection, rendered=rendered,
        budget=Budget(budget, BudgetSource.agent), records=g.records,
    ) | layout.explain(rendered)  # fmt: skip
    assert rendered.text == golden["formatted_context"]
    assert as_json(explain) == as_json(golden["explain"])
    assert (rendered.token_count, len(rendered.items)) == (
        golden["token_count"],
        golden["breadcrumb_count"],
    )
