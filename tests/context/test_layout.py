"""The section layout: headings, bodies and empty texts in declaration order, order within a
section, headings content cannot forge, admission and allocation through the pathfinder,
the exact count within the budget and the per-section explanation."""

from __future__ import annotations

import gc
import random
import re
import weakref
from datetime import timedelta
from uuid import UUID

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from tests.context.helpers import EPOCH, graph, record, rid

from cairn.context import (
    Budget,
    BudgetSource,
    DropReason,
    EdgeType,
    Graph,
    ItemBlocks,
    Record,
    Seed,
    Selected,
    Selection,
    TokenCounter,
    build_explain,
    select_within_budget,
)
from cairn.context.layout import SectionLayout, escape_headings, layout_for
from cairn.context.sections import SectionMatch, Sections, SectionSpec

PATTERNS = SectionSpec(
    "patterns", "Patterns to Follow", SectionMatch(schemas=("pattern.*",)),
    empty_text="No specific patterns identified for this task.",
)  # fmt: skip
WARNINGS = SectionSpec(
    "warnings", "Warnings", SectionMatch(schemas=("gotcha.v1",)),
    empty_text="No known gotchas for this task area.",
)  # fmt: skip
DECISIONS = SectionSpec("decisions", "Relevant Decisions", SectionMatch(tags=("decision",)))
COMPUTED = Sections((PATTERNS, WARNINGS, DECISIONS))


def body_of(item: Record) -> str:
    """A stand-in for the hints: the record's ``line`` field."""
    return str(item.context.get("line", ""))


def layout(
    records: dict[UUID, Record], counter: TokenCounter, sections: Sections = COMPUTED, **kw: str
) -> SectionLayout:
    return SectionLayout(sections, records, ItemBlocks(body_of, counter), counter, **kw)


def chosen(*numbers: int, source: str = "semantic") -> Selection:
    selected = [Selected(rid(n), source, None, n / 100, 0, None, 0) for n in numbers]
    return Selection(selected, [], 10**6, 0, 0)


def pattern(n: int, line: str, **overrides: object) -> Record:
    return record(n, schema_name="pattern.code.v1", context={"line": line}, **overrides)


def test_headings_bodies_and_empty_texts_in_declaration_order(counter: TokenCounter) -> None:
    records = {
        r.id: r
        for r in (
            pattern(1, "- **Use the repository** (see: src/repo.py)"),
            record(2, tags=("decision",), context={"line": "- Postgres over Mongo"}),
            pattern(3, "- **Thin endpoints**"),
        )
    }
    rendered = layout(records, counter).render(chosen(2, 3, 1), 10_000)
    assert rendered.text == (
        "## Context (Computed)\n"
        "\n"
        "### Patterns to Follow\n"
        "- **Thin endpoints**\n"
        "- **Use the repository** (see: src/repo.py)\n"
        "\n"
        "### Warnings\n"
        "No known gotchas for this task area.\n"
        "\n"
        "### Relevant Decisions\n"
        "- Postgres over Mongo\n"
    )
    assert rendered.token_count == counter.count(rendered.text)
    assert [(i.section, i.record_id.int) for i in rendered.items] == [
        ("patterns", 3),
        ("patterns", 1),
        ("decisions", 2),
    ]


def test_an_empty_section_without_empty_text_keeps_its_heading(counter: TokenCounter) -> None:
    rendered = layout({}, counter, Sections((DECISIONS,), heading="")).render(chosen(), 100)
    assert rendered.text == "### Relevant Decisions\n"


def test_an_intro_stands_above_items_and_only_then(counter: TokenCounter) -> None:
    header = "| Location | Component | Notes |\n|----------|-----------|-------|"
    refs = SectionSpec(
        "refs", "Code References", SectionMatch(schemas=("ref.v1",)), intro=header,
        empty_text="Explore the codebase as needed. No specific references pre-identified.",
    )  # fmt: skip
    records = {rid(1): record(1, schema_name="ref.v1", context={"line": "| `a.py` | A | n |"})}
    sectioned = layout(records, counter, Sections((refs,), heading=""))
    assert sectioned.render(chosen(1), 1000).text == (
        f"### Code References\n{header}\n| `a.py` | A | n |\n"
    )
    assert sectioned.render(chosen(), 1000).text == f"### Code References\n{refs.empty_text}\n"


