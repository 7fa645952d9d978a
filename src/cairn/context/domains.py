"""A tenant's domains (``context.domains.v1``): labels for records and a classifier for
triggers, deterministic and without a model call, so that a label can be explained and a
test can pin it.

A domain scores a text from three kinds of evidence, each in 0..1:

- **tags**: the record carries one of the domain's ``tags`` or ``domain:<name>``: 1, certain;
- **trigger words**: ``n`` distinct triggers (words or phrases) found in the text, matched
  case-insensitively on whole words after a light stemming (plural ``-s``/``-es``, ``-ing``,
  ``-ed``): ``words = 1 - 0.5**n`` (one trigger 0.5, two 0.75, three 0.875);
- **examples**: ``c`` = cosine of the text's embedding to the unit centroid of the embeddings
  of the domain's example sentences: ``examples = clamp((c - 0.2) / 0.5, 0, 1)``. MiniLM puts
  unrelated text at 0-0.2 from such a centroid (0 here) and close paraphrases at 0.6-0.8
  (0.8 and above).

``score = 1`` when tagged, else ``1 - (1 - words) * (1 - examples)``: either kind alone can
carry a domain, and both together raise it. ``classify`` takes the best score (ties: the
first name in alphabetical order); its confidence is the margin over the runner-up.
``labels`` (what a record is stored with) are the explicitly tagged domains plus the best
ones by content (words and examples, tags aside) when their score is at least
:data:`LABEL_FLOOR`.

A trigger or record these leave unplaced is classified with the votes of its nearest labelled
records as well (context.neighbours).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from cairn.context.neighbours import (
    NEIGHBOUR_LABEL_FLOOR,
    Neighbour,
    combined,
    neighbour_evidence,
    neighbour_votes,
)
from cairn.errors import InvalidInput

DOMAINS_SCHEMA = "context.domains.v1"
TAG_PREFIX = "domain:"
ANY_DOMAIN = "*"
LABEL_FLOOR = 0.3
DEFAULT_MIN_CONFIDENCE = 0.1
EXAMPLE_BASE = 0.2  # cosine to a centroid that means "unrelated"
EXAMPLE_SPAN = 0.5  # cosine above the base that counts as a full match
MAX_TEXT_CHARS = 32_000  # trigger words are looked for in this much of the text
MAX_EVIDENCE = 12

_WORD = re.compile(r"[^\W_]+")


@lru_cache(maxsize=65_536)  # words repeat: a cached stem is a dictionary look-up
def stem(word: str) -> str:
    """A light, symmetric stemmer: the same function on triggers and text keeps them equal."""
    if len(word) > 4 and word.endswith(("xes", "ches", "shes", "sses")):
        word = word[:-2]
    elif len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def normalized(text: str) -> str:
    """The text as space-separated stems, padded so that ``f" {phrase} " in`` it matches
    whole words only."""
    words = _WORD.findall(text[:MAX_TEXT_CHARS].casefold())
    return " " + " ".join(map(stem, words)) + " "


@dataclass(frozen=True, slots=True, eq=False)
class Domain:
    name: str
    triggers: Mapping[str, str]  # stemmed phrase -> the trigger as written
    tags: frozenset[str]
    isolated_from: frozenset[str]
    half_life_days: float | None = None
    centroid: np.ndarray | None = None  # unit length; None without examples


@dataclass(frozen=True, slots=True)
class Classification:
    domain: str | None
    confidence: float
    scores: dict[str, float]
    evidence: dict[str, list[str]]


class DomainSet:
    """One tenant's domains at one definition ``version`` (the definition's checksum)."""

    def __init__(
        self,
        domains: Sequence[Domain],
        *,
        version: str,
        min_confidence: float = DEFAULT_MIN_CONFIDENCE,
    ) -> None:
        self.domains = tuple(sorted(domains, key=lambda d: d.name))
        self.version = version
        self.min_confidence = min_confidence
        self._by_name = {domain.name: domain for domain in self.domains}
        # Each domain's one-word triggers as a set, and its phrases padded to match whole
        # words: what content_scores looks for.
        self._triggers = [
            (
                frozenset(p for p in domain.triggers if " " not in p),
                tuple(f" {p} " for p in domain.triggers if " " in p),
            )
            for domain in self.domains
        ]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._by_name)

    def classify(
        self, text: str, tags: Iterable[str] = (), embedding: Sequence[float] | None = None
    ) -> Classification:
        return _ranked(*self._scores(text, frozenset(tags), _unit(embedding)))

    def placed(self, verdict: Classification) -> bool:
        """Confident enough to isolate by (the neighbours are asked when it is not)."""
        return verdict.domain is not None and verdict.confidence >= self.min_confidence

    def with_neighbours(
        self, verdict: Classification, neighbours: Sequence[Neighbour]
    ) -> Classification:
        """``verdict`` with the neighbours' votes combined into its scores."""
        votes = neighbour_votes(neighbours, self._by_name)
        if not votes:
            return verdict
        scores = combined(verdict.scores, votes)
        evidence = {
            name: [*neighbour_evidence(name, votes, neighbours), *found][:MAX_EVIDENCE]
            for name, found in verdict.evidence.items()
        }
        return _ranked(scores, evidence)

    def labels(
        self,
        text: str,
        tags: Iterable[str] = (),
        embedding: Sequence[float] | None = None,
        neighbours: Sequence[Neighbour] = (),
    ) -> tuple[str, ...]:
        """What a record is stored with; ``neighbours`` only count when the tags and the
        content give no label."""
        tag_set = frozenset(tags)
        explicit = {d.name for d in self.domains if _tagged(d, tag_set)}
        scores, _ = self._scores(text, frozenset(), _unit(embedding))  # by content alone
        found = explicit | _best(scores, LABEL_FLOOR)
        if not found and neighbours:
            votes = neighbour_votes(neighbours, self._by_name)
            found = _best(combined(scores, votes), NEIGHBOUR_LABEL_FLOOR)
        return tuple(sorted(found))

    def content_scores(self, texts: Sequence[str], unit: np.ndarray | None = None) -> np.ndarray:
        """The scores by content (words, examples; no tags) of many texts at once, a row per
        text and a column per domain of :attr:`names`: ``classify``'s scores without its
        evidence. ``unit``: the texts' unit embeddings, a row each (zero rows: none)."""
        words = np.zeros((len(texts), len(self.domains)), dtype=np.float32)
        if any(domain.triggers for domain in self.domains):
            for row, text in enumerate(texts):
                found = normalized(text)
                tokens = frozenset(found.split())
                for column, (single, phrases) in enumerate(self._triggers):
                    matched = len(single & tokens) + sum(p in found for p in phrases)
                    words[row, column] = 1.0 - 0.5**matched
        by_examples = np.zeros_like(words)
        held = [(n, d.centroid) for n, d in enumerate(self.domains) if d.centroid is not None]
        present = [n for n, _ in held]
        if unit is not None and held and len(texts):
            centroids = np.stack([vector for _, vector in held]).astype(np.float32)
            cosines = unit.astype(np.float32) @ centroids.T
            present_unit = np.any(unit != 0.0, axis=1)[:, None]
            scaled = np.clip((cosines - EXAMPLE_BASE) / EXAMPLE_SPAN, 0.0, 1.0)
            by_examples[:, present] = np.where(present_unit, scaled, 0.0)
        return 1.0 - (1.0 - words) * (1.0 - by_examples)

    def isolated(self, a: str, b: str) -> bool:
        """Symmetric: either domain lists the other (or ``*``) in ``isolated_from``."""
        if a == b:
            return False
        return any(
            domain is not None
            and (other in domain.isolated_from or ANY_DOMAIN in domain.isolated_from)
            for domain, other in ((self._by_name.get(a), b), (self._by_name.get(b), a))
        )

    def exclusive(self, name: str) -> bool:
        """Isolated from every other domain (``isolated_from: ["*"]``): wants only its own."""
        domain = self._by_name.get(name)
        return domain is not None and ANY_DOMAIN in domain.isolated_from

    def half_life_days(self, name: str) -> float | None:
        domain = self._by_name.get(name)
        return None if domain is None else domain.half_life_days

    def _scores(
        self, text: str, tags: frozenset[str], embedding: np.ndarray | None
    ) -> tuple[dict[str, float], dict[str, list[str]]]:
        words = normalized(text) if any(d.triggers for d in self.domains) else ""
        tokens = frozenset(words.split())
        scores: dict[str, float] = {}
        evidence: dict[str, list[str]] = {}
        for domain in self.domains:
            found: list[str] = []
            tagged = sorted(tag for tag in tags if tag in domain.tags or _own_tag(domain, tag))
            found.extend(f"tag {tag}" for tag in tagged)
            matched = [
                written
                for phrase, written in domain.triggers.items()
                if (phrase in tokens if " " not in phrase else f" {phrase} " in words)
            ]
            found.extend(f"trigger {word!r}" for word in matched)
            by_words = 1.0 - 0.5 ** len(matched)
            by_examples = 0.0
            if embedding is not None and domain.centroid is not None:
                cosine = float(np.dot(embedding, domain.centroid))
                by_examples = min(1.0, max(0.0, (cosine - EXAMPLE_BASE) / EXAMPLE_SPAN))
                found.append(f"examples cosine {cosine:.3f}")
            score = 1.0 if tagged else 1.0 - (1.0 - by_words) * (1.0 - by_examples)
            scores[domain.name] = round(score, 4)
            evidence[domain.name] = found[:MAX_EVIDENCE]
        return scores, evidence


