"""The domain-isolation benchmark without a server: its corpus is fit to measure with, and
one answer is scored as the report says (benchmarks/quality/isolation.py)."""

from __future__ import annotations

import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from cairn.context.agents import AGENT_SCHEMA
from cairn.context.definitions import check_definition
from cairn.context.domains import DOMAINS_SCHEMA

# The benchmark's modules import each other as top-level modules.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks" / "quality"))
from isolation import inline_agent
from isolation_corpus import (
    MIN_QUERIES,
    MIN_RECORDS,
    SEED_CASES,
    Corpus,
    CorpusRecord,
    Domains,
    Query,
    load_corpus,
    problems,
)
from isolation_report import build_report, markdown
from isolation_score import (
    TRIGGER_HEADER,
    FeatureMissing,
    build_tables,
    label_summary,
    score_answer,
    term_present,
)

DEFINITION = {
    "domains": [
        {"name": "technical", "isolated_from": ["anime"]},
        {"name": "anime", "isolated_from": ["technical"]},
        {"name": "personal", "isolated_from": ["*"]},
        {"name": "general", "isolated_from": []},
    ]
}


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return load_corpus()


def test_the_corpus_is_fit_to_measure_with(corpus: Corpus) -> None:
    assert problems(corpus) == []
    assert len(corpus.records) >= MIN_RECORDS
    assert len(corpus.queries) >= MIN_QUERIES
    assert {"technical", "anime", "personal"} <= {r.domain for r in corpus.records}
    keys = {r.key for r in corpus.records}
    assert all(set(q.evidence) <= keys for q in corpus.queries)
    texts = {q.text: q for q in corpus.queries}
    for case in SEED_CASES:
        query = texts[case["text"]]
        assert query.expected_domain == case["expected_domain"]
        assert list(query.should_contain) == case["should_contain"]
        assert list(query.should_not_contain) == case["should_not_contain"]


def test_the_definition_is_one_the_server_accepts(corpus: Corpus) -> None:
    check_definition(DOMAINS_SCHEMA, corpus.domains.definition)  # raises 422 otherwise
    agent = {"agent_id": "bench", "context_trigger": {}, **inline_agent(True)}
    check_definition(AGENT_SCHEMA, agent)


def test_both_splits_cover_every_domain_that_isolates(corpus: Corpus) -> None:
    for split in ("dev", "test"):
        domains = {q.expected_domain for q in corpus.split(split)}
        assert {"technical", "anime", "personal"} <= domains, split


def test_most_records_carry_no_domain_tag(corpus: Corpus) -> None:
    """The labels must mostly come from the classifier, not from tags."""
    tagged = [r for r in corpus.records if any(t.startswith("domain:") for t in r.tags)]
    assert len(tagged) <= len(corpus.records) // 20


def test_problems_name_a_missing_evidence_key_and_a_missing_seed_case(corpus: Corpus) -> None:
    broken = Query("q", "dev", "Anything?", "technical", (), (), ("no-such-record",))
    found = problems(Corpus(corpus.records, (broken,), corpus.domains))
    assert "q: evidence 'no-such-record' is not a record" in found
    assert any(p.startswith("seed 001 case missing") for p in found)
    assert any(p.startswith("1 queries, fewer than") for p in found)


def test_isolation_is_symmetric_and_star_isolates_from_all() -> None:
    domains = Domains(DEFINITION)
    assert domains.isolated("technical", "anime") and domains.isolated("anime", "technical")
    assert domains.isolated("general", "personal") and domains.isolated("personal", "technical")
    assert not domains.isolated("technical", "general")
    assert not domains.isolated("personal", "personal")


def test_a_record_posts_its_age_in_its_context() -> None:
    from datetime import UTC, datetime

    record = CorpusRecord("k", "personal", "user.message.v1", "T", {"text": "x"}, ("a",), 3)
    body = record.body(datetime(2026, 11, 26, 8, tzinfo=UTC), "run:1")
    assert body["context"] == {"text": "x", "observed_at": "2026-11-23", "timestamp": "2026-11-23"}
    assert body["tags"] == ["a", "run:1"]
    assert "created_at" not in body


def test_terms_match_whole_words_case_insensitively() -> None:
    assert term_present("LoRA", "the lora loader")
    assert not term_present("Rin", "during the string")
    assert term_present("30%", "cut it by 30%.")
    assert term_present("Tokyo Debt", "Tokyo Debt Desire")


def _small_corpus() -> Corpus:
    records = tuple(
        CorpusRecord(key, domain, "note.v1", key, {}, (), 1)
        for key, domain in [
            ("t1", "technical"),
            ("t2", "technical"),
            ("a1", "anime"),
            ("p1", "personal"),
            ("g1", "general"),
        ]
    )
    query = Query(
        "q1",
        "dev",
        "fix the pool",
        "technical",
        ("pool", "database"),
        ("LoRA", "anime"),
        ("t1", "t2"),
    )
    return Corpus(records, (query,), Domains(DEFINITION))


