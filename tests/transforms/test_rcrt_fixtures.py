"""RCRT's real bootstrap data: every template compiles, every record renders sensibly."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.fixtures_path import FIXTURES
from tests.transforms.helpers import FIXED_TIME

from cairn.transforms import SCHEMA_DEFINITION, Definition, Transforms, defined_schemas

RCRT = FIXTURES / "rcrt-bootstrap"
FILES = sorted(p for p in RCRT.rglob("*.json"))
TRANSFORMS = Transforms()


def _load(path: Path) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(path.read_text())
    return body | {"id": uuid.uuid4(), "version": 1, "created_at": FIXED_TIME}


RECORDS = [_load(path) for path in FILES]
DEFINITIONS = {
    name: Definition(record["id"], 1, record.get("llm_hints"))
    for record in RECORDS
    if record["schema_name"] == SCHEMA_DEFINITION
    for name in defined_schemas(record["tags"])
}


def _templates(value: Any) -> Iterator[str]:
    """Every string under a "template" key anywhere in a file (examples in guides too)."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "template" and isinstance(item, str) and "{{" in item:
                yield item
            yield from _templates(item)
    elif isinstance(value, list):
        for item in value:
            yield from _templates(item)


TEMPLATES = sorted({t for record in RECORDS for t in _templates(record)})


def test_the_fixture_folder_is_there() -> None:
    assert len(FILES) >= 60 and len(DEFINITIONS) >= 9 and len(TEMPLATES) >= 10


@pytest.mark.parametrize("template", TEMPLATES, ids=lambda t: t[:40])
def test_every_template_in_the_fixtures_compiles(template: str) -> None:
    TRANSFORMS.engine.compile(template)


@pytest.mark.parametrize("record", RECORDS, ids=lambda r: r["title"][:50])
def test_every_record_and_definition_is_accepted_on_write(record: dict[str, Any]) -> None:
    TRANSFORMS.check_record(record)


@pytest.mark.parametrize("record", RECORDS, ids=lambda r: r["title"][:50])
def test_every_record_renders_without_error_or_raw_handlebars(record: dict[str, Any]) -> None:
    view = TRANSFORMS.render(record, DEFINITIONS.get(record["schema_name"]))
    assert view.error is None
    rendered = json.dumps(view.context, ensure_ascii=False)
    if view.replaced:  # the text came out of templates and formats, not the data
        assert "{{" not in rendered and "{#" not in rendered
    assert len(rendered) <= len(json.dumps(record["context"], ensure_ascii=False)) + 2000


def _by_title(prefix: str) -> dict[str, Any]:
    return next(record for record in RECORDS if record["title"].startswith(prefix))


def test_handlebars_each_with_key_and_unless_last() -> None:
    view = TRANSFORMS.render(_by_title("Tool Validation Rules"), None)
    text = view.context["formatted"]
    assert text.startswith("# Tool Validation Rules - Quick Reference\n\n## Quick Validation")
    assert "### pure_logic_tools\nCalculator, echo, timer, random\nRequired: net=false, " in text
    assert "ffi=false\n### rcrt_tools" in text  # no ", " after the last permission


def test_length_and_index_segments() -> None:
    view = TRANSFORMS.render(_by_title("Agent Definition Template"), None)
    assert view.context == {
        "guide": "Agent Template: 5 best practices. Key: "
        "Always subscribe to tool.catalog.v1 for tool discovery"
    }


def test_extract_and_template_rules_together() -> None:
    view = TRANSFORMS.render(_by_title("LLM Hints Usage Guide"), None)
    assert view.context["example_summary"] == [
        "Basic Transform",
        "Field Selection",
        "Complex Transform",
    ]
    assert view.context["quick_reference"].startswith("LLM Hints Guide: 3 examples")


def test_schema_level_hints_apply_to_records_of_the_schema() -> None:
    blacklist = _by_title("Context Assembly Blacklist")
    view = TRANSFORMS.render(blacklist, DEFINITIONS["context.blacklist.v1"])
    assert view.source == "schema"
    assert view.context == {
        "summary": f"Context blacklist: {len(blacklist['context']['excluded_schemas'])} "
        "schemas excluded from context assembly"
    }


def test_tool_hints_drop_the_code() -> None:
    echo = _by_title("Echo Tool")
    view = TRANSFORMS.render(echo, DEFINITIONS["tool.code.v1"])
    assert view.source == "instance" and "code" in echo["context"]
    assert "code" not in view.context and "permissions" not in view.context
    assert view.context["name"] == "echo"


def test_a_definition_does_not_apply_its_hints_to_itself() -> None:
    definition = next(r for r in RECORDS if "defines:tool.response.v1" in r["tags"])
    view = TRANSFORMS.render(definition, None)
    assert view.source == "none" and view.context == definition["context"]
