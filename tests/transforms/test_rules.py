"""Each rule type, include/exclude and the two modes, applied to plain records."""

from __future__ import annotations

from tests.transforms.helpers import FIXED_ID, render, render_template, rule

TOOLS = {"tools": [{"name": "calc", "code": "x"}, {"name": "echo", "code": "y"}], "n": 2}


def test_template_sees_context_fields_at_top_level_and_under_context() -> None:
    view = render_template("{{ who }} / {{ context.who }}", {"who": "ana"})
    assert view.context == {"out": "ana / ana"}
    assert view.source == "instance" and view.replaced and view.error is None


def test_template_sees_the_breadcrumb() -> None:
    view = render_template(
        "{{ breadcrumb.title }}|{{ breadcrumb.tags|join(',') }}|{{ breadcrumb.schema_name }}"
        "|{{ breadcrumb.id }}|{{ breadcrumb.created_at }}"
    )
    assert (
        view.context["out"] == f"Deploy notes|deploy|note.v1|{FIXED_ID}|2025-01-02T03:04:05+00:00"
    )


def test_a_context_field_wins_over_the_breadcrumb_field_of_the_same_name() -> None:
    assert render_template("{{ title }}", {"title": "mine"}).context["out"] == "mine"
    assert render_template("{{ title }}", {}).context["out"] == "Deploy notes"


def test_values_read_as_json_not_python() -> None:
    view = render_template(
        "{{ none }}|{{ yes }}|{{ items }}|{{ whole }}|{{ missing }}|{{ missing.deeper }}",
        {"none": None, "yes": True, "items": [1, "a"], "whole": 3.0},
    )
    assert view.context["out"] == '|true|[1, "a"]|3||'


def test_nothing_is_html_escaped() -> None:
    view = render_template("{{ code }}", {"code": "<b>a & 'b'</b>"})
    assert view.context["out"] == "<b>a & 'b'</b>"


def test_length_works_on_lists_strings_and_objects() -> None:
    view = render_template(
        "{{ xs.length }} {{ s.length }} {{ o.length }}", {"xs": [1, 2], "s": "abc", "o": {"a": 1}}
    )
    assert view.context["out"] == "2 3 1"


def test_a_data_key_named_like_a_dict_method_is_the_data() -> None:
    view = render_template("{{ context.items|join(',') }}", {"items": ["a", "b"]})
    assert view.context["out"] == "a,b"


def test_extract_returns_null_one_value_or_a_list() -> None:
    hints = {"transform": {
        "none": rule("extract", "$.nothing"),
        "one": rule("extract", "$.tools[0].name"),
        "many": rule("extract", "$.tools[*].name"),
        "count": rule("extract", "$.tools.length"),
    }}  # fmt: skip
    view = render(TOOLS, hints)
    assert view.context == {"none": None, "one": "calc", "many": ["calc", "echo"], "count": 2}


def test_format_fills_paths_and_leaves_other_braces() -> None:
    hints = {"transform": {"f": rule("format", "{tools[1].name} of {n} ({tools.length}) {a b} {}")}}
    assert render(TOOLS, hints).context == {"f": "echo of 2 (2) {a b} {}"}


def test_format_renders_missing_as_empty_and_structures_as_json() -> None:
    hints = {"transform": {"f": rule("format", "[{missing}] {flag} {obj}")}}
    view = render({"flag": False, "obj": {"a": 1}}, hints)
    assert view.context == {"f": '[] false {"a": 1}'}


def test_literal_is_any_json() -> None:
    hints = {"transform": {"a": rule("literal", "Use tools by name"), "b": rule("literal", [1])}}
    assert render({}, hints).context == {"a": "Use tools by name", "b": [1]}


def test_replace_keeps_only_the_outputs() -> None:
    hints = {"transform": {"count": rule("literal", 3)}, "mode": "replace"}
    assert render({"keep": 1}, hints).context == {"count": 3}


def test_merge_adds_outputs_to_the_filtered_context() -> None:
    hints = {"transform": {"count": rule("literal", 3)}, "mode": "merge", "exclude": ["drop"]}
    view = render({"keep": 1, "drop": 2}, hints)
    assert view.context == {"keep": 1, "count": 3} and not view.replaced


def test_mode_defaults_to_replace() -> None:
    assert render({"keep": 1}, {"transform": {"c": rule("literal", 0)}}).context == {"c": 0}


def test_include_then_exclude_without_transform() -> None:
    hints = {"include": ["name", "schema"], "exclude": ["schema.internal"]}
    context = {"name": "calc", "code": "...", "schema": {"type": "object", "internal": 1}}
    view = render(context, hints)
    assert view.context == {"name": "calc", "schema": {"type": "object"}}
    assert not view.replaced


def test_transform_rules_see_the_filtered_context() -> None:
    hints = {"exclude": ["secret"], "transform": {"all": rule("template", "{{ context|tojson }}")}}
    assert render({"secret": "s", "ok": 1}, hints).context == {"all": '{"ok": 1}'}
