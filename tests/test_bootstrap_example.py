"""Seed 003's computed-context example in ``bootstrap/examples/``: opt-in, and each schema's
hints render a record as exactly one line or block of the seed's "Context (Computed)"."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from cairn import bootstrap as bs
from cairn.bootstrap import load_records, scan
from cairn.context.definitions import check_definition
from cairn.transforms import Transforms

EXAMPLE = bs.default_bootstrap_dir() / "examples" / "computed-context"
RECORDS = load_records(EXAMPLE)
DEFINITIONS = {
    r.body["context"]["defines_schema"]: r.body for r in RECORDS if r.schema_name == "schema.def.v1"
}
AGENT = next(r.body["context"] for r in RECORDS if r.schema_name == "agent.def.v1")
TRANSFORMS = Transforms()


def _rendered(schema: str, context: dict[str, Any], title: str = "A task") -> str:
    # A fresh id each time: instance hints are compiled once per record id and version.
    hints = DEFINITIONS[schema]["llm_hints"]
    row = {"id": uuid.uuid4(), "version": 1, "title": title, "tags": [], "schema_name": schema,
           "created_at": None, "context": context, "llm_hints": hints}  # fmt: skip
    view = TRANSFORMS.render(row, None)
    assert view.error is None and view.replaced, view.error
    assert Draft202012Validator(DEFINITIONS[schema]["context"]["json_schema"]).is_valid(context)
    return str(view.context["text"])


def test_the_default_bootstrap_leaves_examples_out_and_naming_one_loads_it(tmp_path: Path) -> None:
    records, skipped = scan([bs.default_bootstrap_dir()])
    assert skipped == []
    assert not [r for r in records if "examples" in Path(r.source).parts]
    assert not [r for r in records if r.body["context"].get("agent_id") == "computed-context"]
    example, skipped = scan([EXAMPLE])
    assert skipped == [] and len(example) == len(DEFINITIONS) + 1
    # Only a top-level ``examples`` folder is opt-in; one deeper is ordinary content.
    (tmp_path / "notes" / "examples").mkdir(parents=True)
    note = {"schema_name": "note.v1", "title": "n", "context": {}}
    (tmp_path / "notes" / "examples" / "n.json").write_text(json.dumps(note))
    (tmp_path / "examples").mkdir()
    (tmp_path / "examples" / "m.json").write_text(json.dumps(note | {"title": "m"}))
    assert [r.title for r in scan([tmp_path])[0]] == ["n"]


def test_the_example_defines_the_seeds_schemas() -> None:
    assert set(DEFINITIONS) == {
        "pattern.v1", "gotcha.v1", "decision.v1", "task.handoff.v1", "task.v1",
        "code.reference.v1", "question.v1",
    }  # fmt: skip
    for body in DEFINITIONS.values():
        Draft202012Validator.check_schema(body["context"]["json_schema"])
        assert f"defines:{body['context']['defines_schema']}" in body["tags"]


def test_a_pattern_is_one_line_with_its_location_when_it_has_one() -> None:
    pattern = {"pattern": "One repository per feature", "location": "src/cairn/edges/repository.py"}
    assert _rendered("pattern.v1", pattern) == (
        "- **One repository per feature** (see: src/cairn/edges/repository.py)"
    )
    assert _rendered("pattern.v1", {"pattern": "Thin endpoints"}) == "- **Thin endpoints**"


def test_a_gotcha_shows_its_severity_medium_by_default() -> None:
    gotcha = {"issue": "RLS needs app.owner_id set", "severity": "critical"}
    assert _rendered("gotcha.v1", gotcha) == "- ⚠️ **critical**: RLS needs app.owner_id set"
    assert _rendered("gotcha.v1", {"issue": "Slow"}) == "- ⚠️ **medium**: Slow"
    schema = Draft202012Validator(DEFINITIONS["gotcha.v1"]["context"]["json_schema"])
    assert not schema.is_valid({"issue": "x", "severity": "urgent"})


def test_a_decision_is_one_line() -> None:
    decision = {"decision": "Edges are upserted, never rewritten", "rationale": "idempotent"}
    assert _rendered("decision.v1", decision) == "- Edges are upserted, never rewritten"


def test_a_handoff_is_a_block_with_its_files_and_blocking_questions() -> None:
    handoff = {
        "task": "Login endpoint", "summary": "POST /auth/token issues JWTs.", "status": "completed",
        "files_created": [{"file": "src/auth.py", "reason": "token minting"}, {"file": "t.py"}],
        "blocking_questions": [
            {"question": "Refresh tokens?", "context": "none yet", "recommendation": "later"},
        ],
    }  # fmt: skip
    assert _rendered("task.handoff.v1", handoff) == (
        "#### Login endpoint\nPOST /auth/token issues JWTs.\n\n**Files Created:**\n"
        "- `src/auth.py`: token minting\n- `t.py`\n\n**Open Questions (Blocking):**\n"
        "- **Refresh tokens?**\n  - Context: none yet\n  - Recommendation: later"
    )
    bare = {"task": "Spike", "summary": "Nothing kept.", "status": "completed"}
    assert _rendered("task.handoff.v1", bare) == "#### Spike\nNothing kept."
    schema = Draft202012Validator(DEFINITIONS["task.handoff.v1"]["context"]["json_schema"])
    assert not schema.is_valid({"task": "t", "summary": "s"})  # a handoff says its status


def test_a_code_reference_is_a_table_row_and_a_question_a_block() -> None:
    reference = {"file": "src/cairn/context/graph.py", "component": "walk | CTE", "notes": "hops"}
    assert _rendered("code.reference.v1", reference) == (
        "| `src/cairn/context/graph.py` | walk \\| CTE | hops |"
    )
    question = {"question": "Which tier?", "context": "no tag", "recommendation": "normal"}
    assert _rendered("question.v1", question) == (
        "- **Which tier?**\n  - Context: no tag\n  - Recommendation: normal"
    )


def test_a_task_shows_its_objective_and_criteria() -> None:
    task = {"objective": "Add logout", "acceptance_criteria": ["token revoked"]}
    assert _rendered("task.v1", task, title="Logout") == (
        "## Task: Logout\nAdd logout\n- [ ] token revoked"
    )


def test_the_agent_has_the_seeds_sections_limits_and_empty_sentences() -> None:
    check_definition("agent.def.v1", AGENT)
    assert AGENT["layout"] == {"heading": "## Context (Computed)"}
    sections = {s["name"]: s for s in AGENT["sections"]}
    assert [s["title"] for s in AGENT["sections"]] == [
        "Patterns to Follow", "Warnings", "Relevant Decisions", "Prior Work",
        "Code References", "Open Questions (Blocking)",
    ]  # fmt: skip
    assert {name: s.get("empty_text") for name, s in sections.items()} == {
        "patterns": "No specific patterns identified for this task.",
        "warnings": "No known gotchas for this task area.",
        "decisions": None,
        "prior_work": None,
        "code_references": "Explore the codebase as needed. No specific references pre-identified.",
        "open_questions": None,
    }
    table = {"easy": (3, 2, 5, 2), "normal": (5, 3, 10, 4), "complex": (10, 5, 20, 8)}
    columns = ("patterns", "warnings", "code_references", "prior_work")
    for tier, limits in table.items():
        assert AGENT["complexity_limits"][tier] == dict(zip(columns, limits, strict=True))
        assert set(AGENT["complexity_limits"][tier]) <= set(sections)
    assert sum(s["share"] for s in AGENT["sections"]) == pytest.approx(1.0)
    for section in AGENT["sections"]:
        assert set(section["match"]["schemas"]) <= set(DEFINITIONS)
    assert sections["prior_work"]["match"]["where"] == {"status": "completed"}
