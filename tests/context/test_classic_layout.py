"""An agent without sections gets, byte for byte, the formatted_context and explanation it
got before sections existed: the golden output was generated from the code before them."""

from __future__ import annotations

import json

import pytest
from tests.context.classic_world import BUDGETS, GOLDEN, as_json, assemble_classic

from cairn.context import TokenCounter


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
