"""Handlebars expressions (paths, literals, helper calls) as Jinja expressions."""

from __future__ import annotations

import re
from dataclasses import dataclass

HELPERS_2 = {"eq": "==", "ne": "!=", "gt": ">", "gte": ">=", "lt": "<", "lte": "<="}
LITERALS = {"true": "true", "false": "false", "null": "none", "undefined": "none"}
# Names Jinja reads as operators, constants or its own variables: reached through context[].
JINJA_RESERVED = frozenset({
    "and", "or", "not", "in", "is", "if", "else", "true", "false", "none", "True", "False",
    "None", "self", "loop", "caller", "varargs", "kwargs",
})  # fmt: skip
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_SEGMENT = re.compile(r"\[([^\]]*)\]|([^./\[\]]+)")
_NOT_IN_NAMES = re.compile(r"[!\"#%&'()*+,;<=>@\\^`{|}~]")


class TranslationError(ValueError):
    """A Handlebars construct outside the supported subset, or malformed syntax."""


@dataclass
class Scope:
    kind: str  # each | with | if | unless
    var: str | None  # the Jinja variable holding `this` (each and with)
    in_else: bool = False


Token = tuple[str, str]  # (kind, text): atom | string | ( | )


class ExpressionTranslator:
    def __init__(self, scopes: list[Scope]) -> None:
        self.scopes = scopes

    def value(self, source: str) -> str:
        """``path``, a literal, or ``helper arg…`` → one Jinja expression."""
        tokens = _tokenize(source)
        if not tokens:
            raise TranslationError("empty expression")
        is_call = len(tokens) > 1 and tokens[0][0] == "atom"
        expression, rest = self._call(tokens) if is_call else self._operand(tokens)
        if rest:
            raise TranslationError(f"unexpected {rest[0][1]!r} in {source.strip()!r}")
        return expression

    def _call(self, tokens: list[Token]) -> tuple[str, list[Token]]:
        kind, name = tokens[0]
        if kind != "atom":
            raise TranslationError(f"expected a helper name, got {name!r}")
        args: list[str] = []
        rest = tokens[1:]
        while rest and rest[0][0] != ")":
            arg, rest = self._operand(rest)
            args.append(arg)
        return _helper(name, args), rest

    def _operand(self, tokens: list[Token]) -> tuple[str, list[Token]]:
        kind, text = tokens[0]
        if kind == "string":
            return repr(text), tokens[1:]
        if kind == "(":
            inner, rest = self._call(tokens[1:])
            if not rest or rest[0][0] != ")":
                raise TranslationError("unclosed '('")
            return inner, rest[1:]
        if kind == ")":
            raise TranslationError("unexpected ')'")
        if "=" in text:
            raise TranslationError(f"hash arguments are not supported: {text!r}")
        return self.path(text), tokens[1:]

    def path(self, atom: str) -> str:
        if atom in LITERALS:
            return LITERALS[atom]
        if _NUMBER.fullmatch(atom):
            return atom
        if atom.startswith("@"):
            return self._data(atom[1:])
        levels = 0
        while atom.startswith("../"):
            levels, atom = levels + 1, atom[3:]
        atom = atom.removeprefix("./")
        segments = _segments(atom)
        scope_var = self._scope_var(levels)
        if atom in (".", "this") or segments[:1] == ["this"]:
            rest = segments[1:]
            if scope_var is None:
                return _access(None, rest) if rest else "context"
            return _access(scope_var, rest)
        if not segments:
            raise TranslationError(f"malformed path {atom!r}")
        if scope_var is None:
            return _access(None, segments)
        head = f"{scope_var}|hb_get({segments[0]!r}, {_access(None, segments[:1])})"
        return _access(f"({head})", segments[1:])

    def _scope_var(self, levels: int) -> str | None:
        """The variable of ``this`` ``levels`` scopes up, None at the top level."""
        context = [s.var for s in self.scopes if s.var is not None and not s.in_else]
        index = len(context) - 1 - levels
        return context[index] if index >= 0 else None

    def _data(self, name: str) -> str:
        head, _, rest = name.partition(".")
        if head == "root":
            return _access(None, _segments(rest)) if rest else "context"
        each = next((s for s in reversed(self.scopes) if s.kind == "each" and not s.in_else), None)
        if each is None or rest:
            raise TranslationError(f"'@{name}' is only available directly inside {{{{#each}}}}")
        data = {
            "index": "loop.index0",
            "first": "loop.first",
            "last": "loop.last",
            "key": f"{each.var}_key",
        }
        if head not in data:
            raise TranslationError(f"unknown data variable '@{name}'")
        return data[head]


def _helper(name: str, args: list[str]) -> str:
    if name in HELPERS_2:
        _arity(name, args, 2)
        return f"({args[0]} {HELPERS_2[name]} {args[1]})"
    if name in ("and", "or"):
        if len(args) < 2:
            raise TranslationError(f"'{name}' needs at least two arguments")
        return "(" + f" {name} ".join(args) + ")"
    if name == "not":
        _arity(name, args, 1)
        return f"(not {args[0]})"
    if name == "lookup":
        _arity(name, args, 2)
        return f"({args[0]})[{args[1]}]"
    raise TranslationError(f"unsupported helper '{name}'")


def _arity(name: str, args: list[str], count: int) -> None:
    if len(args) != count:
        raise TranslationError(f"'{name}' takes {count} argument(s), got {len(args)}")


def _segments(path: str) -> list[str]:
    if not path:
        return []
    segments = []
    pos = 0
    while pos < len(path):
        match = _SEGMENT.match(path, pos)
        if match is None:
            raise TranslationError(f"malformed path {path!r}")
        bad = _NOT_IN_NAMES.search(match.group(2) or "")
        if bad is not None:
            raise TranslationError(f"unexpected {bad.group(0)!r} in {path!r}")
        segments.append(match.group(1) if match.group(1) is not None else match.group(2))
        pos = match.end()
        if pos < len(path) and path[pos] in "./":
            pos += 1
    return segments


def _access(base: str | None, segments: list[str]) -> str:
    """``base`` followed by attribute/item access; with no base the first segment is a
    top-level name."""
    out = base or ""
    for segment in segments:
        plain = _IDENTIFIER.fullmatch(segment) is not None and segment not in JINJA_RESERVED
        if not out:
            out = segment if plain else f"context[{segment!r}]"
        elif segment.isdigit():
            out += f"[{segment}]"
        else:
            out += f".{segment}" if plain else f"[{segment!r}]"
    return out or "context"


def _tokenize(source: str) -> list[Token]:
    tokens: list[Token] = []
    pos = 0
    while pos < len(source):
        char = source[pos]
        if char.isspace():
            pos += 1
        elif char in "()":
            tokens.append((char, char))
            pos += 1
        elif char in "\"'":
            end = source.find(char, pos + 1)
            if end < 0:
                raise TranslationError(f"unclosed string in {source.strip()!r}")
            tokens.append(("string", source[pos + 1 : end]))
            pos = end + 1
        else:
            end = pos
            while end < len(source) and not source[end].isspace() and source[end] not in "()":
                if source[end] == "[":  # [a key with spaces] is one segment
                    close = source.find("]", end)
                    end = close + 1 if close >= 0 else len(source)
                else:
                    end += 1
            tokens.append(("atom", source[pos:end]))
            pos = end
    return tokens
