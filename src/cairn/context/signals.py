"""Task signals: what the trigger says about the context it needs, each with its evidence.

Extracted once per assembly from the trigger's text and tags, deterministically (no LLM):

- ``keywords``: the trigger's keyword pointers (the same ones the semantic source searches by);
- ``files``: paths mentioned (``src/cairn/context/assemble.py``, ``docker-compose.yml``);
- ``modules``: dotted module names mentioned (``cairn.context.render``) and those of the
  Python files mentioned;
- ``domain``: the tenant's domain the trigger falls in, with its confidence (the margin
  over the runner-up), when the tenant defines domains (context.domains);
- ``complexity``: ``easy``, ``normal`` or ``complex`` — an explicit ``complexity:<tier>`` tag
  or ``complexity`` field first, else rules on the other signals (below);
- ``time_sensitive``: the trigger's domain has a recency half-life, or the text asks for
  what is recent ("latest", "today", "this week"...).

Every signal lands in ``explain.signals`` with the evidence that produced it, so a surprising
context can be traced to the word that caused it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

TIERS = ("easy", "normal", "complex")
COMPLEXITY_TAG = "complexity:"
MAX_SIGNALS = 20  # per list: a pasted log must not make the explanation the largest record

# Rules for the tier when nothing states it: many files or a long text make a task complex,
# a short one with no file is easy.
COMPLEX_FILES = 4
COMPLEX_WORDS = 120
EASY_WORDS = 12


def _words(block: str) -> tuple[str, ...]:
    return tuple(block.split())


_EXTENSIONS = _words(
    """
    py pyi ts tsx js jsx mjs cjs go rs java kt rb php c h cc cpp hpp cs swift scala sql sh
    bash zsh ps1 md rst txt json jsonl yaml yml toml ini cfg conf env lock xml html htm css
    scss vue svelte proto graphql gql tf dockerfile ipynb csv parquet onnx
    """
)
# A path: segments joined by '/', or a bare name with a known extension. Leading ./ ../ ~/ or
# / are kept; trailing punctuation of the sentence is not.
_PATH = re.compile(
    r"(?<![\w/.-])"
    r"((?:~|\.{1,2})?/?(?:[\w@.+-]+/)+[\w@.+-]*[\w]"
    r"|[\w.+-]+\.(?:" + "|".join(_EXTENSIONS) + r"))"
    r"(?![\w/])",
    re.IGNORECASE,
)
_MODULE = re.compile(r"(?<![\w/.])([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+)(?![\w/])")
# Not modules: host names and file names, version-like and abbreviation tokens.
_NOT_MODULE_ENDINGS = frozenset({"com", "org", "net", "io", "dev", "ai", "app", *_EXTENSIONS})
_NOT_MODULES = frozenset({"e.g", "i.e", "etc", "vs"})
_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+", re.IGNORECASE)

_TIME_WORDS = re.compile(
    r"\b(latest|newest|recent|recently|currently|current|today|tonight|yesterday|tomorrow"
    r"|right now|this (?:morning|afternoon|evening|week|month|year)"
    r"|last (?:night|week|month|year)|(?:next|upcoming) (?:week|month|meeting|appointment)"
    r"|so far|up to date|still)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class DomainSignal:
    """The trigger's domain: ``name`` None when none scored; ``isolating`` when the
    classification is confident enough for the definition to keep other domains out."""

    name: str | None
    confidence: float
    scores: Mapping[str, float]
    evidence: Mapping[str, Sequence[str]]
    isolating: bool
    half_life_days: float | None = None

    def as_explain(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "confidence": round(self.confidence, 4),
            "isolating": self.isolating,
            "scores": {name: round(score, 4) for name, score in self.scores.items()},
            "evidence": {name: list(items) for name, items in self.evidence.items()},
            "recency_half_life_days": self.half_life_days,
        }


@dataclass(frozen=True, slots=True)
class Signals:
    keywords: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    modules: tuple[str, ...] = ()
    domain: DomainSignal | None = None
    tier: str = "normal"
    tier_evidence: tuple[str, ...] = ()
    time_sensitive: bool = False
    time_evidence: tuple[str, ...] = field(default_factory=tuple)

    def as_explain(self) -> dict[str, Any]:
        return {
            "keywords": list(self.keywords),
            "files": list(self.files),
            "modules": list(self.modules),
            "domain": None if self.domain is None else self.domain.as_explain(),
            "complexity": {"tier": self.tier, "evidence": list(self.tier_evidence)},
            "time_sensitive": {"value": self.time_sensitive, "evidence": list(self.time_evidence)},
        }


def extract_signals(
    text: str,
    tags: Sequence[str],
    keywords: Sequence[str],
    *,
    context: Mapping[str, Any] | None = None,
    domain: DomainSignal | None = None,
) -> Signals:
    """The signals of a trigger whose ``text`` (its llm_text, or a query's) and ``tags`` are
    given; ``keywords`` are its keyword pointers; ``context`` may state the complexity."""
    files = mentioned_files(text)
    modules = mentioned_modules(text, files)
    tier, tier_evidence = complexity_tier(text, tags, context or {}, files)
    time_sensitive, time_evidence = time_sensitivity(text, domain)
    return Signals(
        keywords=tuple(keywords[:MAX_SIGNALS]),
        files=files,
        modules=modules,
        domain=domain,
        tier=tier,
        tier_evidence=tier_evidence,
        time_sensitive=time_sensitive,
        time_evidence=time_evidence,
    )


def mentioned_files(text: str) -> tuple[str, ...]:
    """Paths in ``text``, first mention first (URLs are not files)."""
    found = (match.group(1).rstrip(".") for match in _PATH.finditer(_URL.sub(" ", text)))
    return _first(path for path in found if _is_path(path))


def mentioned_modules(text: str, files: Iterable[str] = ()) -> tuple[str, ...]:
    """Dotted module names in ``text``, then the modules of the Python files in ``files``."""
    named = (
        match.group(1)
        for match in _MODULE.finditer(_URL.sub(" ", text))
        if _is_module(match.group(1))
    )
    from_files = (_module_of(path) for path in files if path.endswith(".py"))
    return _first([*named, *(module for module in from_files if module)])


def complexity_tier(
    text: str, tags: Sequence[str], context: Mapping[str, Any], files: Sequence[str]
) -> tuple[str, tuple[str, ...]]:
    for tag in tags:
        if tag.startswith(COMPLEXITY_TAG) and tag[len(COMPLEXITY_TAG) :] in TIERS:
            return tag[len(COMPLEXITY_TAG) :], (f"tag {tag}",)
    stated = context.get("complexity")
    if isinstance(stated, str) and stated.lower() in TIERS:
        return stated.lower(), (f"context.complexity = {stated}",)
    words = len(text.split())
    if len(files) >= COMPLEX_FILES:
        return "complex", (f"{len(files)} files mentioned (>= {COMPLEX_FILES})",)
    if words >= COMPLEX_WORDS:
        return "complex", (f"{words} words (>= {COMPLEX_WORDS})",)
    if words <= EASY_WORDS and not files:
        return "easy", (f"{words} words (<= {EASY_WORDS}), no file mentioned",)
    return "normal", (f"{words} words, {len(files)} files mentioned",)


def time_sensitivity(text: str, domain: DomainSignal | None) -> tuple[bool, tuple[str, ...]]:
    evidence: list[str] = []
    if domain is not None and domain.name is not None and domain.half_life_days:
        evidence.append(
            f"domain {domain.name} has a recency half-life of {domain.half_life_days:g} days"
        )
    evidence += [
        f'"{word}"' for word in _first(m.group(0).lower() for m in _TIME_WORDS.finditer(text))
    ]
    return bool(evidence), tuple(evidence[:MAX_SIGNALS])


def _is_path(path: str) -> bool:
    if "/" in path:
        # A path has a named segment: not a fraction (1/2), a date (2024/05/01) or "and/or".
        parts = [part for part in path.split("/") if part not in ("", ".", "..", "~")]
        named = [part for part in parts if re.search(r"[A-Za-z]", part)]
        return len(parts) >= 2 and len(named) == len(parts) and not _is_word_pair(parts)
    return True


def _is_word_pair(parts: Sequence[str]) -> bool:
    """``and/or``, ``read/write``, ``he/him``: two short plain words are prose, not a path."""
    return (
        len(parts) == 2
        and all(part.isalpha() and part.islower() for part in parts)
        and all(len(part) <= 6 for part in parts)
    )


def _is_module(name: str) -> bool:
    parts = name.split(".")
    if name.lower() in _NOT_MODULES or parts[-1].lower() in _NOT_MODULE_ENDINGS:
        return False
    # Module paths are lower-case identifiers; "Mr.Smith" or "U.S" are not.
    return all(part.islower() or part.startswith("_") for part in parts if part) and all(
        len(part) > 1 for part in parts
    )


def _module_of(path: str) -> str | None:
    parts = [part for part in path.split("/") if part not in ("", ".", "..", "~")]
    for root in ("src", "lib", "app"):
        if root in parts[:-1]:
            parts = parts[parts.index(root) + 1 :]
            break
    if not parts:
        return None
    parts[-1] = parts[-1].removesuffix(".py")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    if not parts or not all(part.isidentifier() for part in parts):
        return None
    return ".".join(parts)


def _first(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))[:MAX_SIGNALS]
