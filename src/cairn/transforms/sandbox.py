"""The Jinja environment templates run in: sandboxed, unescaped, and budgeted.

On top of Jinja's ``ImmutableSandboxedEnvironment`` (no private attributes, no mutation
of lists and dicts):

- a code generator that calls the render budget at the start of every block body (loop
  iterations, macro and ``caller`` calls, ``if`` branches), before each ``for … if`` test,
  and for every piece of text written, so loops and recursion end at the deadline and
  buffers cannot grow without bound;
- ``*``, ``**``, ``+`` and ``%`` intercepted and checked *before* they allocate, and ``~``
  checked before it turns containers into text;
- an allowlist of methods on strings, lists and dicts, with ``replace`` and ``join``
  checked before they run; an allowlist of filters (see :mod:`.filters`);
- dict keys win over dict methods (``items.items`` is the data), and ``.length`` works on
  strings, lists and objects, as RCRT's Handlebars templates expect;
- unsafe attribute access raises instead of rendering as empty text.
"""

from __future__ import annotations

import json
import types
from typing import Any

from jinja2 import ChainableUndefined, Undefined, nodes
from jinja2.compiler import CodeGenerator, Frame
from jinja2.exceptions import SecurityError
from jinja2.runtime import Context
from jinja2.sandbox import ImmutableSandboxedEnvironment

from cairn.transforms import budget
from cairn.transforms.filters import (
    FILTERS,
    GLOBALS,
    STEP_FILTER,
    check_growth,
    check_percent_format,
)

MAX_INT_BITS = 4096

_STR_METHODS = {
    "capitalize", "casefold", "count", "endswith", "find", "isalnum", "isalpha", "isdigit",
    "islower", "isnumeric", "isspace", "istitle", "isupper", "join", "lower", "lstrip",
    "partition", "removeprefix", "removesuffix", "replace", "rfind", "rpartition",
    "rsplit", "rstrip", "split", "splitlines", "startswith", "strip", "swapcase",
    "title", "upper",
}  # fmt: skip
SAFE_METHODS: dict[type, frozenset[str]] = {
    str: frozenset(_STR_METHODS),
    dict: frozenset({"get", "items", "keys", "values"}),
    list: frozenset({"count", "index"}),
    tuple: frozenset({"count", "index"}),
}


class BudgetedCodeGenerator(CodeGenerator):
    """Jinja's code generator with budget calls woven into the generated Python."""

    def blockvisit(self, body: Any, frame: Frame) -> None:
        self.writeline("environment.step()")
        super().blockvisit(body, frame)

    def visit_Concat(self, node: nodes.Concat, frame: Frame) -> None:
        self.write("environment.join_parts((")
        for arg in node.nodes:
            self.visit(arg, frame)
            self.write(", ")
        self.write("))")

    def _output_const_repr(self, group: Any) -> str:
        return f"environment.emitted({super()._output_const_repr(group)})"

    def _output_child_pre(self, node: nodes.Expr, frame: Frame, finalize: Any) -> None:
        self.write("environment.emitted(")
        super()._output_child_pre(node, frame, finalize)

    def _output_child_post(self, node: nodes.Expr, frame: Frame, finalize: Any) -> None:
        super()._output_child_post(node, frame, finalize)
        self.write(")")