def test_order_within_a_section(counter: TokenCounter) -> None:
    at = {n: EPOCH + timedelta(minutes=m) for n, m in ((1, 5), (2, 1), (3, 9))}
    records = {rid(n): pattern(n, f"p{n}", created_at=at[n]) for n in at}

    def order(order_by: str) -> list[int]:
        spec = SectionSpec("p", "P", PATTERNS.match, order_by=order_by)
        rendered = layout(records, counter, Sections((spec,))).render(chosen(2, 1, 3), 1000)
        return [item.record_id.int for item in rendered.items]

    assert order("relevance") == [2, 1, 3]
    assert order("newest") == [3, 1, 2]
    assert order("oldest") == [2, 1, 3]


SECTION_HEADING = re.compile(r"^ {0,3}#{1,3}(?:[ \t]|$)|^ {0,3}(?:=+|-+)[ \t]*$", re.MULTILINE)


def test_content_cannot_forge_a_section_heading(counter: TokenCounter) -> None:
    hostile = "## Context (Computed)\n### Warnings\n  # Boss\nText\n===\nMore\n---\n"
    hostile += "#### Task A\n#tag"
    records = {rid(1): pattern(1, hostile, title="### Title")}
    rendered = layout(records, counter).render(chosen(1), 10_000)
    headings = [m.group(0).strip() for m in SECTION_HEADING.finditer(rendered.text)]
    assert headings == ["##", "###", "###", "###"]  # the layout's own, nothing else
    assert "\\## Context (Computed)\n\\### Warnings\n  \\# Boss\nText\n\\===" in rendered.text
    assert "#### Task A\n#tag" in rendered.text  # below a section's level: left as it is


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet=" #=-\r\nab\t⟦⟧", max_size=80))
def test_no_body_forges_a_heading_or_a_delimiter(counter: TokenCounter, body: str) -> None:
    records = {rid(1): pattern(1, body), rid(2): record(2, title=body, context={})}
    sections = Sections((PATTERNS, SectionSpec("rest", "Rest")))
    rendered = layout(records, counter, sections).render(chosen(1, 2), 10_000)
    assert len(SECTION_HEADING.findall(rendered.text)) == 3
    assert "⟦" not in rendered.text and "⟧" not in rendered.text and "\r" not in rendered.text
    assert not SECTION_HEADING.search(escape_headings(body))


def test_the_lowest_priority_items_are_trimmed_first_the_trigger_last(
    counter: TokenCounter,
) -> None:
    records = {rid(n): pattern(n, f"- pattern number {n} " * 3) for n in range(1, 7)}
    sections = Sections((SectionSpec("all", "All"),))
    trigger = Selected(rid(1), "trigger", 1.0, 0.0, 0, None, 0)
    selection = Selection([trigger, *chosen(2, 3, 4, 5, 6).selected], [], 10**6, 0, 0)
    sectioned = layout(records, counter, sections)
    full = sectioned.render(selection, 10_000)
    cut = sectioned.render(selection, full.token_count - 1)
    assert cut.token_count <= full.token_count - 1 and cut.trimmed == [rid(6)]
    tiny = sectioned.render(selection, 30)
    assert tiny.token_count <= 30 and [i.record_id for i in tiny.items] == [rid(1)]
    nothing = sectioned.render(selection, 3)  # not even the headings fit
    assert (nothing.text, nothing.token_count, nothing.trimmed[-1]) == ("", 0, rid(1))


# Through the pathfinder: admission by match, allocation by section.


