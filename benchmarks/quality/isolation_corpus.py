"""The domain-isolation corpus (benchmarks/quality/isolation/): records with their true
domain, the ``context.domains.v1`` definition posted for them, and the queries with their
expected domain, terms and evidence. Loaded and checked here, without a server."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

CORPUS_DIR = Path(__file__).resolve().parent / "isolation"
RECORD_FILES = ("technical.json", "anime.json", "personal.json", "general.json")
SPLITS = ("dev", "test")
MIN_RECORDS, MIN_DOMAINS, MIN_QUERIES = 300, 3, 40
# Echo Brain's own test cases (seed 001, "Context Assembly Integration Test"), verbatim.
SEED_CASES = (
    {
        "text": "How do I fix the PostgreSQL connection pooling issue?",
        "expected_domain": "technical",
        "should_contain": ["database", "connection"],
        "should_not_contain": ["anime", "LoRA", "Tokyo Debt"],
    },
    {
        "text": "What LoRA settings work best for character consistency?",
        "expected_domain": "anime",
        "should_contain": ["LoRA", "checkpoint"],
        "should_not_contain": ["PostgreSQL", "FastAPI"],
    },
)


@dataclass(frozen=True, slots=True)
class CorpusRecord:
    key: str
    domain: str  # the true domain, never posted: the labels must come from the classifier
    schema: str
    title: str
    context: dict[str, Any]
    tags: tuple[str, ...]
    age_days: int

    def body(self, now: datetime, run_tag: str) -> dict[str, Any]:
        """The breadcrumb to post. ``created_at`` cannot be written over the API, so the
        record's age travels in its context (``observed_at``; a message's ``timestamp``)."""
        observed = (now - timedelta(days=self.age_days)).date().isoformat()
        context = {**self.context, "observed_at": observed}
        if self.schema == "user.message.v1":
            context["timestamp"] = observed
        return {
            "schema_name": self.schema,
            "title": self.title,
            "tags": [*self.tags, run_tag],
            "context": context,
        }


@dataclass(frozen=True, slots=True)
class Query:
    id: str
    split: str
    text: str
    expected_domain: str
    should_contain: tuple[str, ...]
    should_not_contain: tuple[str, ...]
    evidence: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Domains:
    """The definition as posted, and the isolation rule of the contract: symmetric, and
    ``"*"`` isolates a domain from every other."""

    definition: dict[str, Any]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(d["name"] for d in self.definition["domains"])

    def _isolated_from(self, name: str) -> set[str]:
        for domain in self.definition["domains"]:
            if domain["name"] == name:
                return set(domain.get("isolated_from", []))
        return set()

    def isolated(self, a: str, b: str) -> bool:
        if a == b:
            return False
        mine, theirs = self._isolated_from(a), self._isolated_from(b)
        return b in mine or "*" in mine or a in theirs or "*" in theirs


@dataclass(frozen=True, slots=True)
class Corpus:
    records: tuple[CorpusRecord, ...]
    queries: tuple[Query, ...]
    domains: Domains

    @property
    def by_key(self) -> dict[str, CorpusRecord]:
        return {r.key: r for r in self.records}

    def split(self, name: str) -> tuple[Query, ...]:
        return self.queries if name == "all" else tuple(q for q in self.queries if q.split == name)


def load_corpus(directory: Path = CORPUS_DIR) -> Corpus:
    records = [
        CorpusRecord(**raw | {"tags": tuple(raw.get("tags", []))})
        for name in RECORD_FILES
        for raw in json.loads((directory / name).read_text())
    ]
    queries = [
        Query(
            **raw | {k: tuple(raw[k]) for k in ("should_contain", "should_not_contain", "evidence")}
        )
        for raw in json.loads((directory / "queries.json").read_text())
    ]
    definition = json.loads((directory / "domains.json").read_text())
    return Corpus(tuple(records), tuple(queries), Domains(definition))


def problems(corpus: Corpus) -> list[str]:
    """Everything that would make the measurement meaningless; empty when the corpus is fit."""
    found: list[str] = []
    keys = Counter(r.key for r in corpus.records)
    found += [f"record key {k!r} appears {n} times" for k, n in keys.items() if n > 1]
    names = set(corpus.domains.names)
    undefined = [r.key for r in corpus.records if r.domain not in names]
    found += [f"{key}: its domain is not defined" for key in undefined]
    for domain in corpus.domains.definition["domains"]:
        unknown = set(domain.get("isolated_from", [])) - names - {"*"}
        if unknown:
            found.append(f"domain {domain['name']!r} is isolated from unknown {sorted(unknown)}")
    if len(corpus.records) < MIN_RECORDS:
        found.append(f"{len(corpus.records)} records, fewer than {MIN_RECORDS}")
    isolating = {r.domain for r in corpus.records if _isolates_any(corpus.domains, r.domain)}
    if len(isolating) < MIN_DOMAINS:
        found.append(f"{len(isolating)} isolated domains with records, fewer than {MIN_DOMAINS}")
    if len(corpus.queries) < MIN_QUERIES:
        found.append(f"{len(corpus.queries)} queries, fewer than {MIN_QUERIES}")
    found += _query_problems(corpus, names)
    return found


def _isolates_any(domains: Domains, name: str) -> bool:
    return any(domains.isolated(name, other) for other in domains.names)


def _query_problems(corpus: Corpus, names: set[str]) -> list[str]:
    found: list[str] = []
    keys = {r.key for r in corpus.records}
    ids = Counter(q.id for q in corpus.queries)
    found += [f"query id {i!r} appears {n} times" for i, n in ids.items() if n > 1]
    for q in corpus.queries:
        found += [f"{q.id}: evidence {k!r} is not a record" for k in q.evidence if k not in keys]
        if not q.evidence:
            found.append(f"{q.id}: no evidence")
        if q.split not in SPLITS:
            found.append(f"{q.id}: split {q.split!r} is neither dev nor test")
        if q.expected_domain not in names:
            found.append(f"{q.id}: expected domain {q.expected_domain!r} is not defined")
    present = [_as_case(q) for q in corpus.queries]
    missing = [case["text"] for case in SEED_CASES if case not in present]
    found += [f"seed 001 case missing: {text!r}" for text in missing]
    return found


def _as_case(query: Query) -> dict[str, Any]:
    return {
        "text": query.text,
        "expected_domain": query.expected_domain,
        "should_contain": list(query.should_contain),
        "should_not_contain": list(query.should_not_contain),
    }
