"""Keyword pointers (``entity_keywords``): one function for the write and the read side.

A record's pointers are its plain tags (no ``:``, no state tags) followed by the most
distinctive words of its ``llm_text``. Search extracts keywords from the query text with the
same function, so both sides agree on tokenisation and stopwords.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass


def _words(block: str) -> frozenset[str]:
    return frozenset(block.split())


# Lifecycle states say where a record is in a workflow, not what it is about.
STATE_TAGS: frozenset[str] = _words(
    """
    draft pending in-progress wip todo done resolved approved rejected validated invalid
    active inactive enabled disabled published unpublished archived deprecated obsolete
    deleted expired stale
    """
)

# English function words plus the noise of JSON, markup and URLs.
STOPWORDS: frozenset[str] = _words(
    """
    a about above after again against all also am an and any are aren as at be because
    been before being below between both but by can cannot could couldn did didn do does
    doesn doing don down during each either else etc even ever few for from further had
    hadn has hasn have haven having he her here hers herself him himself his how however
    i if in into is isn it its itself just let like ll me might more most must mustn my
    myself neither no nor not now of off on once only or other ought our ours ourselves
    out over own per please same shall shan she should shouldn so some such than that the
    their theirs them themselves then there these they this those though through thus to
    too under until up upon us very via was wasn we were weren what when where whether
    which while who whom whose why will with within without won would wouldn yet you
    your yours yourself yourselves e.g i.e vs
    true false null none nil undefined nan yes
    http https www com org net html htm xml nbsp amp quot apos
    """
)

# Very common English words: kept, but ranked below rarer ones.
COMMON_WORDS: frozenset[str] = _words(
    """
    use used uses using make makes made get gets got set sets new old one two three first
    last next many much well good better best great see seen look need needs want wants
    work works way ways time times thing things part parts case cases kind able allow
    allows allowed provide provides provided include includes included including based
    example examples following follow follows given give gives take takes call calls
    called return returns returned value values type types name names data information
    info item items list lists object objects string number default description title
    content text key keys field fields note notes add adds added create creates created
    update updates updated show shows run runs running check always never often usually
    really simple different important available current every another
    general specific main end start back level high low long short small large
    """
)


# Words and identifiers: letters/digits, joined by single '.', '_' or '-' inside
# (``tool.code.v1``, ``semantic-search``, ``entity_keywords``); edges never punctuation.
_TOKEN = re.compile(r"[^\W_]+(?:[._-][^\W_]+)*")
_SEPARATOR = re.compile(r"[._-]")
_NUMBERISH = re.compile(r"[\d._-]+")  # 42, 3.14, 1.0.0, 2025-11-07
_HEXISH = re.compile(r"[0-9a-f-]{8,}")  # uuids, hashes
_LONG_DIGITS = re.compile(r"\d{6,}")  # timestamps and ids inside tokens: session-1762288119864
# Escapes left in text rendered as JSON; "\\nfoo" must not become the token "nfoo".
_JSON_ESCAPE = re.compile(r"\\(?:u[0-9a-fA-F]{4}|[nrtbf/\\\"])")
_MIN_LENGTH = 3
_MAX_LENGTH = 40  # longer runs are blobs (base64, minified code), not keywords
_PART_WEIGHT = 0.5  # ``semantic`` counts half when seen inside ``semantic-search``
_LEAD_CHARS = 200  # llm_text starts with title and description
_LEAD_BOOST = 1.25


@dataclass
class _Candidate:
    first: int
    count: float = 0.0
    in_lead: bool = False


def tag_pointers(tags: Iterable[str]) -> list[str]:
    """Plain tags as pointers: lowercased, routing tags (``a:b``) and state tags dropped."""
    out: dict[str, None] = {}
    for tag in tags:
        t = tag.strip().lower()
        if t and ":" not in t and t not in STATE_TAGS:
            out.setdefault(t)
    return list(out)


def extract_keywords(text: str, limit: int = 24) -> list[str]:
    """The ``limit`` most distinctive keywords of ``text``, best first; deterministic.

    Score = (1 + ln frequency) * distinctiveness, where distinctiveness favours longer and
    identifier-like tokens and weighs very common English words down. Equal scores keep the
    order of first appearance.
    """
    if limit <= 0:
        return []
    candidates = _collect(text)
    ranked = sorted(candidates.items(), key=lambda kv: (-_score(kv[0], kv[1]), kv[1].first))
    return [word for word, _ in ranked[:limit]]


def entity_keywords(tags: Iterable[str], llm_text: str, limit: int = 32) -> list[str]:
    """The pointers stored with a record: tag pointers first, then text keywords."""
    out: dict[str, None] = dict.fromkeys(tag_pointers(tags))
    for word in extract_keywords(llm_text, limit=limit):
        out.setdefault(word)
    return list(out)[: max(limit, 0)]


def _collect(text: str) -> dict[str, _Candidate]:
    candidates: dict[str, _Candidate] = {}

    def add(word: str, position: int, weight: float) -> None:
        if not _is_keyword(word):
            return
        candidate = candidates.setdefault(word, _Candidate(first=position))
        candidate.count += weight
        candidate.in_lead = candidate.in_lead or position < _LEAD_CHARS

    cleaned = _JSON_ESCAPE.sub(" ", text).lower()
    for match in _TOKEN.finditer(cleaned):
        token = match.group()
        if _is_noise(token):  # an id's parts are noise too: e29b of a uuid
            continue
        add(token, match.start(), 1.0)
        if _SEPARATOR.search(token):
            for part in _SEPARATOR.split(token):
                add(part, match.start(), _PART_WEIGHT)
    return candidates


def _is_keyword(word: str) -> bool:
    if not _MIN_LENGTH <= len(word) <= _MAX_LENGTH or word in STOPWORDS:
        return False
    return not (_is_noise(word) or _LONG_DIGITS.search(word))


def _is_noise(token: str) -> bool:
    """Numbers, versions, dates, uuids and hashes: neither they nor their parts count."""
    if _NUMBERISH.fullmatch(token):
        return True
    return bool(_HEXISH.fullmatch(token)) and any(c.isdigit() for c in token)


def _score(word: str, candidate: _Candidate) -> float:
    weight = 1.0 + math.log(candidate.count) if candidate.count >= 1 else candidate.count
    weight *= _distinctiveness(word)
    if candidate.in_lead:
        weight *= _LEAD_BOOST
    return round(weight, 6)  # rounding makes near-ties fall back to position, stably


def _distinctiveness(word: str) -> float:
    if word in COMMON_WORDS:
        return 0.35
    # 3 letters → 0.75, 8+ letters → 1.25: longer words are rarer in English.
    value = 0.5 + min(len(word), 8) / 8 * 0.75
    if _SEPARATOR.search(word) or any(c.isdigit() for c in word):
        value *= 1.3  # identifiers such as tool.code.v1 or gpt4 point at one thing
    return value
