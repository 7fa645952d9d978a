"""Scoring of one on-demand answer against its query, and the tables made from all of them.

Read from the answer only: ``explain.signals.domain.name`` (the trigger's domain),
``explain.selected[*].record_id``/``tokens`` (what is in the context, and its cost), and
``formatted_context`` without its trigger section (the query's own words would otherwise
satisfy its should-contain terms). A term is present when it occurs as a whole word,
case-insensitively ("Rin" is not in "during").
"""

from __future__ import annotations

import re
import statistics
from dataclasses import asdict, dataclass
from typing import Any

from isolation_corpus import Corpus, Query

from cairn.context.model import Section
from cairn.context.render import section_header

TRIGGER_HEADER = section_header(Section.trigger)
TARGET_OFF_DOMAIN_SHARE = 0.01  # issue 16: off-domain tokens at most 1% of context tokens


class FeatureMissing(RuntimeError):
    """The server does not do what is measured: no numbers, and the reason."""


@dataclass(frozen=True, slots=True)
class QueryScore:
    query_id: str
    split: str
    isolate: bool
    budget: int
    expected_domain: str
    domain: str | None  # what the server classified the query as
    confidence: float | None
    isolating: bool  # the server judged the classification confident enough to isolate
    context_tokens: int  # of the selected records (the trigger's own block not counted)
    off_domain_tokens: int  # of records whose true domain is isolated from the expected one
    off_domain_keys: tuple[str, ...]  # those records
    foreign_tokens: int  # of records not in the corpus (bootstrap knowledge, other runs)
    evidence_found: int
    evidence_total: int
    contain_hits: int
    contain_total: int
    violations: tuple[str, ...]  # should-not-contain terms found in the context
    isolated_drops: int  # candidates explain dropped as isolated_domain
    judged_drops: int  # of those, unlabelled records judged to be of an isolated domain
    judged_keys: tuple[str, ...]  # those records (``-`` for one not in the corpus)
    wrongly_judged: int  # of those, corpus records whose true domain is not isolated
    judged_why: tuple[str, ...]  # explain's evidence for each of them
    assembly_ms: float  # timings_ms.total of the answer
    judge_ms: float  # timings_ms.judge: judging the unlabelled candidates (0: not run)

    @property
    def domain_correct(self) -> bool:
        return self.domain == self.expected_domain


def term_present(term: str, text: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(term)}(?!\w)", text, re.IGNORECASE) is not None


def without_trigger(formatted_context: str) -> str:
    return formatted_context.split(TRIGGER_HEADER, 1)[0]


def trigger_domain(explain: dict[str, Any]) -> dict[str, Any] | None:
    """``explain.signals.domain`` (None: no domain defined or none scored); FeatureMissing
    when the server reports no such signal at all."""
    signals = explain.get("signals")
    if not isinstance(signals, dict) or "domain" not in signals:
        raise FeatureMissing(
            "explain has no signals.domain: this Cairn does not classify queries into domains "
            "(issue 16's signals stage is not in the server measured)"
        )
    domain = signals["domain"]
    return domain if isinstance(domain, dict) else None


def score_answer(
    query: Query,
    answer: dict[str, Any],
    *,
    isolate: bool,
    budget: int,
    corpus: Corpus,
    keys_by_id: dict[str, str],
) -> QueryScore:
    explain = answer["explain"]
    domain = trigger_domain(explain) or {}
    selected = [s for s in explain["selected"] if s.get("section") != Section.trigger.value]
    keys = [keys_by_id.get(item["record_id"]) for item in selected]
    tokens = _tokens_by_kind(query, corpus, selected, keys)
    text = without_trigger(answer["formatted_context"])
    judged_out = sorted(  # by key: record ids, and explain's order by them, differ by run
        (d for d in explain["dropped"] if str(d.get("evidence", "")).startswith("unlabelled")),
        key=lambda d: keys_by_id.get(d["record_id"], "-"),
    )
    judged = [d["record_id"] for d in judged_out]
    return QueryScore(
        query_id=query.id,
        split=query.split,
        isolate=isolate,
        budget=budget,
        expected_domain=query.expected_domain,
        domain=domain.get("name"),
        confidence=domain.get("confidence"),
        isolating=bool(domain.get("isolating")),
        context_tokens=sum(tokens.values()),
        off_domain_tokens=tokens["off"],
        off_domain_keys=tuple(
            key
            for key in keys
            if key is not None
            and corpus.domains.isolated(query.expected_domain, corpus.by_key[key].domain)
        ),
        foreign_tokens=tokens["foreign"],
        evidence_found=sum(key in keys for key in query.evidence),
        evidence_total=len(query.evidence),
        contain_hits=sum(term_present(t, text) for t in query.should_contain),
        contain_total=len(query.should_contain),
        violations=tuple(t for t in query.should_not_contain if term_present(t, text)),
        isolated_drops=sum(d.get("reason") == "isolated_domain" for d in explain["dropped"]),
        judged_drops=len(judged),
        judged_keys=tuple(keys_by_id.get(rid, "-") for rid in judged),
        judged_why=tuple(d["evidence"] for d in judged_out),
        wrongly_judged=sum(
            rid in keys_by_id
            and not corpus.domains.isolated(
                query.expected_domain, corpus.by_key[keys_by_id[rid]].domain
            )
            for rid in judged
        ),
        assembly_ms=float(answer.get("timings_ms", {}).get("total", 0.0)),
        judge_ms=float(answer.get("timings_ms", {}).get("judge", 0.0)),
    )


