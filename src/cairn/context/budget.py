"""The token budget of one assembly (ARCHITECTURE §7.5): a hard ceiling on the rendered
``formatted_context``."""

from __future__ import annotations

from typing import TypeGuard

from cairn.context.model import Budget, BudgetSource

MODEL_SHARE = 0.75  # of the model's context window; the rest is the prompt and the answer


def resolve_budget(
    agent_context_budget: int | None,
    llm_config_budget: int | None,
    model_context_length: int | None,
    default: int,
    *,
    model_share: float = MODEL_SHARE,
) -> Budget:
    """The agent's own ``context_budget``; else its llm_config record's; else
    ``model_share`` of the model's ``context_length``; else ``default``. A missing or
    non-positive value is not a setting and falls through to the next."""
    if _usable(agent_context_budget):
        return Budget(agent_context_budget, BudgetSource.agent)
    if _usable(llm_config_budget):
        return Budget(llm_config_budget, BudgetSource.llm_config)
    if _usable(model_context_length):
        share = int(model_context_length * model_share)
        if share > 0:
            return Budget(share, BudgetSource.model)
    if default <= 0:
        raise ValueError(f"the default context budget must be positive, got {default}")
    return Budget(default, BudgetSource.default)


def _usable(value: int | None) -> TypeGuard[int]:
    # bool is an int subclass; JSON `true` is not a budget.
    return isinstance(value, int) and not isinstance(value, bool) and value > 0