class LLMEnvironment(ImmutableSandboxedEnvironment):
    code_generator_class = BudgetedCodeGenerator
    intercepted_binops = frozenset({"*", "**", "+", "%"})

    def __init__(self) -> None:
        super().__init__(
            autoescape=False,
            keep_trailing_newline=True,
            finalize=as_text,
            undefined=ChainableUndefined,
        )
        self.filters = dict(FILTERS)
        self.globals = dict(GLOBALS)

    def _parse(self, source: str, name: str | None, filename: str | None) -> nodes.Template:
        tree = super()._parse(source, name, filename)
        for loop in tree.find_all(nodes.For):
            if loop.test is not None:  # `for x in xs if test` skips items without a body run
                test = loop.test
                loop.test = nodes.Filter(test, STEP_FILTER, [], [], None, None, lineno=test.lineno)
        return tree

    # --- budget hooks called from generated code ------------------------------------------

    def step(self) -> None:
        budget.active().step()

    def emitted(self, text: str) -> str:
        budget.active().emit(len(text))
        return text

    def join_parts(self, parts: tuple[Any, ...]) -> str:
        active = budget.active()
        for part in parts:
            if not isinstance(part, str):
                active.check_value(part)
        return active.check_value("".join(map(as_text, parts)))

    # --- operators ------------------------------------------------------------------------

    def call_binop(self, context: Context, operator: str, left: Any, right: Any) -> Any:
        active = budget.active()
        active.step()
        _check_binop(operator, left, right, active.max_value_chars)
        return active.check_value(self.binop_table[operator](left, right))

    # --- attributes and calls -------------------------------------------------------------

    def getattr(self, obj: Any, attribute: str) -> Any:
        if isinstance(obj, dict) and attribute in obj:
            return obj[attribute]
        if attribute == "length" and isinstance(obj, str | list | tuple | dict):
            return len(obj)
        return super().getattr(obj, attribute)

    def getitem(self, obj: Any, argument: Any) -> Any:
        if isinstance(obj, dict) and isinstance(argument, int) and str(argument) in obj:
            return obj[str(argument)]
        if isinstance(argument, str):
            return self.getattr(obj, argument)
        return super().getitem(obj, argument)

    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        if not super().is_safe_attribute(obj, attr, value):
            return False
        for kind, allowed in SAFE_METHODS.items():
            if isinstance(obj, kind):
                return attr in allowed
        return True

    def wrap_str_format(self, value: Any) -> None:
        return None  # str.format is not on the allowlist; no sandboxed formatter needed

    def unsafe_undefined(self, obj: Any, attribute: str) -> Undefined:
        raise SecurityError(f"access to {type(obj).__name__}.{attribute} is not allowed")

    def call(__self, __context: Context, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        active = budget.active()
        active.step()
        if isinstance(__obj, types.BuiltinMethodType) and isinstance(__obj.__self__, str):
            check_growth(__obj.__self__, __obj.__name__, args, active.max_value_chars)
        return active.check_value(super().call(__context, __obj, *args, **kwargs))


def as_text(value: Any) -> str:
    """How a value reads in template output: JSON's spelling, not Python's; objects that
    are not data (functions, macros, ranges) read as nothing."""
    if isinstance(value, str):
        return value
    if value is None or isinstance(value, Undefined):
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, dict | list | tuple):
        budget.active().check_value(value)
        return json.dumps(value, ensure_ascii=False, default=_json_default)
    return ""  # functions, macros, ranges, generators: nothing an LLM should read


def _json_default(value: Any) -> Any:
    return as_text(value)


def _check_binop(operator: str, left: Any, right: Any, limit: int) -> None:
    if operator == "*":
        _check_repeat(left, right, limit)
        _check_repeat(right, left, limit)
        both_ints = _is_int(left) and _is_int(right)
        if both_ints and left.bit_length() + right.bit_length() > MAX_INT_BITS:
            raise budget.RenderLimitExceeded("number too large")
    elif operator == "**" and _is_int(left) and _is_int(right):
        if right > 0 and abs(left) > 1 and left.bit_length() * right > MAX_INT_BITS:
            raise budget.RenderLimitExceeded("number too large")
    elif operator == "+" and isinstance(left, str | list | tuple):
        if budget.approx_size(left, limit) + budget.approx_size(right, limit) > limit:
            raise budget.RenderLimitExceeded(f"a value grew beyond {limit} characters")
    elif operator == "%" and isinstance(left, str):
        check_percent_format(left, limit)
        budget.active().check_value(right)


def _check_repeat(sequence: Any, times: Any, limit: int) -> None:
    repeats = isinstance(sequence, str | list | tuple) and _is_int(times) and times > 0
    if repeats and budget.approx_size(sequence, limit) * times > limit:
        raise budget.RenderLimitExceeded(f"a value grew beyond {limit} characters")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
