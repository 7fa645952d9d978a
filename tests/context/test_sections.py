"""Section allocation: own allocations by priority, per-section item and token limits, what a
section leaves unused flowing on, the total within what is available."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import given, settings, strategies as st
from tests.context.helpers import record, rid

from cairn.context.sections import (
    Allocation,
    Candidate,
    SectionMatch,
    Sections,
    SectionSpec,
    allocate,
    allocations,
)


def spec(name: str, **overrides: object) -> SectionSpec:
    return SectionSpec(name=name, title=name.title(), **overrides)  # type: ignore[arg-type]


def offer(*pairs: tuple[str, int]) -> list[Candidate]:
    """Candidates numbered 1.. in priority order, as (section, tokens)."""
    return [Candidate(rid(n), section, tokens) for n, (section, tokens) in enumerate(pairs, 1)]


def taken(result: Allocation, name: str) -> list[int]:
    return [item.int for use in result.sections if use.name == name for item in use.items]


def test_fixed_then_shares_then_an_equal_split_of_the_rest() -> None:
    specs = [spec("a", max_tokens=100), spec("b", share=0.25), spec("c"), spec("d")]
    assert allocations(specs, 1000) == [100, 250, 325, 325]


def test_allocations_never_exceed_what_is_available_earlier_sections_first() -> None:
    specs = [spec("a", max_tokens=700), spec("b", share=0.5), spec("c")]
    assert allocations(specs, 1000) == [700, 300, 0]
    assert allocations(specs, 0) == [0, 0, 0]
    assert allocations(specs, -50) == [0, 0, 0]  # a budget below the layout's own text
    assert allocations([spec("a"), spec("b"), spec("c")], 10) == [4, 3, 3]


def test_a_section_takes_its_candidates_by_priority_skipping_what_does_not_fit() -> None:
    sections = Sections((spec("a", max_tokens=100), spec("b", max_tokens=100)))
    result = allocate(offer(("a", 60), ("a", 50), ("a", 40), ("b", 10)), sections, 200)
    assert taken(result, "a") == [1, 3]  # 2 did not fit after 1; 3 still did
    assert taken(result, "b") == [4]
    assert [r.int for r in result.rejected] == [2]


def test_what_a_section_leaves_unused_flows_to_the_next() -> None:
    sections = Sections((spec("a", share=0.5), spec("b", share=0.5)))
    result = allocate(offer(("a", 100), ("b", 400), ("b", 400), ("b", 400)), sections, 1000)
    assert taken(result, "b") == [2, 3]  # 800 > b's own 500: a's unused 400 flowed on
    assert [use.allocated for use in result.sections] == [500, 500]
    assert [use.used for use in result.sections] == [100, 800]


def test_what_no_section_used_goes_back_to_earlier_sections() -> None:
    sections = Sections((spec("a", share=0.5), spec("b", share=0.5)))
    result = allocate(offer(("a", 600)), sections, 1000)
    assert taken(result, "a") == [1]  # over a's own 500, within what b left unused


def test_max_tokens_is_also_a_ceiling_nothing_flows_beyond() -> None:
    sections = Sections((spec("a", max_tokens=100), spec("b")))
    result = allocate(offer(("a", 60), ("a", 60)), sections, 1000)
    assert taken(result, "a") == [1] and [r.int for r in result.rejected] == [2]


def test_max_items_and_the_tiers_limits() -> None:
    limits = {"easy": {"a": 1}, "complex": {"a": 3}}
    sections = Sections((spec("a", max_items=2), spec("b")), complexity_limits=limits)
    candidates = offer(("a", 1), ("a", 1), ("a", 1), ("a", 1))
    by_tier = {tier: taken(allocate(candidates, sections, 100, tier), "a") for tier in limits}
    assert by_tier == {"easy": [1], "complex": [1, 2, 3]}
    assert taken(allocate(candidates, sections, 100), "a") == [1, 2]  # normal: max_items
    assert allocate(candidates, sections, 100, "easy").sections[0].max_items == 1


def test_matching_schemas_prefixes_tags_domains_and_sources() -> None:
    match = SectionMatch(schemas=("gotcha.v1", "pattern.*"), tags=("kind:tip", "x"))
    assert match.matches(record(1, schema_name="pattern.code.v1", tags=("x",)), "semantic")
    assert match.matches(record(1, schema_name="gotcha.v1", tags=("kind:tip",)), "always")
    assert not match.matches(record(1, schema_name="gotcha.v2", tags=("x",)), "always")
    assert not match.matches(record(1, schema_name="pattern.v1", tags=("y",)), "always")
    by_source = SectionMatch(sources=("trigger",), domains=("code",))
    assert by_source.matches(record(1, domains=("code", "ops")), "trigger")
    assert not by_source.matches(record(1, domains=("code",)), "session")
    assert not by_source.matches(record(1), "trigger")
    assert SectionMatch().matches(record(1, schema_name=None), "session")


def test_matching_context_fields() -> None:
    completed = SectionMatch(where=(("status", ("completed",)), ("owner.team", ("a", "b"))))
    done = {"status": "completed", "owner": {"team": "b"}}
    assert completed.matches(record(1, context=done), "semantic")
    assert not completed.matches(record(1, context=done | {"status": "in_progress"}), "semantic")
    assert not completed.matches(record(1, context={"status": "completed"}), "semantic")
    flag = SectionMatch(where=(("blocking", (True,)),))
    assert flag.matches(record(1, context={"blocking": True}), "semantic")
    assert not flag.matches(record(1, context={"blocking": 1}), "semantic")


def test_the_first_matching_section_wins() -> None:
    sections = Sections(
        (spec("a", match=SectionMatch(tags=("t",))), spec("b"), spec("c", match=SectionMatch()))
    )
    assert sections.section_for(record(1, tags=("t",)), "semantic") == sections.specs[0]
    assert sections.section_for(record(2), "semantic") == sections.specs[1]


# Property tests: random sections, candidates and budgets.

_section = st.tuples(
    st.sampled_from(["max_tokens", "share", "rest"]),
    st.integers(1, 400),
    st.floats(0.01, 0.6),
    st.one_of(st.none(), st.integers(0, 6)),
)


@st.composite
def worlds(draw: st.DrawFn) -> tuple[Sections, list[Candidate], int, str]:
    raw = draw(st.lists(_section, min_size=1, max_size=5))
    total_share = sum(share for kind, _, share, _ in raw if kind == "share") or 1.0
    specs = []
    for n, (kind, max_tokens, share, max_items) in enumerate(raw):
        extra: dict[str, object] = {"max_items": max_items}
        if kind == "max_tokens":
            extra["max_tokens"] = max_tokens
        elif kind == "share":
            extra["share"] = share / max(1.0, total_share)
        specs.append(spec(f"s{n}", **extra))
    tier = draw(st.sampled_from(["easy", "normal", "complex"]))
    limits = draw(
        st.dictionaries(
            st.sampled_from(["easy", "normal", "complex"]),
            st.dictionaries(st.sampled_from([s.name for s in specs]), st.integers(0, 4)),
        )
    )
    sections = Sections(tuple(specs), complexity_limits=limits)
    names = st.sampled_from([s.name for s in specs])
    pairs = draw(st.lists(st.tuples(names, st.integers(0, 250)), max_size=30))
    return sections, offer(*pairs), draw(st.integers(-100, 1500)), tier


def _by_id(candidates: Sequence[Candidate]) -> dict[int, Candidate]:
    return {c.record_id.int: c for c in candidates}


@settings(max_examples=200, deadline=None)
@given(worlds())
def test_every_candidate_is_taken_or_rejected_never_both(
    world: tuple[Sections, list[Candidate], int, str],
) -> None:
    sections, candidates, available, tier = world
    result = allocate(candidates, sections, available, tier)
    taken_ids = [item for use in result.sections for item in use.items]
    assert len(taken_ids) == len(set(taken_ids))
    assert set(taken_ids).isdisjoint(result.rejected)
    assert sorted(r.int for r in [*taken_ids, *result.rejected]) == sorted(_by_id(candidates))


@settings(max_examples=200, deadline=None)
@given(worlds())
def test_limits_hold_and_the_total_stays_within_what_is_available(
    world: tuple[Sections, list[Candidate], int, str],
) -> None:
    sections, candidates, available, tier = world
    result = allocate(candidates, sections, available, tier)
    by_id = _by_id(candidates)
    assert sum(result_use.used for result_use in result.sections) <= max(0, available)
    assert sum(result_use.allocated for result_use in result.sections) <= max(0, available)
    assert all(result_use.allocated >= 0 for result_use in result.sections)
    order = [c.record_id for c in candidates]
    for use, section in zip(result.sections, sections.specs, strict=True):
        limit = sections.max_items(section, tier)
        assert use.max_items == limit
        assert limit is None or len(use.items) <= limit
        assert use.used == sum(by_id[item.int].tokens for item in use.items)
        assert section.max_tokens is None or use.used <= section.max_tokens
        assert all(by_id[item.int].section == section.name for item in use.items)
        assert list(use.items) == sorted(use.items, key=order.index)  # priority order


@settings(max_examples=200, deadline=None)
@given(worlds())
def test_unused_budget_flows_no_rejected_candidate_would_have_fit(
    world: tuple[Sections, list[Candidate], int, str],
) -> None:
    """A candidate left out had its section full, or was larger than both the section's
    own allocation left and everything no section used; and never beyond ``max_tokens``."""
    sections, candidates, available, tier = world
    result = allocate(candidates, sections, available, tier)
    unused = max(0, available) - sum(use.used for use in result.sections)
    uses = {use.name: use for use in result.sections}
    specs = {s.name: s for s in sections.specs}
    for item in result.rejected:
        candidate = _by_id(candidates)[item.int]
        use, section = uses[candidate.section], specs[candidate.section]
        full = use.max_items is not None and len(use.items) >= use.max_items
        ceiling = section.max_tokens if section.max_tokens is not None else float("inf")
        assert full or use.used + candidate.tokens > use.allocated  # its own allocation
        assert full or candidate.tokens > unused or use.used + candidate.tokens > ceiling


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(0, 300), min_size=1, max_size=12),
    st.integers(0, 2000),
    st.integers(1, 4),
)
def test_an_empty_section_passes_its_whole_allocation_to_the_later_ones(
    sizes: list[int], available: int, empty_sections: int
) -> None:
    """The last section takes exactly what it would with the whole budget to itself."""
    specs = [spec(f"e{n}") for n in range(empty_sections)] + [spec("last")]
    spread = allocate(offer(*(("last", t) for t in sizes)), Sections(tuple(specs)), available)
    alone = allocate(offer(*(("last", t) for t in sizes)), Sections((spec("last"),)), available)
    assert taken(spread, "last") == taken(alone, "last")