def world() -> tuple[list[Seed], Graph]:
    records = [
        record(1, schema_name="task.v1", context={"line": "the task"}),
        *(pattern(10 + n, f"- pattern {n} " + "word " * (5 * n)) for n in range(5)),
        *(record(20 + n, schema_name="gotcha.v1", context={"line": f"- ⚠️ gotcha {n}"})
          for n in range(3)),
        record(30, schema_name="chat.v1", context={"line": "unrelated chatter"}),
    ]  # fmt: skip
    edges = [(1, 10 + n, EdgeType.semantic, 0.9 - n / 10) for n in range(5)]
    edges += [(1, 20 + n, EdgeType.causal, 1.0) for n in range(3)] + [(1, 30, EdgeType.tag, 1)]
    return [Seed(rid(1), "trigger")], graph(records, edges)


def assemble(
    counter: TokenCounter, sections: Sections, budget: int, tier: str = "normal"
) -> tuple[Selection, SectionLayout, dict[str, object]]:
    seeds, g = world()
    sectioned = layout(g.records, counter, sections, tier=tier)
    selection = sectioned.allocate(
        select_within_budget(
            seeds, g, sectioned.cost_of, budget, max_nodes=50,
            fixed_overhead=sectioned.overhead, admit=sectioned.admit,
        )
    )  # fmt: skip
    rendered = sectioned.render(selection, budget)
    explain = build_explain(
        seeds=seeds, selection=selection, rendered=rendered,
        budget=Budget(budget, BudgetSource.agent), records=g.records,
    ) | sectioned.explain(rendered)  # fmt: skip
    assert rendered.token_count <= budget
    return selection, sectioned, explain


def reasons(selection: Selection) -> dict[int, DropReason]:
    return {d.record_id.int: d.reason for d in selection.dropped}


def test_records_matching_no_section_are_dropped_as_such(counter: TokenCounter) -> None:
    selection, _, _ = assemble(counter, COMPUTED, 10_000)
    assert reasons(selection) == {1: DropReason.no_section, 30: DropReason.no_section}
    assert not selection.trigger_over_budget  # the trigger is not wanted, not too big


def test_item_limits_by_tier_and_token_limits_drop_as_sections_full(
    counter: TokenCounter,
) -> None:
    patterns = SectionSpec("patterns", "P", PATTERNS.match, max_tokens=30, max_items=4)
    warnings = SectionSpec("warnings", "W", WARNINGS.match)
    limits = {"easy": {"warnings": 1}}
    sections = Sections((patterns, warnings), complexity_limits=limits)
    selection, _, explain = assemble(counter, sections, 10_000, tier="easy")
    dropped = reasons(selection)
    assert [n for n, r in dropped.items() if r is DropReason.sections_full] == [21, 20, 13, 14]
    report = {s["name"]: s for s in explain["sections"]}  # type: ignore[attr-defined]
    assert report["warnings"] == {
        "name": "warnings", "title": "W", "allocated": report["warnings"]["allocated"],
        "used": report["warnings"]["used"], "items": 1, "max_items": 1, "empty": False,
        "candidates": 3,
    }  # fmt: skip
    assert report["patterns"]["used"] == 30 == report["patterns"]["allocated"]
    # Patterns are cut by their 30 tokens (5 + 10 + 15), not by their 4 items.
    assert report["patterns"]["items"] == 3 and report["patterns"]["max_items"] == 4
    selected = {s["record_id"]: s["section"] for s in explain["selected"]}  # type: ignore[attr-defined]
    assert selected == {
        str(rid(22)): "warnings", **{str(rid(n)): "patterns" for n in (10, 11, 12)}
    }  # fmt: skip


def test_a_trigger_its_section_cannot_hold_is_over_budget(counter: TokenCounter) -> None:
    task = SectionSpec("task", "Task", SectionMatch(sources=("trigger",)), max_items=0)
    selection, _, explain = assemble(counter, Sections((task, PATTERNS)), 10_000)
    assert reasons(selection)[1] is DropReason.sections_full and selection.trigger_over_budget
    assert explain["trigger_over_budget"] is True


# Property: random sections over a random graph.

