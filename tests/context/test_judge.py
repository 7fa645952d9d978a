"""Judging unlabelled candidates (context.judge): the trigger's evidence — words, examples,
the votes of the nearest labelled records in hand — and a drop only on a clear verdict for
an isolated domain."""

from __future__ import annotations

import uuid
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from cairn.context.domains import DomainSet, parse_domains
from cairn.context.judge import (
    JUDGE_FLOOR,
    JUDGE_MARGIN,
    Pool,
    Unlabelled,
    _nearest,
    judge,
    scores,
    verdict_of,
)

DEFINITION: dict[str, Any] = {
    "domains": [
        {"name": "anime", "triggers": ["lora", "checkpoint"], "isolated_from": ["technical"]},
        {"name": "personal", "triggers": ["dentist"], "isolated_from": ["*"]},
        {"name": "technical", "triggers": ["postgresql", "connection pool"]},
    ],
    "min_confidence": 0.1,
}
AXES = {"anime": 0, "personal": 1, "technical": 2}  # each domain's records point one way
DIMS = 4


def unit(*components: float) -> np.ndarray:
    vector = np.zeros(DIMS, dtype=np.float32)
    vector[: len(components)] = components
    return vector / np.linalg.norm(vector)


def towards(name: str, lean: float = 0.0, other: str | None = None) -> np.ndarray:
    """A vector along ``name``'s axis, leaning ``lean`` towards ``other``'s (or the free
    fourth axis)."""
    vector = np.zeros(DIMS, dtype=np.float32)
    vector[AXES[name]] = 1.0
    vector[AXES[other] if other else 3] = lean
    return vector / np.linalg.norm(vector)


def domains(**centroids: np.ndarray) -> DomainSet:
    return parse_domains(DEFINITION, version="v1", centroids=centroids)


def pool_of(*records: tuple[str, np.ndarray]) -> Pool:
    return Pool.of({uuid.uuid4(): ((name,), vector) for name, vector in records})


def candidate(text: str = "Notes from Tuesday", vector: np.ndarray | None = None) -> Unlabelled:
    return Unlabelled(uuid.uuid4(), text, vector)


ANIME_POOL = pool_of(
    *[("anime", towards("anime", 0.3)) for _ in range(4)],
    ("technical", towards("technical", 0.2)),
)


def test_a_candidate_among_records_of_an_isolated_domain_is_judged_out_and_says_why() -> None:
    near_anime = candidate(vector=towards("anime", 0.4))
    (found,) = judge(domains(), frozenset({"anime"}), [near_anime], ANIME_POOL)
    assert (found.record_id, found.domain) == (near_anime.record_id, "anime")
    assert found.confidence >= JUDGE_MARGIN
    assert found.evidence.startswith("unlabelled, judged anime by neighbours ")
    assert "(4 of 5)" in found.evidence and "margin" in found.evidence


def test_a_candidate_of_a_domain_that_is_not_isolated_stays() -> None:
    near_anime = candidate(vector=towards("anime", 0.4))
    assert judge(domains(), frozenset({"personal"}), [near_anime], ANIME_POOL) == []
    assert judge(domains(), frozenset(), [near_anime], ANIME_POOL) == []


def test_a_candidate_between_domains_stays() -> None:
    between = candidate(vector=unit(1.0, 0.0, 1.0))  # as near the technical record as the anime
    split = pool_of(*[("anime", towards("anime")) for _ in range(2)],
                    *[("technical", towards("technical")) for _ in range(2)])  # fmt: skip
    verdict = verdict_of(domains(), between, _nearest([between], split)[0])
    assert verdict.confidence < JUDGE_MARGIN
    assert judge(domains(), frozenset({"anime", "technical"}), [between], split) == []


def test_weak_evidence_is_no_reason_to_drop() -> None:
    far = candidate(vector=unit(0.35, 0.0, 0.0, 1.0))  # one anime record, cosine ~0.33
    weak = pool_of(("anime", towards("anime")))
    verdict = verdict_of(domains(), far, _nearest([far], weak)[0])
    assert verdict.domain == "anime" and verdict.scores["anime"] < JUDGE_FLOOR
    assert judge(domains(), frozenset({"anime"}), [far], weak) == []


def test_the_words_and_examples_count_as_for_a_trigger() -> None:
    lora = candidate("Which LoRA checkpoint did we keep?", towards("personal"))
    assert [j.domain for j in judge(domains(), frozenset({"anime"}), [lora], Pool.of({}))] == [
        "anime"
    ]
    by_example = candidate(vector=towards("anime", 0.1))
    (found,) = judge(
        domains(anime=towards("anime")), frozenset({"anime"}), [by_example], Pool.of({})
    )
    assert "examples cosine" in found.evidence


def test_without_a_vector_only_the_words_speak() -> None:
    blind = candidate("Notes from Tuesday", None)
    assert judge(domains(), frozenset({"anime"}), [blind], ANIME_POOL) == []


