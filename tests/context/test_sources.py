"""The seed-source registry: one list whose order is the tie-break rank."""

from __future__ import annotations

import inspect

import pytest
from tests.context.helpers import rid

from cairn.context import Seed, sources
from cairn.context.sources import always, paths, semantic, session, signals, trigger


def test_every_source_is_listed_once_under_its_own_name() -> None:
    names = [source.name for source in sources.SOURCES]
    assert len(names) == len(set(names))
    assert names[0] == "trigger"  # the trigger wins every tie
    assert tuple(names) == sources.NAMES
    assert {m.SOURCE.name for m in (always, paths, semantic, session, signals, trigger)} == set(
        names
    )


def test_the_rank_is_the_position_in_the_registry() -> None:
    for position, source in enumerate(sources.SOURCES):
        assert sources.rank_of(source.name) == position


def test_every_source_keeps_the_contract() -> None:
    for source in sources.SOURCES:
        assert isinstance(source.name, str) and source.name
        assert source.cost.base >= 0 and source.cost.span >= 0
        assert inspect.iscoroutinefunction(source.seeds)


def test_agent_schema_names_every_configurable_source() -> None:
    import json

    from cairn.context.definitions import SCHEMAS_DIR

    schema = json.loads((SCHEMAS_DIR / "agent.def.v1.json").read_text())
    configurable = set(schema["properties"]["context_sources"]["properties"])
    assert configurable == set(sources.NAMES) - {"trigger"}


def test_seed_cost_is_the_source_base_plus_span_times_the_missing_score() -> None:
    assert sources.seed_cost(Seed(rid(1), "trigger", 1.0)) == 0.0
    for source in sources.SOURCES:
        cost = source.cost
        assert sources.seed_cost(Seed(rid(2), source.name, 0.25)) == pytest.approx(
            cost.base + cost.span * 0.75
        )


def test_an_unknown_source_is_named_in_the_error() -> None:
    with pytest.raises(ValueError, match="unknown seed source 'oracle'"):
        sources.seed_cost(Seed(rid(1), "oracle", 1.0))