_names = ["a", "b", "c", "d"]


@st.composite
def section_sets(draw: st.DrawFn) -> Sections:
    specs = []
    for name in draw(st.lists(st.sampled_from(_names), min_size=1, max_size=4, unique=True)):
        schemas = draw(st.lists(st.sampled_from(["x.v1", "y.v1", "z.*", "w.v1"]), max_size=2))
        kind = draw(st.sampled_from(["max_tokens", "share", "rest"]))
        extra: dict[str, object] = {"max_items": draw(st.none() | st.integers(0, 5))}
        if kind == "max_tokens":
            extra["max_tokens"] = draw(st.integers(1, 300))
        elif kind == "share":
            extra["share"] = draw(st.floats(0.05, 1.0 / 4))
        specs.append(
            SectionSpec(name, name.upper(), SectionMatch(schemas=tuple(schemas)),
                        empty_text=draw(st.sampled_from(["", "Nothing here."])), **extra)  # type: ignore[arg-type]
        )  # fmt: skip
    return Sections(tuple(specs))


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sections=section_sets(), seed=st.integers(0, 10_000), budget=st.integers(0, 900))
def test_every_candidate_is_accounted_for_and_the_limits_hold(
    counter: TokenCounter, sections: Sections, seed: int, budget: int
) -> None:
    rng = random.Random(seed)
    schemas = ["x.v1", "y.v1", "z.code.v1", "w.v1", "other.v1"]
    records = [
        record(n, schema_name=rng.choice(schemas), context={"line": "word " * rng.randint(0, 60)})
        for n in range(1, 25)
    ]
    edges = [
        (rng.randint(1, 24), rng.randint(1, 24), rng.choice(list(EdgeType)), rng.random())
        for _ in range(40)
    ]
    g = graph(records, edges)
    seeds = [Seed(rid(1), "trigger")] + [
        Seed(rid(n), "semantic", rng.random()) for n in rng.sample(range(2, 25), 5)
    ]
    sectioned = layout(g.records, counter, sections)
    selection = sectioned.allocate(
        select_within_budget(
            seeds, g, sectioned.cost_of, budget, max_nodes=60,
            fixed_overhead=sectioned.overhead, admit=sectioned.admit,
        )
    )  # fmt: skip
    rendered = sectioned.render(selection, budget)
    assert rendered.token_count == counter.count(rendered.text) <= budget
    chosen_ids = [item.record_id for item in selection.selected]
    dropped_ids = [item.record_id for item in selection.dropped]
    assert set(chosen_ids).isdisjoint(dropped_ids)
    assert sorted(chosen_ids + dropped_ids) == sorted(g.records)  # each exactly once
    report = sectioned.explain(rendered)["sections"]
    for spec, entry in zip(sections.specs, report, strict=True):
        assert spec.max_items is None or entry["items"] <= spec.max_items
        assert spec.max_tokens is None or entry["used"] <= spec.max_tokens
        assert entry["empty"] == (entry["items"] == 0)
    assert sum(entry["used"] for entry in report) <= max(0, budget - sectioned.overhead)


@pytest.mark.parametrize("sections", [None, COMPUTED], ids=["classic", "sections"])
def test_a_used_layout_is_freed_without_the_cyclic_collector(
    counter: TokenCounter, sections: Sections | None
) -> None:
    """An assembly's layout, its admission and (through them) its blocks are freed when the
    assembly lets go of them: a reference cycle among them left ~400 objects an assembly to
    the collector, whose young collections then paused assemblies for up to ~40 ms."""
    records = {rid(n): record(n) for n in range(1, 4)}
    blocks = ItemBlocks(body_of, counter)
    gc.disable()
    try:
        made = layout_for(sections, records, blocks, counter, budget=1000, trigger_id=rid(1))
        assert made.admit is not None
        for n in range(1, 4):
            made.admit(rid(n), "semantic", made.cost_of(rid(n)))
        freed = weakref.ref(made)
        del made
        assert freed() is None
    finally:
        gc.enable()
