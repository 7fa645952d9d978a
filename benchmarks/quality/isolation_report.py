"""The isolation benchmark's Markdown, made from its JSON report."""

from __future__ import annotations

from typing import Any

from isolation_corpus import Corpus
from isolation_score import (
    TARGET_OFF_DOMAIN_SHARE,
    QueryScore,
    as_rows,
    build_tables,
    by_expected_domain,
    label_summary,
)

MEASURES = (
    ("domain_accuracy", "domain accuracy (%)"),
    ("queries_isolating", "queries classified confidently enough to isolate"),
    ("off_domain_token_share", "off-domain tokens (% of context tokens)"),
    ("queries_with_off_domain_tokens", "queries with any off-domain tokens"),
    ("evidence_recall", "in-domain evidence recall (%)"),
    ("should_contain_hit_rate", "should-contain hit rate (%)"),
    ("queries_with_violations", "queries with should-not-contain violations"),
    ("violations", "should-not-contain violations"),
    ("foreign_token_share", "tokens of records not in the corpus (%)"),
    ("mean_context_tokens", "mean context tokens"),
    ("isolated_drops", "candidates dropped as isolated_domain"),
    ("judged_drops", "of which unlabelled, judged of an isolated domain"),
    ("wrongly_judged", "of those, of a domain not isolated from the query's"),
    ("median_assembly_ms", "assembly time, median (ms, timings_ms.total)"),
    ("median_judge_ms", "judging unlabelled candidates, median (ms)"),
)


def build_report(
    scores: list[QueryScore],
    splits: list[str],
    corpus: Corpus,
    record_labels: dict[str, list[str]],
    config: dict[str, Any],
) -> dict[str, Any]:
    """The JSON report: the tables by split and by expected domain, the records' labels
    (key → labels, and summed up by true domain), every answer."""
    return {
        "config": config,
        "tables": build_tables(scores, splits),
        "by_expected_domain": by_expected_domain(scores),
        "labels": label_summary(corpus, record_labels),
        "record_labels": record_labels,
        "true_domains": {record.key: record.domain for record in corpus.records},
        "queries": as_rows(scores),
    }


def markdown(report: dict[str, Any]) -> str:
    lines: list[str] = []
    for split, modes in report["tables"].items():
        lines += _split_table(split, modes)
    lines += _target_lines(report)
    lines += _domain_lines(report["by_expected_domain"])
    lines += _label_lines(report["labels"])
    lines += _misclassified_lines(report["queries"])
    lines += _leak_lines(report["queries"], report["record_labels"])
    lines += _judged_lines(report["queries"], corpus_domains(report))
    lines += ["### Setup", "", f"- config: {report['config']}"]
    lines.append(f"- run (s): {report.get('timings')}")
    return "\n".join([*lines, ""])


def _split_table(split: str, modes: dict[str, Any]) -> list[str]:
    budgets = list(modes["on"])
    count = modes["on"][budgets[0]]["queries"]
    columns = [(mode, b) for b in budgets for mode in ("on", "off")]
    lines = [f"### Split `{split}` ({count} queries): isolation on vs off", ""]
    lines.append("| measure | " + " | ".join(f"{m} @ {b}" for m, b in columns) + " |")
    lines.append("|---|" + "---:|" * len(columns))
    for key, label in MEASURES:
        cells = " | ".join(str(modes[m][b].get(key, "-")) for m, b in columns)
        lines.append(f"| {label} | {cells} |")
    return [*lines, ""]


def _target_lines(report: dict[str, Any]) -> list[str]:
    target = 100.0 * TARGET_OFF_DOMAIN_SHARE
    lines = [f"### Target: off-domain tokens <= {target:g}% with isolation on", ""]
    for split, modes in report["tables"].items():
        for budget, cell in modes["on"].items():
            share = cell["off_domain_token_share"]
            verdict = "met" if share <= target else "NOT met"
            lines.append(f"- {split}, {budget} tokens: {share}%: {verdict}")
    return [*lines, ""]


def _domain_lines(by_domain: dict[str, Any]) -> list[str]:
    """Off-domain share and evidence recall per expected domain (all splits asked)."""
    budgets = list(next(iter(by_domain.values()))["on"]) if by_domain else []
    columns = [(mode, b) for b in budgets for mode in ("on", "off")]
    head = " | ".join(f"{m} @ {b}" for m, b in columns)
    lines = ["### By expected domain: off-domain tokens (%) / evidence recall (%)", ""]
    lines += [f"| expected domain (queries) | {head} |", "|---|" + "---:|" * len(columns)]
    for domain, modes in by_domain.items():
        count = modes["on"][budgets[0]]["queries"]
        cells = " | ".join(
            f"{modes[m][b]['off_domain_token_share']} / {modes[m][b]['evidence_recall']}"
            for m, b in columns
        )
        lines.append(f"| {domain} ({count}) | {cells} |")
    return [*lines, ""]


def _label_lines(labels: dict[str, dict[str, int]]) -> list[str]:
    lines = ["### Write-time labels against the true domain", ""]
    lines.append("| true domain | records | labelled | with its true label | self-isolated |")
    lines.append("|---|---:|---:|---:|---:|")
    for domain, row in labels.items():
        lines.append(
            f"| {domain} | {row['records']} | {row['labelled']} | {row['true_label']} "
            f"| {row['self_isolated']} |"
        )
    return [*lines, ""]


def _misclassified_lines(rows: list[dict[str, Any]]) -> list[str]:
    seen: dict[str, dict[str, Any]] = {}
    for row in rows:  # the classification is the same at every budget and mode
        if not row["domain_correct"]:
            seen.setdefault(row["query_id"], row)
    lines = ["### Misclassified queries", ""]
    lines += [
        f"- {r['split']} `{r['query_id']}`: expected {r['expected_domain']}, got "
        f"{r['domain']} (confidence {r['confidence']})"
        for r in seen.values()
    ] or ["- none"]
    return [*lines, ""]


def _leak_lines(rows: list[dict[str, Any]], labels: dict[str, list[str]]) -> list[str]:
    """Which records of isolated domains stayed in with isolation on, and their labels (an
    unlabelled record stays unless judged confidently of an isolated domain; a trigger below
    min_confidence isolates nothing)."""
    lines = ["### Off-domain records in contexts with isolation on", ""]
    for r in rows:
        if r["isolate"] and r["off_domain_keys"]:
            found = ", ".join(
                f"{k} {labels.get(k) or '(unlabelled)'}" for k in r["off_domain_keys"]
            )
            state = "isolating" if r["isolating"] else "not isolating"
            where = f"{r['split']} `{r['query_id']}` @ {r['budget']}"
            lines.append(f"- {where} ({r['domain']}, {state}): {found}")
    return [*lines, "- none"] if len(lines) == 2 else [*lines, ""]


def corpus_domains(report: dict[str, Any]) -> dict[str, str]:
    return dict(report.get("true_domains", {}))


def _judged_lines(rows: list[dict[str, Any]], true_domain: dict[str, str]) -> list[str]:
    """The unlabelled records left out by judgement, with their true domain (``-``: a record
    not in the corpus, such as the bootstrap knowledge)."""
    lines = ["### Unlabelled records judged out with isolation on", ""]
    for r in rows:
        if r["isolate"] and r["judged_keys"]:
            found = ", ".join(
                f"{k} ({true_domain.get(k, 'not in corpus')})" for k in r["judged_keys"]
            )
            lines.append(
                f"- {r['split']} `{r['query_id']}` @ {r['budget']} ({r['domain']}): {found}"
            )
    return [*lines, "- none"] if len(lines) == 2 else [*lines, ""]
