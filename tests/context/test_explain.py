"""The explanation is complete, JSON-ready, and timings are data."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from tests.context.helpers import graph, record, render_plain, rid

from cairn.context import (
    DEFAULT_COSTS,
    Budget,
    BudgetSource,
    Dropped,
    DropReason,
    EdgeType,
    ItemBlocks,
    Seed,
    Selection,
    Timer,
    TokenCounter,
    assemble_text,
    build_explain,
    fixed_overhead,
    select_within_budget,
)

SEEDS = [
    Seed(rid(1), "trigger", 1.0, "event e-1"),
    Seed(rid(2), "always", 1.0, "schema tool.code.v1"),
]


def explained(counter: TokenCounter) -> dict[str, Any]:
    """Trigger 1 with neighbours 3 (too big) and 4, tool 2 always; 9 blacklisted upstream."""
    records = [
        record(1, schema_name="user.message.v1", tags=("session:s",)),
        record(2, schema_name="tool.code.v1", title="Tool"),
        record(3, context={"text": "x " * 400}),
        record(4),
    ]
    g = graph(records, [(1, 3, EdgeType.causal, 1.0), (1, 4, EdgeType.tag, 1.0)])
    blocks = ItemBlocks(render_plain, counter)
    budget = Budget(120, BudgetSource.agent)
    selection = select_within_budget(
        SEEDS,
        g,
        blocks.cost_of(g.records),
        budget.tokens,
        max_nodes=10,
        fixed_overhead=fixed_overhead(counter),
    )
    rendered = assemble_text(selection, g.records, render_plain, counter, 120, blocks=blocks)
    return build_explain(
        seeds=SEEDS,
        selection=selection,
        rendered=rendered,
        budget=budget,
        records=g.records,
        upstream_dropped=[Dropped(rid(9), DropReason.blacklisted)],
    )


def test_the_explanation_is_json_with_budget_and_every_seed(counter: TokenCounter) -> None:
    explain = explained(counter)
    assert json.loads(json.dumps(explain)) == explain
    assert explain["budget"] == {"tokens": 120, "source": "agent"}
    assert 0 < explain["token_count"] <= 120
    assert [(s["source"], s["detail"]) for s in explain["seeds"]] == [
        ("trigger", "event e-1"),
        ("always", "schema tool.code.v1"),
    ]


def test_every_selected_record_has_section_source_cost_and_path(counter: TokenCounter) -> None:
    selected = {s["record_id"]: s for s in explained(counter)["selected"]}
    assert set(selected) == {str(rid(n)) for n in (1, 2, 4)}
    four = selected[str(rid(4))]
    assert (four["section"], four["source"], four["via"], four["hops"], four["path_cost"]) == (
        "additional",
        "trigger",
        str(rid(1)),
        1,
        DEFAULT_COSTS.tag,
    )
    assert four["tokens"] > 0
    assert (selected[str(rid(2))]["section"], selected[str(rid(2))]["title"]) == ("tools", "Tool")


def test_every_dropped_candidate_has_its_reason_and_stage(counter: TokenCounter) -> None:
    dropped = explained(counter)["dropped"]
    assert [(d["record_id"], d["reason"], d["stage"]) for d in dropped] == [
        (str(rid(9)), "blacklisted", "seeds"),
        (str(rid(3)), "over_budget", "select"),
    ]
    assert dropped[1]["tokens"] > 120


def test_trimmed_records_are_listed_as_dropped_at_render(counter: TokenCounter) -> None:
    g = graph([record(1), record(2)], [(1, 2, EdgeType.causal, 1.0)])
    seeds = [Seed(rid(1), "trigger")]
    selection = select_within_budget(seeds, g, lambda _: 1, 10_000, max_nodes=5, fixed_overhead=0)
    only_trigger = Selection(selection.selected[:1], [], 10_000, 0, 1)
    room = assemble_text(only_trigger, g.records, render_plain, counter, 10_000).token_count
    rendered = assemble_text(selection, g.records, render_plain, counter, room)
    explain = build_explain(
        seeds=seeds,
        selection=selection,
        rendered=rendered,
        budget=Budget(room, BudgetSource.default),
        records=g.records,
    )
    assert [s["record_id"] for s in explain["selected"]] == [str(rid(1))]
    assert explain["dropped"] == [
        {
            "record_id": str(rid(2)),
            "reason": "over_budget",
            "stage": "render",
            "tokens": 1,
            "path_cost": 0.1,
        }
    ]


def fake_clock(*ticks: float) -> Iterator[float]:
    yield from ticks


def test_timer_records_each_phase_in_milliseconds() -> None:
    ticks = fake_clock(0.0, 0.002, 0.002, 0.0105, 0.020, 0.021)
    timer = Timer(clock=lambda: next(ticks))
    with timer.phase("graph"):
        pass
    with timer.phase("select"):
        pass
    with timer.phase("graph"):
        pass
    assert timer.as_dict() == {"graph": 3.0, "select": 8.5, "total": 11.5}