def _ranked(scores: dict[str, float], evidence: dict[str, list[str]]) -> Classification:
    """The best score's domain (ties: alphabetical), confident by its margin."""
    ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
    if not ranked or ranked[0][1] <= 0.0:
        return Classification(None, 0.0, scores, evidence)
    runner_up = ranked[1][1] if len(ranked) > 1 else 0.0
    return Classification(ranked[0][0], round(ranked[0][1] - runner_up, 4), scores, evidence)


def _best(scores: Mapping[str, float], floor: float) -> set[str]:
    top = max(scores.values(), default=0.0)
    return {name for name, score in scores.items() if score == top and score >= floor}


def _tagged(domain: Domain, tags: frozenset[str]) -> bool:
    return not tags.isdisjoint(domain.tags) or f"{TAG_PREFIX}{domain.name}" in tags


def _own_tag(domain: Domain, tag: str) -> bool:
    return tag == f"{TAG_PREFIX}{domain.name}"


def _unit(embedding: Sequence[float] | None) -> np.ndarray | None:
    if embedding is None:
        return None
    vector = np.asarray(embedding, dtype=np.float32)
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm > 0.0 else None


def centroid(vectors: Sequence[Sequence[float]]) -> np.ndarray | None:
    """The unit-length mean of the example embeddings (None without examples)."""
    if not vectors:
        return None
    return _unit(np.mean(np.asarray(vectors, dtype=np.float32), axis=0).tolist())


