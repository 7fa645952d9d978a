"""``sections``, ``complexity_limits`` and ``layout`` of agent.def.v1: checked on write with
the path of the first problem, parsed leniently."""

from __future__ import annotations

import copy
import uuid
from typing import Any

import pytest

from cairn.context.agents import parse_agent
from cairn.context.definitions import check_definition
from cairn.context.sections import DEFAULT_HEADING, SectionMatch, SectionSpec
from cairn.errors import InvalidInput

DEFINITION: dict[str, Any] = {
    "agent_id": "computed",
    "context_trigger": {"schema_name": "task.v1"},
    "sections": [
        {
            "name": "patterns",
            "title": "Patterns to Follow",
            "match": {"schemas": ["pattern.*"], "tags": ["kind:pattern"]},
            "share": 0.4,
            "max_items": 5,
            "order_by": "relevance",
            "empty_text": "No specific patterns identified for this task.",
            "intro": "Follow these:",
        },
        {
            "name": "warnings",
            "title": "Warnings",
            "match": {"sources": ["semantic"]},
            "max_tokens": 300,
            "order_by": "newest",
        },
        {"name": "rest", "title": "Everything else", "match": {"domains": ["code"]}},
    ],
    "complexity_limits": {"easy": {"patterns": 3, "warnings": 2}, "complex": {"patterns": 10}},
    "layout": {"heading": "## Context"},
}


def definition(**changes: Any) -> dict[str, Any]:
    changed = copy.deepcopy(DEFINITION)
    changed.update(changes)
    return changed


def with_section(n: int, **changes: Any) -> dict[str, Any]:
    changed = definition()
    changed["sections"][n].update(changes)
    return changed


def test_a_definition_with_sections_parses_in_declaration_order() -> None:
    check_definition("agent.def.v1", DEFINITION)
    agent = parse_agent(uuid.uuid4(), uuid.uuid4(), DEFINITION)
    assert agent is not None and agent.sections is not None
    patterns, warnings, rest = agent.sections.specs
    assert patterns == SectionSpec(
        "patterns", "Patterns to Follow",
        SectionMatch(schemas=("pattern.*",), tags=("kind:pattern",)),
        share=0.4, max_items=5, empty_text="No specific patterns identified for this task.",
        intro="Follow these:",
    )  # fmt: skip
    assert (warnings.max_tokens, warnings.order_by, warnings.match.sources) == (
        300, "newest", ("semantic",),
    )  # fmt: skip
    assert rest.match == SectionMatch(domains=("code",)) and rest.max_items is None
    assert agent.sections.heading == "## Context"
    assert agent.sections.max_items(patterns, "easy") == 3
    assert agent.sections.max_items(patterns, "normal") == 5
    assert agent.sections.max_items(rest, "complex") is None


def test_without_sections_an_agent_keeps_the_classic_layout() -> None:
    plain = {"agent_id": "plain", "context_trigger": {}}
    agent = parse_agent(uuid.uuid4(), uuid.uuid4(), plain)
    assert agent is not None and agent.sections is None
    layout_only = parse_agent(uuid.uuid4(), uuid.uuid4(), plain | {"layout": {"heading": "x"}})
    assert layout_only is not None and layout_only.sections is None


def test_parsing_is_lenient_about_data_written_before_the_checks() -> None:
    stored = definition(
        sections=[
            {"name": "a", "title": "A", "max_tokens": "many", "order_by": "random"},
            {"name": "a", "title": "Again"},
            {"title": "no name"},
            "not a section",
        ],
        complexity_limits={"easy": {"a": 2, "ghost": 1}, "hard": {"a": 1}},
        layout=None,
    )
    agent = parse_agent(uuid.uuid4(), uuid.uuid4(), stored)
    assert agent is not None and agent.sections is not None
    assert agent.sections.specs == (SectionSpec("a", "A"),)
    assert agent.sections.complexity_limits == {"easy": {"a": 2}}
    assert agent.sections.heading == DEFAULT_HEADING


@pytest.mark.parametrize(
    ("bad", "path"),
    [
        (with_section(1, name="patterns"), "context.sections[1].name"),
        (with_section(0, max_tokens=100), "context.sections[0]"),
        (
            with_section(1, match={"sources": ["semantic", "psychic"]}),
            "context.sections[1].match.sources[1]",
        ),
        (with_section(2, share=0.7), "context.sections"),
        (
            definition(complexity_limits={"normal": {"ghost": 2}}),
            "context.complexity_limits.normal.ghost",
        ),
        (definition(sections=[]), "context.sections"),
        (with_section(0, name="has space"), "context.sections[0].name"),
        (with_section(0, share=1.5), "context.sections[0].share"),
        (with_section(0, order_by="random"), "context.sections[0].order_by"),
        (with_section(0, match={"schema": ["typo"]}), "context.sections[0].match"),
        (with_section(0, max_items=-1), "context.sections[0].max_items"),
        (definition(complexity_limits={"extreme": {"patterns": 1}}), "context.complexity_limits"),
        (
            definition(complexity_limits={"easy": {"patterns": "3"}}),
            "context.complexity_limits.easy.patterns",
        ),
    ],
)
def test_a_bad_section_definition_is_refused_with_its_path(bad: dict[str, Any], path: str) -> None:
    with pytest.raises(InvalidInput) as refused:
        check_definition("agent.def.v1", bad)
    assert refused.value.extra == {"path": path}
    assert refused.value.detail.startswith(f"{path}: ")


def test_limits_need_declared_sections() -> None:
    lonely = {"agent_id": "a", "context_trigger": {}, "complexity_limits": {"easy": {"x": 1}}}
    with pytest.raises(InvalidInput, match="no section of that name is declared"):
        check_definition("agent.def.v1", lonely)
