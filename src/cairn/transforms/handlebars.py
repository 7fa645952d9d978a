"""Handlebars → Jinja, for the Handlebars subset RCRT's templates use.

Supported: ``{{path}}``, ``{{{path}}}`` and ``{{& path}}`` (nothing is escaped anyway),
``{{#each}}`` (lists and objects, with ``{{else}}``), ``{{#if}}`` / ``{{else if}}`` /
``{{else}}``, ``{{#unless}}``, ``{{#with}}``, ``this``, ``../``, ``@index``, ``@first``,
``@last``, ``@key``, ``@root``, ``.[0]`` and ``.[any key]`` segments, ``.length``, the
helpers ``eq ne gt gte lt lte and or not lookup`` (also as ``(subexpressions)``),
comments, ``~`` whitespace control and Handlebars' rule that a block tag alone on its line
takes the line with it. Anything else (partials, custom helpers, block params, raw blocks)
is a :class:`TranslationError` naming the tag and its line, so it is reported on write.

Inside ``{{#each}}`` a bare name is looked up on the item first and then outside, like
Handlebars' compat mode; at the top level names are the record's context fields.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from cairn.transforms.hb_expr import ExpressionTranslator, Scope, TranslationError

__all__ = ["TranslationError", "looks_like_handlebars", "translate"]

_MARKERS = re.compile(
    r"\{\{\{|\{\{~?\s*(?:[#/^!>&]|else\b)"
    r"|\{\{[^}]*(?:@(?:index|key|first|last|root)\b|\bthis\b|\.\[|\.\./)"
    r"|\{\{~?\s*(?:eq|ne|gt|gte|lt|lte|and|or|lookup)\s"
)
_JINJA_OPENERS = re.compile(r"\{[{%#]")
_BLOCK_KINDS = frozenset({"open", "close", "else", "comment"})


def looks_like_handlebars(source: str) -> bool:
    """True when some tag uses Handlebars-only syntax; plain ``{{a.b}}`` reads the same in
    both languages and is left to Jinja."""
    return _MARKERS.search(source) is not None


@dataclass
class _Text:
    text: str


@dataclass
class _Tag:
    kind: str  # output | open | close | else | comment
    body: str
    line: int
    strip_before: bool = False
    strip_after: bool = False


def translate(source: str) -> str:
    items = _scan(source)
    _drop_standalone_lines(items)
    _apply_tildes(items)
    return _Writer(source).write(items)


def _scan(source: str) -> list[_Text | _Tag]:
    items: list[_Text | _Tag] = []
    pos = 0
    while (start := source.find("{{", pos)) >= 0:
        if start > 0 and source[start - 1] == "\\":  # \{{x}} is literal text
            end = _find(source, "}}", start + 2, start)
            items.append(_Text(source[pos : start - 1] + source[start : end + 2]))
            pos = end + 2
            continue
        items.append(_Text(source[pos:start]))
        tag, pos = _read_tag(source, start)
        items.append(tag)
    items.append(_Text(source[pos:]))
    return items


def _find(source: str, needle: str, start: int, opened: int) -> int:
    end = source.find(needle, start)
    if end < 0:
        raise TranslationError(f"unclosed '{{{{' (line {_line(source, opened)})")
    return end


def _line(source: str, offset: int) -> int:
    return source.count("\n", 0, offset) + 1


def _read_tag(source: str, start: int) -> tuple[_Tag, int]:
    line = _line(source, start)
    if source.startswith("{{{{", start):
        raise TranslationError(f"raw blocks are not supported (line {line})")
    if source.startswith("{{{", start):
        end = _find(source, "}}}", start + 3, start)
        tag = _classify("&" + source[start + 3 : end], line)
        return tag, end + 3
    comment = re.match(r"\{\{~?!--", source[start:])
    if comment:
        end = _find(source, "--", start + comment.end(), start)
        end = _find(source, "}}", end, start)
        return _Tag("comment", "", line), end + 2
    end = _find(source, "}}", start + 2, start)
    return _classify(source[start + 2 : end], line), end + 2


def _classify(raw: str, line: int) -> _Tag:
    strip_before, strip_after = raw.startswith("~"), raw.endswith("~")
    body = raw[1 if strip_before else 0 : -1 if strip_after else None].strip()
    head = body[:1]
    if head == "!":
        kind, body = "comment", ""
    elif head == "#":
        kind, body = "open", body[1:].strip()
    elif head == "/":
        kind, body = "close", body[1:].strip()
    elif body == "^" or re.match(r"else\b", body):
        kind, body = "else", body[4:].strip() if body != "^" else ""
    elif head in (">", "^"):
        what = "partials" if head == ">" else "inverse sections"
        raise TranslationError(f"{what} are not supported: {{{{{raw}}}}} (line {line})")
    else:
        kind, body = "output", body[1:].strip() if head == "&" else body
    return _Tag(kind, body, line, strip_before, strip_after)


def _drop_standalone_lines(items: list[_Text | _Tag]) -> None:
    """A block tag or comment alone on its line takes the line with it (Handlebars' rule).

    ``items`` alternates text and tags, starting and ending with text."""
    texts = [item.text if isinstance(item, _Text) else "" for item in items]
    for i, item in enumerate(items):
        if isinstance(item, _Tag) and item.kind in _BLOCK_KINDS and _alone(texts, i):
            before, after = items[i - 1], items[i + 1]
            assert isinstance(before, _Text) and isinstance(after, _Text)
            before.text = re.sub(r"[ \t]*\Z", "", before.text)
            after.text = re.sub(r"\A[ \t]*(?:\r?\n)?", "", after.text, count=1)


def _alone(texts: list[str], i: int) -> bool:
    """Judged on the original text, as Handlebars does, before any line was removed."""
    before, after = texts[i - 1], texts[i + 1]
    first, last = i == 1, i + 2 == len(texts)
    starts = re.search(r"\n[ \t]*\Z", before) or (first and re.fullmatch(r"[ \t]*", before))
    ends = re.match(r"[ \t]*\r?\n", after) or (last and re.fullmatch(r"[ \t]*", after))
    return bool(starts and ends)


def _apply_tildes(items: list[_Text | _Tag]) -> None:
    for i, item in enumerate(items):
        if not isinstance(item, _Tag):
            continue
        before, after = items[i - 1], items[i + 1]
        if item.strip_before and isinstance(before, _Text):
            before.text = before.text.rstrip()
        if item.strip_after and isinstance(after, _Text):
            after.text = after.text.lstrip()


def _quoted(opener: re.Match[str]) -> str:
    """Text that Jinja would read as a tag opener, written as a string expression."""
    return "{{ " + repr(opener.group(0)) + " }}"


class _Writer:
    def __init__(self, source: str) -> None:
        self.source = source
        self.scopes: list[Scope] = []
        self.expressions = ExpressionTranslator(self.scopes)
        self.counter = 0

    def write(self, items: list[_Text | _Tag]) -> str:
        out = []
        for item in items:
            if isinstance(item, _Text):
                out.append(_JINJA_OPENERS.sub(_quoted, item.text))
            else:
                out.append(self._tag(item))
        if self.scopes:
            raise TranslationError(f"{{{{#{self.scopes[-1].kind}}}}} is never closed")
        return "".join(out)

    def _tag(self, tag: _Tag) -> str:
        try:
            if tag.kind == "output":
                return "{{ " + self.expressions.value(tag.body) + " }}"
            if tag.kind == "open":
                return self._open(tag.body)
            if tag.kind == "else":
                return self._else(tag.body)
            if tag.kind == "close":
                return self._close(tag.body)
            return ""
        except TranslationError as error:
            raise TranslationError(f"{error} (line {tag.line})") from None

    def _open(self, body: str) -> str:
        name, _, rest = body.partition(" ")
        value = self.expressions.value(rest) if rest.strip() else ""
        if not value:
            raise TranslationError(f"{{{{#{name}}}}} needs a value")
        self.counter += 1
        var = f"_hb{self.counter}"
        if name == "each":
            self.scopes.append(Scope("each", var))
            return f"{{% for {var}_key, {var} in ({value})|hb_each %}}"
        if name in ("if", "unless"):
            self.scopes.append(Scope(name, None))
            return f"{{% if {value} %}}" if name == "if" else f"{{% if not ({value}) %}}"
        if name == "with":
            self.scopes.append(Scope("with", var))
            return f"{{% with {var} = {value} %}}{{% if {var} %}}"
        raise TranslationError(f"unsupported block helper '#{name}'")

    def _else(self, body: str) -> str:
        if not self.scopes:
            raise TranslationError("{{else}} outside a block")
        scope = self.scopes[-1]
        if body:
            name, _, rest = body.partition(" ")
            if scope.kind not in ("if", "unless") or name not in ("if", "unless"):
                raise TranslationError(f"unsupported {{{{else {body}}}}}")
            value = self.expressions.value(rest)
            return f"{{% elif {value} %}}" if name == "if" else f"{{% elif not ({value}) %}}"
        scope.in_else = True
        return "{% else %}"

    def _close(self, name: str) -> str:
        if not self.scopes:
            raise TranslationError(f"{{{{/{name}}}}} without a matching {{{{#{name}}}}}")
        if self.scopes[-1].kind != name:
            raise TranslationError(f"{{{{/{name}}}}} closes {{{{#{self.scopes[-1].kind}}}}}")
        scope = self.scopes.pop()
        if scope.kind == "each":
            return "{% endfor %}"
        if scope.kind == "with":
            return "{% endif %}{% endwith %}"
        return "{% endif %}"
