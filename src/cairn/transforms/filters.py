"""The filters and globals templates may use: an allowlist, each one budgeted.

Every filter steps the render budget and has its result size-checked. Filters whose output
can be much larger than their input (``center``, ``indent``, ``wordwrap``, ``format``,
``join``, ``replace``, ``batch``, ``slice``, ``tojson``, ``string``) are checked *before*
they run, so ``'x'|center(10**9)`` is refused instead of allocated. ``lipsum``, ``random``,
``pprint``, ``urlize``, ``xmlattr`` and the HTML escaping filters are left out.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from jinja2 import filters as jf, pass_environment, pass_eval_context
from jinja2.nodes import EvalContext
from jinja2.sandbox import safe_range
from jinja2.utils import Cycler, Joiner, Namespace

from cairn.transforms import budget
from cairn.transforms.budget import RenderLimitExceeded

MAX_INDENT = 256
MAX_WRAP_WIDTH = 10_000
MAX_WRAP_CHARS = 16_384  # textwrap is pure Python: ~30 ms for this many at width 1
MAX_BATCH = 10_000
MAX_SLICES = 1_000
MAX_JSON_INDENT = 8
STEP_FILTER = "_budget_step"  # wrapped around `for … if` tests by the code generator

# Filters that only pick, count or reorder what they are given: no size check needed.
_REARRANGING = (
    *("attr", "count", "dictsort", "first", "groupby", "items", "last", "length", "list"),
    *("map", "max", "min", "reject", "rejectattr", "reverse", "select", "selectattr", "sort"),
    "unique",
)
# Filters whose output is about the size of their input: checked after they run.
_TEXT = (
    *("abs", "capitalize", "float", "int", "lower", "round", "safe", "striptags", "title"),
    *("trim", "truncate", "upper", "urlencode", "wordcount", "filesizeformat"),
)


def stepped(func: Callable[..., Any]) -> Callable[..., Any]:
    """``func`` with a budget step before it (keeps Jinja's pass_* markers)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        budget.active().step()
        return func(*args, **kwargs)

    return wrapper


def bounded(func: Callable[..., Any]) -> Callable[..., Any]:
    """``func`` with a budget step before and a size check after (keeps Jinja's pass_*)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        active = budget.active()
        active.step()
        return active.check_value(func(*args, **kwargs))

    return wrapper


def _limit() -> int:
    return budget.active().max_value_chars


def _refuse(what: str) -> RenderLimitExceeded:
    return RenderLimitExceeded(f"{what} would grow a value beyond {_limit()} characters")


def check_growth(text: str, method: str, args: tuple[Any, ...], limit: int) -> None:
    """Pre-check the growing ``str`` methods a template may call (``replace``, ``join``)."""
    if method == "replace" and len(args) >= 2:
        _check_replace(text, args[0], args[1], args[2] if len(args) > 2 else None, limit)
    elif method == "join" and args:
        items = args[0]
        if not isinstance(items, list | tuple | str):
            raise RenderLimitExceeded("join needs a list")
        if budget.approx_size(items, limit) + len(text) * len(items) > limit:
            raise RenderLimitExceeded(f"join would grow a value beyond {limit} characters")


def _check_replace(text: str, old: Any, new: Any, count: Any, limit: int) -> None:
    old, new = str(old), str(new)
    hits = text.count(old) if old else len(text) + 1
    if isinstance(count, int) and 0 <= count < hits:
        hits = count
    if len(text) + hits * max(0, len(new) - len(old)) > limit:
        raise RenderLimitExceeded(f"replace would grow a value beyond {limit} characters")


_PERCENT_SPEC = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(\*|\d+)?(?:\.(\*|\d+))?")


def check_percent_format(fmt: str, limit: int) -> None:
    """Reject ``'%999999999d' % 1`` and ``%*d`` before they allocate."""
    for match in _PERCENT_SPEC.finditer(fmt):
        for width in match.groups():
            if width == "*" or (width is not None and int(width) > limit):
                raise RenderLimitExceeded("format width too large")


def _center(value: Any, width: int = 80) -> str:
    if int(width) > _limit():
        raise _refuse("center")
    return jf.do_center(value, width)


def _indent(s: Any, width: int | str = 4, first: bool = False, blank: bool = False) -> str:
    text = str(s)
    step = len(width) if isinstance(width, str) else int(width)
    if step > MAX_INDENT or len(text) + (text.count("\n") + 1) * step > _limit():
        raise _refuse("indent")
    return jf.do_indent(text, width, first, blank)


@pass_environment
def _wordwrap(environment: Any, s: Any, width: int = 79, *args: Any, **kwargs: Any) -> str:
    text = str(s)
    wrapstring = kwargs.get("wrapstring") or (args[1] if len(args) > 1 else None) or "\n"
    if not 1 <= int(width) <= MAX_WRAP_WIDTH:
        raise RenderLimitExceeded(f"wordwrap width must be 1 to {MAX_WRAP_WIDTH}")
    if len(text) > MAX_WRAP_CHARS:
        raise RenderLimitExceeded(f"wordwrap takes at most {MAX_WRAP_CHARS} characters")
    lines = len(text) // int(width) + text.count("\n") + 1
    if len(text) + lines * len(str(wrapstring)) > _limit():
        raise _refuse("wordwrap")
    return jf.do_wordwrap(environment, text, width, *args, **kwargs)


def _format(value: Any, *args: Any, **kwargs: Any) -> str:
    check_percent_format(str(value), _limit())
    budget.active().check_value([list(args), list(kwargs.values())])
    return jf.do_format(value, *args, **kwargs)


@pass_eval_context
def _join(eval_ctx: EvalContext, value: Iterable[Any], d: str = "", attribute: Any = None) -> str:
    items = list(value)
    if budget.approx_size(items, _limit()) + len(str(d)) * len(items) > _limit():
        raise _refuse("join")
    return str(jf.do_join(eval_ctx, items, d, attribute))


@pass_eval_context
def _replace(eval_ctx: EvalContext, s: Any, old: Any, new: Any, count: Any = None) -> str:
    _check_replace(str(s), old, new, count, _limit())
    return jf.do_replace(eval_ctx, s, old, new, count)


def _batch(value: Any, linecount: int, fill_with: Any = None) -> Any:
    if not 1 <= int(linecount) <= MAX_BATCH:
        raise RenderLimitExceeded(f"batch size must be 1 to {MAX_BATCH}")
    return list(jf.do_batch(value, linecount, fill_with))


def _slice(value: Any, slices: int, fill_with: Any = None) -> Any:
    if not 1 <= int(slices) <= MAX_SLICES:
        raise RenderLimitExceeded(f"slice count must be 1 to {MAX_SLICES}")
    return list(jf.do_slice(value, slices, fill_with))


@pass_environment
def _sum(environment: Any, iterable: Iterable[Any], attribute: Any = None, start: Any = 0) -> Any:
    if attribute is not None:
        iterable = map(jf.make_attrgetter(environment, attribute), iterable)
    numbers = list(iterable)
    if not all(_is_number(n) for n in [start, *numbers]):
        raise TypeError("sum adds numbers only")
    return sum(numbers, start)


def _tojson(value: Any, indent: int | None = None) -> str:
    if indent is not None and not 0 <= int(indent) <= MAX_JSON_INDENT:
        raise RenderLimitExceeded(f"tojson indent must be 0 to {MAX_JSON_INDENT}")
    budget.active().check_value(value)
    return json.dumps(value, ensure_ascii=False, indent=indent, default=str)


def _string(value: Any) -> str:
    budget.active().check_value(value)
    return str(value)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def hb_each(value: Any) -> list[tuple[Any, Any]]:
    """What a Handlebars ``{{#each}}`` walks: (index, item) of a list, (key, value) of an
    object, nothing for anything else."""
    if isinstance(value, Mapping):
        return list(value.items())
    if isinstance(value, list | tuple):
        return list(enumerate(value))
    return []


def hb_get(scope: Any, key: str, fallback: Any) -> Any:
    """A name inside ``{{#each}}``: the item's field if it has one, else the outer value."""
    if isinstance(scope, Mapping) and key in scope:
        return scope[key]
    return fallback


def _step(value: Any) -> Any:
    budget.active().step()
    return value


def _bounded_range(*args: int) -> range:
    budget.active().step()
    return safe_range(*args)


FILTERS: dict[str, Callable[..., Any]] = {
    **{name: stepped(jf.FILTERS[name]) for name in _REARRANGING},
    **{name: bounded(jf.FILTERS[name]) for name in _TEXT},
    "d": stepped(jf.do_default),
    "default": stepped(jf.do_default),
    "center": bounded(_center),
    "indent": bounded(_indent),
    "wordwrap": bounded(_wordwrap),
    "format": bounded(_format),
    "join": bounded(_join),
    "replace": bounded(_replace),
    "batch": bounded(_batch),
    "slice": bounded(_slice),
    "sum": bounded(_sum),
    "tojson": bounded(_tojson),
    "json": bounded(_tojson),
    "string": bounded(_string),
    "hb_each": stepped(hb_each),
    "hb_get": stepped(hb_get),
    STEP_FILTER: _step,
}

GLOBALS: dict[str, Any] = {
    "range": _bounded_range,
    "dict": dict,
    "namespace": Namespace,
    "cycler": Cycler,
    "joiner": Joiner,
}
