"""A record's context as text: what it is embedded and keyword-indexed by (``llm_text``),
and the body of its block in ``formatted_context``.

``llm_text``: title, description and the context *as an LLM sees it* (after its
``llm_hints``) rendered as ``path: value`` lines — never the title alone, which is what made
every RCRT chat message embed as "User Message". Text a transform produced (``formatted:
"User: hi"``) is taken as it is, without its key.

A block's body is the same text, except for a record nobody wrote hints for: its context is
rendered compactly (:func:`compact_text`), so the budget goes to content rather than to
field names, empty fields and one line per short value. ``llm_text`` keeps the ``path:
value`` form whatever the block looks like: changing it would move retrieval.
"""

from __future__ import annotations

from typing import Any, Literal

# The model reads at most 256 tokens; keep a generous margin for keyword extraction.
MAX_LLM_TEXT_CHARS = 8000


def context_as_text(context: Any, *, limit: int = MAX_LLM_TEXT_CHARS) -> str:
    lines: list[str] = []
    size = 0
    for line in _lines(context, ""):
        lines.append(line)
        size += len(line) + 1
        if size >= limit:
            break
    return "\n".join(lines)[:limit]


def _lines(value: Any, path: str) -> list[str]:
    if isinstance(value, dict):
        out: list[str] = []
        for key, item in value.items():
            out.extend(_lines(item, f"{path}.{key}" if path else str(key)))
        return out
    if isinstance(value, list):
        if all(not isinstance(item, dict | list) for item in value):
            return [f"{path}: {', '.join(_scalar(item) for item in value)}"] if value else []
        out = []
        for index, item in enumerate(value):
            out.extend(_lines(item, f"{path}[{index}]"))
        return out
    return [f"{path}: {_scalar(value)}" if path else _scalar(value)]


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def transformed_as_text(outputs: dict[str, Any], *, limit: int = MAX_LLM_TEXT_CHARS) -> str:
    """A transform's outputs: strings as they are, anything else as ``key: value`` lines."""
    lines = []
    for key, value in outputs.items():
        lines.append(
            value if isinstance(value, str) else context_as_text({key: value}, limit=limit)
        )
    return "\n".join(line for line in lines if line)[:limit]


def build_llm_text(
    title: str, description: str | None, context: dict[str, Any], *, transformed: bool = False
) -> str:
    """``transformed``: ``context`` is a transform's output (``mode: replace``)."""
    parts = [title.strip()]
    if description and description.strip():
        parts.append(description.strip())
    body = transformed_as_text(context) if transformed else context_as_text(context)
    if body:
        parts.append(body)
    return "\n".join(parts)[:MAX_LLM_TEXT_CHARS]


# Keys whose value is the record's content: the first one present is shown without its name.
CONTENT_KEYS = ("text", "content", "message", "body", "summary")
# Keys that only say their value is a date or a time, which a value with digits shows: the
# value is shown without its name.
WHEN_KEYS = frozenset({"date", "time", "datetime", "timestamp", "when"})
# A ``path: value`` line at most this long joins the other short ones on one line.
MAX_SHORT_LINE = 60
SHORT_SEPARATOR = " · "


def compact_text(context: Any, *, limit: int = MAX_LLM_TEXT_CHARS, title: str | None = None) -> str:
    """A context without hints as a reader needs it: no empty field (null, "", [], {}); a
    context of one text field is that text; the first content key (``text``, ``content``,
    ...) is unlabelled, and so is a date or time under a name that only says it is one
    (``date``, ``timestamp``, ...); short ``path: value`` lines share one line, joined by
    " · " (``8 May 2023 · mood: calm``); longer ones follow in order. A top-level field
    that says the record's ``title`` (``speaker: Caroline`` in a record titled "Caroline")
    leads the body unlabelled, so the header need not show the title. When nothing is
    longer than a short line but the content, and the content is one line, it all is one
    line (``Caroline · 8 May 2023 · I went to a support group.``): a record of one
    line shares its header with the one-line records of its schema next to it."""
    lead, pruned = _title_field(_pruned(context), title)
    only = _only_leaf(pruned)
    if isinstance(only, str):
        return SHORT_SEPARATOR.join([*lead, only])[:limit]
    if not isinstance(pruned, dict):
        return "" if pruned is None else "\n".join(_lines(pruned, ""))[:limit]
    content = next((k for k in CONTENT_KEYS if isinstance(pruned.get(k), str)), None)
    short: list[str] = [*lead]
    rest: list[str] = []
    for key, value in pruned.items():
        if key == content:
            rest.append(value)
            continue
        if _says_when(key, value):
            short.append(value)
            continue
        for line in _lines(value, str(key)):
            (short if _is_short(line) else rest).append(line)
    if content is not None and rest == [pruned[content]] and "\n" not in rest[0]:
        return SHORT_SEPARATOR.join([*short, *rest])[:limit]
    head = [SHORT_SEPARATOR.join(short)] if short else []
    return "\n".join(head + rest)[:limit]


def body_text(
    context: dict[str, Any],
    source: Literal["instance", "schema", "none"],
    replaced: bool,
    title: str | None = None,
) -> str:
    """A record's block body, from its context as its hints (``source``) left it."""
    if source == "none":
        return compact_text(context, title=title)
    return transformed_as_text(context) if replaced else context_as_text(context)


def _pruned(value: Any) -> Any:
    """``value`` without empty fields or list items, recursively (None when nothing is left):
    a blank field tells a reader nothing and costs tokens."""
    if isinstance(value, dict):
        kept = {k: v for k, v in ((k, _pruned(v)) for k, v in value.items()) if v is not None}
        return kept or None
    if isinstance(value, list):
        items = [v for v in (_pruned(item) for item in value) if v is not None]
        return items or None
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    return value


def _title_field(value: Any, title: str | None) -> tuple[list[str], Any]:
    """The value of the first top-level text field that says ``title`` (as a one-item
    list, or none) and ``value`` without it: a dict of several fields only."""
    wanted = (title or "").strip().casefold()
    if not wanted or not isinstance(value, dict) or len(value) < 2:
        return [], value
    for key, item in value.items():
        if isinstance(item, str) and item.strip().casefold() == wanted and _is_short(item):
            return [item.strip()], {k: v for k, v in value.items() if k != key}
    return [], value


def _only_leaf(value: Any) -> Any:
    """The only scalar inside nested one-field dicts (``{"a": {"text": "hi"}}``), or None."""
    while isinstance(value, dict) and len(value) == 1:
        value = next(iter(value.values()))
    return None if isinstance(value, dict | list) else value


def _says_when(key: str, value: Any) -> bool:
    return (
        key.casefold() in WHEN_KEYS
        and isinstance(value, str)
        and _is_short(value)
        and any(c.isdigit() for c in value)
    )


def _is_short(line: str) -> bool:
    return len(line) <= MAX_SHORT_LINE and "\n" not in line
