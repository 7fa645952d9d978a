"""Hostile templates and queries: each ends in a clean error and the fallback, quickly.

Templates are written by any client with write access and run in the server and the worker,
so none of these may crash, hang, exhaust memory or show anything from outside the record.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from tests.transforms.helpers import render, render_template, rule

BIG = {
    "items": [{"name": f"n{i}", "tags": ["a", "b"], "x": {"y": [1, {"z": i}]}} for i in range(2500)]
}
SECRET_MARKERS = ("<class", "<function", "<module", "os.", "subprocess", "__")
BOUND_S = 1.0  # the render budget is 50 ms; this leaves room for a slow CI machine

ATTRIBUTE_WALKS = [
    ("{{ ''.__class__.__mro__ }}", "not allowed"),
    ("{{ ''.__class__.__mro__[1].__subclasses__() }}", "not allowed"),
    ("{{ cycler.__init__.__globals__ }}", "not allowed"),
    ("{{ joiner.__init__.__globals__.os }}", "not allowed"),
    ("{{ namespace.__init__.__globals__ }}", "not allowed"),
    ("{{ range.__globals__ }}", "not allowed"),
    ("{{ self._TemplateReference__context }}", "not allowed"),
    ("{{ context.items.__len__() }}", "not allowed"),
    ("{{ '{0.__class__}'.format(1) }}", "not allowed"),
    ("{{ 'x'.center(10) }}", "not allowed"),
    ("{{ lipsum(10**9) }}", "'lipsum' is undefined"),
    ("{% include 'secrets.txt' %}", "include is not available"),
]

RESOURCE_BOMBS = [
    ("{{ range(10**9)|list }}", "Range too big"),
    (
        "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
        "took longer",
    ),
    (
        "{% for i in range(100000) %}{% for j in range(100000) if j < 0 %}{% endfor %}{% endfor %}",
        "took longer",
    ),
    ("{% for i in range(100000) %}0123456789{% endfor %}", "output longer"),
    ("{{ 'a' * 10**9 }}", "grew beyond"),
    ("{{ ['a'] * 10**9 }}", "grew beyond"),
    ("{{ 2 ** 100000 }}", "number too large"),
    (
        "{% set ns = namespace(s='ab') %}"
        "{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
        "grew beyond",
    ),
    (
        "{% set ns = namespace(l=[1]) %}"
        "{% for i in range(64) %}{% set ns.l = ns.l + ns.l %}{% endfor %}",
        "limit exceeded",
    ),
    (
        "{% macro f(s, n) %}{{ f(s ~ s, n - 1) if n else s|length }}{% endmacro %}"
        "{{ f('ab', 60) }}",
        "grew beyond",
    ),
    ("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}", "recursion too deep"),
    (
        "{% macro f(n) %}{% if n %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}"
        "{{ f(40) }}",
        "took longer",
    ),
    ("{% for x in [1] recursive %}{{ loop([1]) }}{% endfor %}", "recursion too deep"),
    (
        "{% set x %}{% for i in range(100000) %}{{ 'y' * 1000 }}{% endfor %}{% endset %}"
        "{{ x|length }}",
        "wrote too much",
    ),
    ("{{ 'x'|center(10**9) }}", "center would grow"),
    ("{{ 'x\ny'|indent(10**6) }}", "indent would grow"),
    ("{{ '%0999999999d'|format(1) }}", "format width too large"),
    ("{{ '%0999999999d' % 1 }}", "format width too large"),
    ("{{ ('y' * 100000).replace('y', 'y' * 100) }}", "replace would grow"),
    ("{{ ('y' * 100000)|replace('y', 'y' * 100) }}", "replace would grow"),
    ("{{ range(100000)|join('x' * 100) }}", "join would grow"),
    ("{{ [1]|batch(10**9, 0)|list }}", "batch size"),
    ("{{ [1]|slice(10**9)|list }}", "slice count"),
    ("{{ ('a ' * 100000)|wordwrap(1) }}", "wordwrap takes at most"),
    ("{{ context|tojson(indent=100000) }}", "tojson indent"),
    ("{% set b = 'x' * 500000 %}{{ [b, b, b] }}", "grew beyond"),
]

QUERY_BOMBS = ["$..*", "$..*..*..*..*", "$..[?@..*..*]", "$..x..y..z..*"]


def _contained(view: Any, reason: str, elapsed: float) -> None:
    assert elapsed < BOUND_S, f"took {elapsed:.2f} s"
    assert view.error is not None and reason in view.error, view.error
    assert not view.replaced
    text = str(view.context)
    assert not any(marker in text for marker in SECRET_MARKERS)


@pytest.mark.parametrize(("template", "reason"), ATTRIBUTE_WALKS + RESOURCE_BOMBS)
def test_hostile_template_falls_back_cleanly_and_quickly(template: str, reason: str) -> None:
    context = {"items": ["a", "b"], "note": "kept"}
    started = time.perf_counter()
    view = render_template(template, context)
    _contained(view, reason, time.perf_counter() - started)
    assert view.context == context  # the untransformed context


@pytest.mark.parametrize("query", QUERY_BOMBS)
def test_jsonpath_on_a_huge_document_is_bounded(query: str) -> None:
    started = time.perf_counter()
    view = render(BIG, {"transform": {"q": rule("extract", query)}})
    _contained(view, "limit exceeded", time.perf_counter() - started)


def test_regex_functions_are_not_available_to_jsonpath() -> None:
    view = render(BIG, {"transform": {"q": rule("extract", "$..[?search(@.name, '(a+)+$')]")}})
    assert view.error is not None and "'search' is not defined" in view.error


def test_the_step_limit_is_deterministic() -> None:
    view = render_template("{% for i in range(2000) %}{% endfor %}", {}, max_steps=1000)
    assert view.error is not None and "too many steps" in view.error


def test_the_time_limit_is_configurable() -> None:
    started = time.perf_counter()
    view = render_template(
        "{% for i in range(100000) %}{% for j in range(9) %}{% endfor %}{% endfor %}",
        {},
        render_ms=5,
    )
    assert view.error is not None and "took longer than 5 ms" in view.error
    assert time.perf_counter() - started < 0.5


def test_one_failing_rule_falls_back_for_the_whole_record_and_names_the_rule() -> None:
    hints = {
        "exclude": ["code"],
        "transform": {"ok": rule("literal", 1), "bad": rule("template", "{{ 1/0 }}")},
    }
    view = render({"code": "x", "keep": 1}, hints)
    assert view.context == {"keep": 1}
    assert view.error == "transform.bad: ZeroDivisionError: division by zero"


def test_data_outside_the_record_is_not_reachable() -> None:
    view = render_template("{{ range }}|{{ cycler }}|{{ self }}|{{ namespace }}|{{ dict }}", {})
    assert view.error is None and view.context == {"out": "||||"}
