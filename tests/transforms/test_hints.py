"""The hints model: what is a warning, what is an error reported on write."""

from __future__ import annotations

from typing import Any

import pytest
from tests.transforms.helpers import render, rule

from cairn.config import TransformSettings
from cairn.errors import InvalidInput
from cairn.transforms import Transforms

TRANSFORMS = Transforms(TransformSettings(max_rules=3))


def test_unknown_keys_are_warnings_and_the_rest_applies() -> None:
    hints = {"summary": "docs", "exclude": ["b"], "transform": {"x": rule("literal", 1, note="n")}}
    compiled = TRANSFORMS.check(hints)
    assert compiled.warnings == (
        "unknown key 'summary' ignored",
        "transform.x: unknown key 'note' ignored",
    )
    view = render({"a": 1, "b": 2}, hints)
    assert view.context == {"x": 1} and view.warnings == compiled.warnings


def test_an_unknown_mode_is_a_warning_and_replace_applies() -> None:
    compiled = TRANSFORMS.check({"mode": "transform", "transform": {"x": rule("literal", 1)}})
    assert compiled.mode == "replace"
    assert "mode 'transform'" in compiled.warnings[0]


def test_hints_with_only_documentation_are_valid_and_change_nothing() -> None:
    hints = {"summary": "Theme schema", "when_to_use": "…", "key_concepts": ["{{props.x}}"]}
    assert render({"a": 1}, hints).context == {"a": 1}


@pytest.mark.parametrize(
    ("hints", "reason"),
    [
        ([], "llm_hints: llm_hints must be an object"),
        ({"include": "name"}, "include: a list of at most"),
        ({"exclude": ["a..b"]}, "exclude: 'a..b' is not a field path"),
        ({"transform": []}, "transform: an object"),
        ({"transform": {"x": "{{a}}"}}, 'transform.x: a rule is an object with a "type"'),
        ({"transform": {"x": {"type": "jq", "query": "."}}}, "transform.x: unknown type 'jq'"),
        ({"transform": {"x": {"type": "extract", "path": "$.a"}}}, "needs 'value'"),
        ({"transform": {"x": {"type": "format", "format": 3}}}, "'format' must be a string"),
        ({"transform": {"x": rule("template", "{% for %}")}}, "transform.x: Expected"),
        ({"transform": {"x": rule("template", "{{#each a}}")}}, "{{#each}} is never closed"),
        ({"transform": {"x": rule("template", "{{ x|nosuch }}")}}, "No filter named 'nosuch'"),
        ({"transform": {"x": rule("template", "{% include 'y' %}")}}, "include is not available"),
        ({"transform": {"x": rule("template", "{{a}}", syntax="mustache")}}, "syntax must be"),
        ({"transform": {"x": rule("extract", "$[")}}, "invalid JSONPath '$['"),
        ({"transform": {"x": rule("extract", "$[?match(@.a, 'b')]")}}, "'match' is not defined"),
        ({"transform": {str(i): rule("literal", i) for i in range(4)}}, "at most 3 rules"),
    ],
)
def test_hints_that_cannot_work_are_invalid_input(hints: Any, reason: str) -> None:
    with pytest.raises(InvalidInput) as raised:
        TRANSFORMS.check(hints)
    assert raised.value.status_code == 422
    assert reason in raised.value.detail


def test_a_template_longer_than_the_limit_is_invalid() -> None:
    transforms = Transforms(TransformSettings(max_template_chars=10))
    with pytest.raises(InvalidInput, match="longer than 10 characters"):
        transforms.check({"transform": {"x": rule("template", "x" * 11)}})


def test_a_definition_is_checked_for_its_context_hints_too() -> None:
    definition = {"schema_name": "schema.def.v1", "context": {"llm_hints": {"transform": 1}}}
    with pytest.raises(InvalidInput, match=r"^context\.llm_hints: transform"):
        TRANSFORMS.check_record(definition)
    TRANSFORMS.check_record({"schema_name": "note.v1", "context": {"llm_hints": 1}})


def test_stored_hints_that_do_not_compile_fall_back_with_the_reason() -> None:
    view = render({"a": 1}, {"transform": {"x": {"type": "jq"}}})
    assert view.context == {"a": 1}
    assert view.error is not None and view.error.startswith("hints do not compile")
