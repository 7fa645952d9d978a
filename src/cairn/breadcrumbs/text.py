"""The text a breadcrumb is embedded and keyword-indexed by (``llm_text``).

Title, description and the context *as an LLM sees it* (after its ``llm_hints``) rendered
as ``path: value`` lines — never the title alone, which is what made every RCRT chat
message embed as "User Message". Text a transform produced (``formatted: "User: hi"``) is
taken as it is, without its key.
"""

from __future__ import annotations

from typing import Any

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
