"""``sections``, ``complexity_limits`` and ``layout`` of agent.def.v1: checked on write with
the path of the first problem, parsed leniently."""

from __future__ import annotations

import copy
import uuid
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

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
            "match": {
                "schemas": ["pattern.*"],
                "tags": ["kind:pattern"],
                "where": {"status": "completed", "level": [1, 2]},
            },
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
        SectionMatch(
            schemas=("pattern.*",), tags=("kind:pattern",),
            where=(("status", ("completed",)), ("level", (1, 2))),
        ),
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
        (
            with_section(0, match={"where": {"status": {"in": ["a"]}}}),
            "context.sections[0].match.where.status",
        ),
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


_json = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 2000) | st.floats(-1, 2) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)
_keys = [
    "name",
    "title",
    "match",
    "max_tokens",
    "share",
    "max_items",
    "order_by",
    "empty_text",
    "intro",
    "schemas",
    "sources",
    "easy",
    "normal",
    "patterns",
]
_shaped = st.recursive(
    _json,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(_keys) | st.text(max_size=4), inner, max_size=6)
    ),
    max_leaves=25,
)


_names = st.sampled_from(["a", "b", "c"])
_section = st.fixed_dictionaries(
    {"name": _names, "title": st.text(min_size=1, max_size=5)},
    optional={
        "match": st.fixed_dictionaries(
            {},
            optional={
                "schemas": st.lists(st.sampled_from(["x.*", "y.v1"])),
                "sources": st.lists(st.sampled_from(["trigger", "semantic"])),
            },
        ),
        "max_tokens": st.integers(1, 5000),
        "share": st.floats(0.01, 0.4),
        "max_items": st.integers(0, 20),
        "order_by": st.sampled_from(["relevance", "newest", "oldest"]),
        "empty_text": st.text(max_size=5),
        "intro": st.text(max_size=5),
    },
)
_options = st.fixed_dictionaries(
    {},
    optional={
        "sections": st.lists(_section, max_size=4) | _shaped,
        "complexity_limits": st.dictionaries(
            st.sampled_from(["easy", "normal", "complex"]),
            st.dictionaries(_names, st.integers(0, 9)),
        )
        | _shaped,
        "layout": st.fixed_dictionaries({"heading": st.text(max_size=5)}) | _shaped,
    },
)


@settings(max_examples=300, deadline=None)
@given(_options)
def test_any_sections_input_is_refused_with_a_422_or_parsed(options: dict[str, Any]) -> None:
    """Nothing a client sends makes the check or the parser fail otherwise (no 500): well
    shaped sections (duplicates, both budgets, shares over 1, undeclared limits among them)
    or any JSON at all."""
    context = {"agent_id": "fuzz", "context_trigger": {}, **options}
    try:
        check_definition("agent.def.v1", context)
    except InvalidInput as refused:
        assert refused.extra["path"].startswith("context")
        return
    agent = parse_agent(uuid.uuid4(), uuid.uuid4(), context)
    assert agent is not None
    declared = options.get("sections") or []
    assert (agent.sections is None) == (not declared)
    if agent.sections is not None:
        assert [s.name for s in agent.sections.specs] == [s["name"] for s in declared]