def _tokens_by_kind(
    query: Query, corpus: Corpus, selected: list[dict[str, Any]], keys: list[str | None]
) -> dict[str, int]:
    """Selected tokens by kind: ``off`` (a corpus record whose true domain is isolated from
    the query's), ``foreign`` (not a corpus record), ``kept`` (the rest)."""
    records = corpus.by_key
    tokens = {"off": 0, "foreign": 0, "kept": 0}
    for item, key in zip(selected, keys, strict=True):
        if key is None:
            kind = "foreign"
        elif corpus.domains.isolated(query.expected_domain, records[key].domain):
            kind = "off"
        else:
            kind = "kept"
        tokens[kind] += item["tokens"]
    return tokens


def summarise(scores: list[QueryScore]) -> dict[str, Any]:
    """One cell of the report: the measures over a group of answers."""
    if not scores:
        return {"queries": 0}
    tokens = sum(s.context_tokens for s in scores)
    off = sum(s.off_domain_tokens for s in scores)
    return {
        "queries": len(scores),
        "domain_accuracy": _pct(sum(s.domain_correct for s in scores), len(scores)),
        "queries_isolating": sum(s.isolating for s in scores),
        "off_domain_token_share": _pct(off, tokens),
        "queries_with_off_domain_tokens": sum(s.off_domain_tokens > 0 for s in scores),
        "foreign_token_share": _pct(sum(s.foreign_tokens for s in scores), tokens),
        "evidence_recall": round(
            100.0 * statistics.fmean(s.evidence_found / s.evidence_total for s in scores), 1
        ),
        "should_contain_hit_rate": _pct(
            sum(s.contain_hits for s in scores), sum(s.contain_total for s in scores)
        ),
        "queries_with_violations": sum(bool(s.violations) for s in scores),
        "violations": sum(len(s.violations) for s in scores),
        "mean_context_tokens": round(statistics.fmean(s.context_tokens for s in scores), 1),
        "isolated_drops": sum(s.isolated_drops for s in scores),
        "judged_drops": sum(s.judged_drops for s in scores),
        "wrongly_judged": sum(s.wrongly_judged for s in scores),
        "median_assembly_ms": round(statistics.median(s.assembly_ms for s in scores), 1),
        "median_judge_ms": round(statistics.median(s.judge_ms for s in scores), 2),
    }


def _pct(part: float, whole: float) -> float:
    return round(100.0 * part / whole, 2) if whole else 0.0


def build_tables(scores: list[QueryScore], splits: list[str]) -> dict[str, Any]:
    """split → isolation on/off → budget → measures (and ``all`` over the splits)."""
    budgets = sorted({s.budget for s in scores})
    tables: dict[str, Any] = {}
    for split in [*splits, "all"]:
        in_split = [s for s in scores if split == "all" or s.split == split]
        tables[split] = {
            mode: {
                str(b): summarise([s for s in in_split if s.isolate == on and s.budget == b])
                for b in budgets
            }
            for mode, on in (("on", True), ("off", False))
        }
    return tables


def as_rows(scores: list[QueryScore]) -> list[dict[str, Any]]:
    return [asdict(s) | {"domain_correct": s.domain_correct} for s in scores]


def label_summary(corpus: Corpus, labels: dict[str, list[str]]) -> dict[str, Any]:
    """How the records were labelled at write time, against their true domain (key → labels).
    ``self_isolated``: records every label of which isolates them from queries of their own
    domain, which isolation would then wrongly drop."""
    by_domain: dict[str, dict[str, int]] = {}
    for record in corpus.records:
        got = labels.get(record.key, [])
        row = by_domain.setdefault(
            record.domain, {"records": 0, "labelled": 0, "true_label": 0, "self_isolated": 0}
        )
        row["records"] += 1
        row["labelled"] += bool(got)
        row["true_label"] += record.domain in got
        row["self_isolated"] += bool(got) and all(
            corpus.domains.isolated(record.domain, label) for label in got
        )
    return by_domain


def by_expected_domain(scores: list[QueryScore]) -> dict[str, Any]:
    """expected domain → isolation on/off → budget → measures, over every split asked."""
    domains = sorted({s.expected_domain for s in scores})
    return {
        domain: build_tables([s for s in scores if s.expected_domain == domain], [])["all"]
        for domain in domains
    }
