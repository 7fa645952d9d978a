"""Handlebars → Jinja for RCRT's subset, checked by what the templates render."""

from __future__ import annotations

from typing import Any

import pytest
from tests.transforms.helpers import render_template

from cairn.transforms import TranslationError, looks_like_handlebars, translate

DATA: dict[str, Any] = {
    "items": [{"name": "a", "tags": ["x", "y"]}, {"name": "b", "tags": []}],
    "perms": {"net": True, "read": False},
    "status": "done",
    "best": ["first tip", "second tip"],
}


def _out(template: str, context: dict[str, Any] | None = None) -> str:
    view = render_template(template, DATA if context is None else context)
    assert view.error is None, view.error
    out: str = view.context["out"]
    return out


def test_each_over_a_list_with_index_first_last() -> None:
    template = (
        "{{#each context.items}}{{@index}}:{{this.name}}"
        "{{#if @first}}*{{/if}}{{#unless @last}}, {{/unless}}{{/each}}"
    )
    assert _out(template) == "0:a*, 1:b"


def test_each_over_an_object_with_key() -> None:
    assert _out("{{#each context.perms}}{{@key}}={{this}};{{/each}}") == "net=true;read=false;"


def test_nested_each_and_parent_paths() -> None:
    template = "{{#each items}}{{name}}[{{#each tags}}{{../name}}.{{this}} {{/each}}]{{/each}}"
    assert _out(template) == "a[a.x a.y ]b[]"


def test_each_else_renders_for_an_empty_or_missing_list() -> None:
    assert _out("{{#each nothing}}x{{else}}none{{/each}}") == "none"


def test_a_bare_name_inside_each_reads_the_item_then_the_outside() -> None:
    assert _out("{{#each items}}{{name}}-{{status}} {{/each}}") == "a-done b-done "


def test_if_else_if_else_and_helpers() -> None:
    template = '{{#if (eq status "new")}}new{{else if (ne status "done")}}open{{else}}closed{{/if}}'
    assert _out(template) == "closed"
    assert _out("{{#if (and status best)}}y{{/if}}{{#if (not status)}}n{{/if}}") == "y"


def test_unless_and_with() -> None:
    assert _out("{{#unless nothing}}u{{/unless}}{{#with perms}}{{net}}{{/with}}") == "utrue"


def test_index_segment_length_and_triple_stash() -> None:
    template = "{{best.length}} tips. Key: {{context.best.[0]}} {{{status}}}"
    assert _out(template) == "2 tips. Key: first tip done"


def test_comments_and_tilde_whitespace_control() -> None:
    assert _out("a {{! note }}{{!-- a }} b --}}b  {{~status~}}  c") == "a bdonec"


def test_a_block_tag_alone_on_its_line_takes_the_line_with_it() -> None:
    template = "List:\n{{#each best}}\n- {{this}}\n{{/each}}\nEnd"
    assert _out(template) == "List:\n- first tip\n- second tip\nEnd"


def test_jinja_syntax_in_handlebars_text_stays_text() -> None:
    assert _out("{{#if status}}{% raw %} {# x #}{{/if}}") == "{% raw %} {# x #}"


def test_plain_paths_are_left_to_jinja_and_jinja_templates_pass_through() -> None:
    assert not looks_like_handlebars("{{context.total}} models")
    assert not looks_like_handlebars("{% for x in xs %}{{ x|upper }}{% endfor %}")
    assert looks_like_handlebars("{{#each xs}}{{/each}}")
    assert (
        _out("{% for x in best %}{{ loop.index }}{{ x|upper }} {% endfor %}")
        == "1FIRST TIP 2SECOND TIP "
    )


def test_translation_output_is_jinja() -> None:
    assert translate("{{#each xs}}{{@index}}{{/each}}") == (
        "{% for _hb1_key, _hb1 in (xs)|hb_each %}{{ loop.index0 }}{% endfor %}"
    )


@pytest.mark.parametrize(
    ("template", "reason"),
    [
        ("{{#each xs}}", "is never closed"),
        ("{{/if}}", "without a matching"),
        ("{{#if a}}{{/each}}", "{{/each}} closes {{#if}}"),
        ("{{> partial}}", "partials are not supported"),
        ("{{#custom a}}{{/custom}}", "unsupported block helper '#custom'"),
        ("{{shout name}}", "unsupported helper 'shout'"),
        ("{{@index}}", "only available directly inside {{#each}}"),
        ("{{#each xs}}{{a=b}}{{/each}}", "hash arguments are not supported"),
        ("{{#if a}}\n\n{{x|upper}}{{/if}}", "unexpected '|' in 'x|upper' (line 3)"),
        ("{{#if a}}{{b", "unclosed '{{' (line 1)"),
    ],
)
def test_unsupported_handlebars_is_a_translation_error_with_the_line(
    template: str, reason: str
) -> None:
    with pytest.raises(TranslationError) as raised:
        translate(template)
    assert reason in str(raised.value)
