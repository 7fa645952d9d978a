"""Budget resolution order (ARCHITECTURE §7.5)."""

from __future__ import annotations

import pytest

from cairn.context import Budget, BudgetSource, resolve_budget


def test_the_agent_budget_wins() -> None:
    assert resolve_budget(3000, 5000, 128_000, 4000) == Budget(3000, BudgetSource.agent)


def test_then_the_llm_config_budget() -> None:
    assert resolve_budget(None, 5000, 128_000, 4000) == Budget(5000, BudgetSource.llm_config)


def test_then_three_quarters_of_the_model_context_length() -> None:
    assert resolve_budget(None, None, 128_000, 4000) == Budget(96_000, BudgetSource.model)
    assert resolve_budget(None, None, 8191, 4000) == Budget(6143, BudgetSource.model)  # floor


def test_then_the_default() -> None:
    assert resolve_budget(None, None, None, 4000) == Budget(4000, BudgetSource.default)


@pytest.mark.parametrize("unset", [None, 0, -5, True])
def test_non_positive_or_non_integer_values_fall_through(unset: int | None) -> None:
    assert resolve_budget(unset, unset, unset, 4000) == Budget(4000, BudgetSource.default)


def test_the_model_share_is_configurable() -> None:
    assert resolve_budget(None, None, 1000, 10, model_share=0.5) == Budget(500, BudgetSource.model)


def test_a_non_positive_default_is_a_configuration_error() -> None:
    with pytest.raises(ValueError, match="default"):
        resolve_budget(None, None, None, 0)