vectors = st.lists(st.floats(-1.0, 1.0, allow_nan=False), min_size=DIMS, max_size=DIMS).filter(
    lambda v: float(np.linalg.norm(v)) > 0.1
)
labels = st.lists(st.sampled_from(["anime", "personal", "technical", "other"]), max_size=2)
texts = st.sampled_from(["", "LoRA checkpoint", "the connection pool", "dentist at nine", "tea"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(texts, vectors), min_size=1, max_size=6),
    st.lists(st.tuples(labels, vectors), max_size=10),
)
def test_the_matrix_scores_are_the_one_by_one_verdicts(
    raw_candidates: list[tuple[str, list[float]]], raw_pool: list[tuple[list[str], list[float]]]
) -> None:
    """``judge`` screens every candidate with :func:`scores` and classifies only those it
    shows as possibly out: the two must agree."""
    chosen = domains(anime=towards("anime"), technical=towards("technical", 0.5))
    candidates = [
        candidate(t, np.asarray(v, np.float32) / np.linalg.norm(v)) for t, v in raw_candidates
    ]
    pool = Pool.of(
        {uuid.uuid4(): (tuple(found), np.asarray(v, np.float32) / np.linalg.norm(v))
         for found, v in raw_pool}
    )  # fmt: skip
    matrix = scores(chosen, candidates, pool)
    for row, (one, near) in enumerate(zip(candidates, _nearest(candidates, pool), strict=True)):
        verdict = verdict_of(chosen, one, near)
        for column, name in enumerate(chosen.names):
            assert matrix[row, column] == pytest.approx(verdict.scores[name], abs=2e-3)
    everything = frozenset(chosen.names)
    judged = {j.record_id for j in judge(chosen, everything, candidates, pool)}
    for one, near in zip(candidates, _nearest(candidates, pool), strict=True):
        verdict = verdict_of(chosen, one, near)
        clear = (
            verdict.domain is not None
            and verdict.confidence >= JUDGE_MARGIN
            and verdict.scores[verdict.domain] >= JUDGE_FLOOR
        )
        assert (one.record_id in judged) == clear


PERSONAL_POOL = pool_of(
    *[("personal", towards("personal", 0.3)) for _ in range(4)],
    ("technical", towards("technical", 0.2)),
)
EVERY_OTHER = frozenset({"anime", "technical"})  # what a personal trigger isolates ("*")


def test_a_domain_isolated_from_everything_keeps_only_what_is_judged_its_own() -> None:
    near_personal = candidate(vector=towards("personal", 0.4))
    between = candidate(vector=unit(0.0, 1.0, 2.4))  # technical, by a small margin
    nowhere = candidate("Notes from Tuesday", None)  # no evidence at all
    found = judge(
        domains(), EVERY_OTHER, [near_personal, between, nowhere], PERSONAL_POOL,
        exclusive="personal",
    )  # fmt: skip
    assert {j.record_id for j in found} == {between.record_id, nowhere.record_id}
    assert all(j.evidence.startswith("unlabelled, not judged personal") for j in found)
    why = {j.record_id: j.evidence for j in found}
    assert "judged no domain" in why[nowhere.record_id]
    assert "judged technical (personal 0.42" in why[between.record_id]


def test_without_an_exclusive_trigger_the_uncertain_stay() -> None:
    between = candidate(vector=unit(0.0, 1.0, 2.4))
    nowhere = candidate("Notes from Tuesday", None)
    assert judge(domains(), EVERY_OTHER, [between, nowhere], PERSONAL_POOL) == []


def test_an_exclusive_trigger_still_gives_the_confident_verdict_for_another_domain() -> None:
    lora = candidate("Which LoRA checkpoint did we keep?", towards("anime"))
    (found,) = judge(domains(), EVERY_OTHER, [lora], PERSONAL_POOL, exclusive="personal")
    assert found.domain == "anime"
    assert found.evidence.startswith("unlabelled, judged anime by ")


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(texts, vectors), min_size=1, max_size=6),
    st.lists(st.tuples(labels, vectors), max_size=10),
)
def test_an_exclusive_trigger_keeps_exactly_the_candidates_whose_verdict_is_its_domain(
    raw_candidates: list[tuple[str, list[float]]], raw_pool: list[tuple[list[str], list[float]]]
) -> None:
    """The matrix screen may pass over only candidates whose verdict is the trigger's."""
    chosen = domains(anime=towards("anime"), personal=towards("personal", 0.5))
    candidates = [
        candidate(t, np.asarray(v, np.float32) / np.linalg.norm(v)) for t, v in raw_candidates
    ]
    pool = Pool.of(
        {uuid.uuid4(): (tuple(found), np.asarray(v, np.float32) / np.linalg.norm(v))
         for found, v in raw_pool}
    )  # fmt: skip
    judged = {
        j.record_id for j in judge(chosen, EVERY_OTHER, candidates, pool, exclusive="personal")
    }
    for one, near in zip(candidates, _nearest(candidates, pool), strict=True):
        assert (one.record_id in judged) == (verdict_of(chosen, one, near).domain != "personal")