def examples(context: Mapping[str, Any]) -> dict[str, list[str]]:
    """Each domain's example sentences, to embed once per definition version."""
    return {
        item["name"]: list(item.get("examples") or ())
        for item in context.get("domains") or ()
        if item.get("examples")
    }


def parse_domains(
    context: Mapping[str, Any], *, version: str, centroids: Mapping[str, np.ndarray] | None = None
) -> DomainSet:
    """A validated definition (see :func:`check_domains`) as a :class:`DomainSet`."""
    found = centroids or {}
    domains = [
        Domain(
            name=item["name"],
            triggers=_phrases(item.get("triggers") or ()),
            tags=frozenset(item.get("tags") or ()),
            isolated_from=frozenset(item.get("isolated_from") or ()),
            half_life_days=item.get("recency_half_life_days"),
            centroid=found.get(item["name"]),
        )
        for item in context.get("domains") or ()
    ]
    minimum = context.get("min_confidence", DEFAULT_MIN_CONFIDENCE)
    return DomainSet(domains, version=version, min_confidence=float(minimum))


def _phrases(triggers: Iterable[str]) -> dict[str, str]:
    """Stemmed phrase -> the trigger as written; a trigger with no word in it never matches."""
    stemmed = ((normalized(trigger).strip(), trigger) for trigger in triggers)
    return {phrase: trigger for phrase, trigger in stemmed if phrase}


def check_domains(context: Mapping[str, Any]) -> None:
    """What the JSON Schema cannot say: names are unique and ``isolated_from`` names a
    defined domain (or ``*``). Raises 422 with the path of the first problem."""
    items = context.get("domains") or ()
    seen: dict[str, int] = {}
    for index, item in enumerate(items):
        if item["name"] in seen:
            _refuse(
                f"domains[{index}].name", f"{item['name']!r} is already domain {seen[item['name']]}"
            )
        seen[item["name"]] = index
    for index, item in enumerate(items):
        for position, other in enumerate(item.get("isolated_from") or ()):
            if other != ANY_DOMAIN and other not in seen:
                _refuse(
                    f"domains[{index}].isolated_from[{position}]",
                    f"{other!r} is not a defined domain",
                )


def _refuse(path: str, message: str) -> None:
    full = f"context.{path}"
    raise InvalidInput(f"{full}: {message}", extra={"path": full})
