"""The Markdown debug view of a stored assembly, from sample ``explain`` dicts."""

from __future__ import annotations

from typing import Any

from cairn.context.debug import render_debug

PATTERN, GOTCHA, HANDOFF, DROPPED = "p-1", "g-1", "h-1", "x-1"


def _selected(record_id: str, schema: str, title: str, section: str) -> dict[str, Any]:
    return {"record_id": record_id, "schema_name": schema, "title": title, "section": section,
            "source": "semantic", "seed_score": 0.8, "path_cost": 0.2, "tokens": 20,
            "via": None, "hops": 0}  # fmt: skip


def _dropped(record_id: str, reason: str, stage: str) -> dict[str, Any]:
    return {"record_id": record_id, "reason": reason, "stage": stage, "tokens": 9,
            "path_cost": None}  # fmt: skip


def _context(**explain: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "budget": {"tokens": 2000, "source": "agent"},
        "token_count": 118,
        "seeds": [
            {"record_id": "t-1", "source": "trigger", "score": 1.0, "detail": None},
            {"record_id": PATTERN, "source": "semantic", "score": 0.8, "detail": None},
            {"record_id": GOTCHA, "source": "semantic", "score": 0.7, "detail": None},
        ],
        "selected": [
            _selected("t-1", "task.v1", "Refresh tokens", "trigger"),
            _selected(PATTERN, "pattern.v1", "Repository per feature", "patterns"),
            _selected(GOTCHA, "gotcha.v1", "RLS", "warnings"),
            _selected(HANDOFF, "task.handoff.v1", "Login | endpoint", "prior_work"),
        ],
        "dropped": [
            _dropped(DROPPED, "below_threshold", "seeds"),
            _dropped("x-2", "over_budget", "select"),
            _dropped("x-3", "over_budget", "select"),
            _dropped("x-4", "sections_full", "select"),
        ],
    }
    return {
        "consumer_id": "computed-context",
        "trigger_id": "t-1",
        "assembled_at": "2026-11-26T07:00:00+00:00",
        "token_budget": 2000,
        "token_count": 118,
        "explain": base | explain,
    }


SIGNALS = {
    "keywords": ["refresh", "token"],
    "files": ["src/cairn/auth/tokens.py"],
    "modules": ["cairn.auth"],
    "domain": {"name": "auth", "confidence": 0.4213, "scores": {}, "evidence": {}},
    "complexity": {"tier": "easy", "evidence": ["tag complexity:easy"]},
    "time_sensitive": {"value": False, "evidence": []},
}
SECTIONS = [
    {"name": "patterns", "title": "Patterns to Follow", "allocated": 400, "used": 31,
     "items": 1, "max_items": 3, "empty": False},
    {"name": "decisions", "title": "Relevant Decisions", "allocated": 200, "used": 0,
     "items": 0, "max_items": None, "empty": True},
]  # fmt: skip


def test_the_debug_view_renders_seed_003s_block() -> None:
    text = render_debug(_context(signals=SIGNALS, sections=SECTIONS))
    assert text == (
        "## Context Debug\n\n"
        "- Agent: `computed-context`\n"
        "- Trigger: `t-1`\n"
        "- Assembled at: 2026-11-26T07:00:00+00:00\n"
        "- Tokens: 118 of 2000\n\n"
        "### Signals Extracted\n\n"
        "- Keywords: refresh, token\n"
        "- Domains: auth (confidence 0.42)\n"
        "- Files Mentioned: src/cairn/auth/tokens.py\n"
        "- Modules: cairn.auth\n"
        "- Complexity: easy (tag complexity:easy)\n"
        "- Time sensitive: no\n\n"
        "### Knowledge Graph Query\n\n"
        "- Nodes matched: 8\n"
        "- Patterns found: 1\n"
        "- Gotchas found: 1\n"
        "- Decisions found: 0\n"
        "- Code references found: 0\n"
        "- Seeds by source: semantic 2, trigger 1\n"
        "- Selected by schema: gotcha.v1 1, pattern.v1 1, task.handoff.v1 1, task.v1 1\n\n"
        "### Dependencies Processed\n\n"
        "- Handoffs included: 1\n"
        "- Task IDs: Login | endpoint (`h-1`)\n\n"
        "### Filtering\n\n"
        "- Selected: 4\n"
        "- Dropped: 4\n"
        "  - at seeds: below_threshold 1\n"
        "  - at select: over_budget 2, sections_full 1\n\n"
        "### Sections\n\n"
        "| Section | Allocated | Used | Items | Max items | Empty |\n"
        "|---------|-----------|------|-------|-----------|-------|\n"
        "| Patterns to Follow | 400 | 31 | 1 | 3 | no |\n"
        "| Relevant Decisions | 200 | 0 | 0 | - | yes |\n"
    )


def test_an_older_explain_without_signals_or_sections_says_none() -> None:
    text = render_debug(_context())
    assert "### Signals Extracted\n\nnone (this assembly's explain records no signals)" in text
    assert "### Sections\n\nnone (this assembly used no sections)" in text
    assert "- Patterns found: 1" in text


def test_partial_signals_and_no_handoffs_read_as_none() -> None:
    context = _context(signals={"keywords": [], "domain": {"name": None}})
    context["explain"]["selected"] = []
    text = render_debug(context)
    for line in ("- Keywords: none", "- Domains: none", "- Files Mentioned: none",
                 "- Complexity: none", "- Time sensitive: none", "- Task IDs: none",
                 "- Handoffs included: 0"):  # fmt: skip
        assert line + "\n" in text


def test_values_of_the_wrong_shape_or_hostile_text_never_break_the_markdown() -> None:
    hostile = _selected(HANDOFF, "task.handoff.v1", "evil` title\n### Injected", "prior_work")
    context: dict[str, Any] = {
        "consumer_id": None,
        "explain": {
            "signals": {"keywords": "not a list", "domain": ["auth"], "complexity": 3},
            "seeds": {"not": "a list"},
            "selected": [hostile, "not a dict", 7],
            "dropped": None,
            "sections": [{"title": "a | b", "used": None}, "junk"],
        },
    }
    text = render_debug(context)
    assert "- Agent: `none`" in text and "- Keywords: none" in text
    assert "- Task IDs: evil' title ### Injected (`h-1`)" in text
    assert "\n### Injected" not in text
    assert "| a \\| b | - | - | - | - | none |" in text
    assert render_debug({}).startswith("## Context Debug\n")
