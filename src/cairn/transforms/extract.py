"""``extract`` rules: JSONPath (python-jsonpath) over the filtered context, bounded.

Every node a query visits — filter sub-queries included — is created through
:class:`_BudgetedMatch`, which steps the render budget, so ``$..*..*..*`` or a filter
inside a recursive descent on a large document stops at the deadline or step limit.
The regex functions (``match``, ``search``) are left out: a user-written pattern could
backtrack for minutes inside ``re``, where no budget check can run.

Results follow RCRT: no match is ``null``, one match is the value, several are a list. A
path ending in ``.length`` that matches nothing counts the value before it.
"""

from __future__ import annotations

from typing import Any

from jsonpath import JSONPathEnvironment, JSONPathError, JSONPathMatch, function_extensions as fx
from jsonpath.path import CompoundJSONPath, JSONPath

from cairn.transforms import budget

MAX_MATCHES = 10_000
MAX_QUERY_CHARS = 1024


class _BudgetedMatch(JSONPathMatch):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        budget.active().step()
        super().__init__(*args, **kwargs)


class _BoundedEnvironment(JSONPathEnvironment):
    match_class = _BudgetedMatch

    def setup_function_extensions(self) -> None:
        self.function_extensions["length"] = fx.Length()
        self.function_extensions["count"] = fx.Count()
        self.function_extensions["value"] = fx.Value()


_ENV = _BoundedEnvironment()


class ExtractError(ValueError):
    pass


class Extractor:
    def __init__(self, query: str) -> None:
        if not isinstance(query, str) or len(query) > MAX_QUERY_CHARS:
            raise ExtractError(f"a JSONPath of at most {MAX_QUERY_CHARS} characters")
        self.query = query
        self.path = _compile(query)
        prefix = query.removesuffix(".length")
        self.count_prefix = _compile(prefix) if prefix != query else None

    def __call__(self, data: Any) -> Any:
        found = _find(self.path, data)
        if not found and self.count_prefix is not None:
            counted = _find(self.count_prefix, data)
            if len(counted) == 1 and isinstance(counted[0], list | str | dict):
                return len(counted[0])
        if not found:
            return None
        return found[0] if len(found) == 1 else found


def _compile(query: str) -> JSONPath | CompoundJSONPath:
    try:
        return _ENV.compile(query)
    except JSONPathError as error:
        raise ExtractError(f"invalid JSONPath {query!r}: {error}".splitlines()[0]) from None
    except RecursionError:
        raise ExtractError(f"invalid JSONPath {query!r}: nested too deeply") from None


def _find(path: JSONPath | CompoundJSONPath, data: Any) -> list[Any]:
    """All matches, through python-jsonpath's async API: its sync ``finditer`` builds root
    matches with a hard-coded class, the async one with ``env.match_class`` (ours). With
    in-memory data nothing ever awaits, so the coroutine finishes on its first ``send``."""
    coroutine = _collect(path, data)
    try:
        coroutine.send(None)
    except StopIteration as done:
        found: list[Any] = done.value
        return found
    coroutine.close()
    raise ExtractError("JSONPath evaluation suspended unexpectedly")


async def _collect(path: JSONPath | CompoundJSONPath, data: Any) -> list[Any]:
    found = []
    async for match in await path.finditer_async(data):
        found.append(match.obj)
        if len(found) > MAX_MATCHES:
            raise budget.RenderLimitExceeded(f"JSONPath matched more than {MAX_MATCHES} values")
    return found