def _answer(selected: list[tuple[str, int, str]], text: str, name: str | None) -> dict[str, Any]:
    return {
        "formatted_context": text,
        "explain": {
            "signals": {"domain": {"name": name, "confidence": 0.4, "isolating": True}},
            "selected": [
                {"record_id": rid, "tokens": tokens, "section": section}
                for rid, tokens, section in selected
            ],
            "dropped": [{"record_id": str(uuid.uuid4()), "reason": "isolated_domain"}],
        },
    }


def test_an_answer_is_scored_from_explain_and_the_text_without_its_trigger() -> None:
    corpus = _small_corpus()
    ids = {key: str(uuid.uuid4()) for key in ("t1", "t2", "a1", "p1", "g1")}
    text = (
        "⟦section knowledge⟧\n⟦item · note.v1 · t1⟧\nthe pool of the database\n"
        "⟦item · note.v1 · a1⟧\nLoRA strength\n" + TRIGGER_HEADER + "anime words in the query\n"
    )
    selected = [
        (ids["t1"], 100, "knowledge"),
        (ids["a1"], 30, "knowledge"),
        (ids["p1"], 20, "additional"),
        (ids["g1"], 40, "knowledge"),
        (str(uuid.uuid4()), 10, "knowledge"),  # not a corpus record
        (str(uuid.uuid4()), 15, "trigger"),  # the query itself: not context
    ]
    keys_by_id = {record_id: key for key, record_id in ids.items()}
    score = score_answer(
        corpus.queries[0],
        _answer(selected, text, "technical"),
        isolate=True,
        budget=500,
        corpus=corpus,
        keys_by_id=keys_by_id,
    )
    assert score.domain_correct and score.isolating
    assert (score.context_tokens, score.off_domain_tokens, score.foreign_tokens) == (200, 50, 10)
    assert score.off_domain_keys == ("a1", "p1")
    assert (score.evidence_found, score.evidence_total) == (1, 2)
    assert (score.contain_hits, score.contain_total) == (2, 2)
    assert score.violations == ("LoRA",)  # "anime" is only in the trigger section
    assert score.isolated_drops == 1

    cell = build_tables([score], ["dev"])["dev"]["on"]["500"]
    assert cell["off_domain_token_share"] == 25.0
    assert cell["evidence_recall"] == 50.0
    assert cell["queries_with_violations"] == 1
    assert build_tables([score], ["dev"])["dev"]["off"]["500"] == {"queries": 0}


def test_an_answer_without_domain_signals_is_not_scored() -> None:
    corpus = _small_corpus()
    answer = _answer([], "", None)
    del answer["explain"]["signals"]
    with pytest.raises(FeatureMissing, match=r"signals\.domain"):
        score_answer(
            corpus.queries[0], answer, isolate=True, budget=500, corpus=corpus, keys_by_id={}
        )


def test_labels_are_summarised_against_the_true_domain() -> None:
    corpus = _small_corpus()
    labels = {"t1": ["technical"], "t2": ["anime"], "a1": [], "p1": ["personal", "general"]}
    summary = label_summary(corpus, labels)
    assert summary["technical"] == {
        "records": 2,
        "labelled": 2,
        "true_label": 1,
        "self_isolated": 1,
    }
    assert summary["anime"]["labelled"] == 0
    assert summary["personal"]["self_isolated"] == 0  # one label (its own) is not isolated


def test_the_report_has_a_table_per_split_and_the_target_verdict() -> None:
    corpus = _small_corpus()
    ids = {"t1": str(uuid.uuid4()), "a1": str(uuid.uuid4())}
    keys_by_id = {record_id: key for key, record_id in ids.items()}
    selected = [(ids["t1"], 90, "knowledge"), (ids["a1"], 10, "knowledge")]
    scores = [
        score_answer(
            corpus.queries[0],
            _answer(selected[: 2 - isolate], "", "technical"),
            isolate=bool(isolate),
            budget=500,
            corpus=corpus,
            keys_by_id=keys_by_id,
        )
        for isolate in (1, 0)
    ]
    text = markdown(build_report(scores, ["dev"], corpus, {"t1": ["technical"]}, {}))
    assert "### Split `dev` (1 queries): isolation on vs off" in text
    assert "| off-domain tokens (% of context tokens) | 0.0 | 10.0 |" in text
    assert "- dev, 500 tokens: 0.0%: met" in text
    assert "| technical (1) | 0.0 / 50.0 | 10.0 / 50.0 |" in text
    assert "### Off-domain records in contexts with isolation on\n\n- none" in text
