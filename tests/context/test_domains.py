"""The domain classifier (context.domains): deterministic scores from tags, trigger words and
example sentences, and the checks a definition passes on write."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, strategies as st

from cairn.context.domains import (
    LABEL_FLOOR,
    DomainSet,
    centroid,
    check_domains,
    examples,
    parse_domains,
)
from cairn.context.neighbours import NEIGHBOUR_LABEL_FLOOR, Neighbour
from cairn.embedding import OnnxEncoder
from cairn.errors import InvalidInput

ECHO_BRAIN: dict[str, Any] = {
    "domains": [
        {
            "name": "technical",
            "triggers": ["postgresql", "connection pool", "database", "python", "bug"],
            "tags": ["area:infra"],
            "examples": [
                "The database connection times out under load.",
                "How do I configure the PostgreSQL server and its indexes?",
                "The Python service crashes with a stack trace after the deploy.",
            ],
            "isolated_from": ["anime", "personal"],
        },
        {
            "name": "anime",
            "triggers": ["lora", "character consistency", "anime", "comfyui"],
            "examples": [
                "Train a LoRA on the character sheet to keep the face consistent.",
                "The anime frames need the same art style in every scene.",
                "Which sampler and CFG scale give clean line art in ComfyUI?",
            ],
            "isolated_from": ["*"],
            "recency_half_life_days": 14,
        },
        {
            "name": "personal",
            "triggers": ["birthday", "family", "vacation"],
            "examples": ["My sister's birthday party is on Saturday at my parents' house."],
        },
    ],
    "min_confidence": 0.15,
}
PG_QUESTION = "How do I fix the PostgreSQL connection pooling issue?"
LORA_QUESTION = "What LoRA settings work best for character consistency?"


def words_only() -> DomainSet:
    return parse_domains(ECHO_BRAIN, version="v1")


@pytest.mark.parametrize(
    ("question", "expected"), [(PG_QUESTION, "technical"), (LORA_QUESTION, "anime")]
)
def test_echo_brain_cases_by_trigger_words(question: str, expected: str) -> None:
    found = words_only().classify(question)
    assert found.domain == expected
    assert found.confidence >= 0.5
    assert found.scores[expected] == pytest.approx(0.75)  # two triggers: 1 - 0.5**2
    assert any(item.startswith("trigger") for item in found.evidence[expected])


def test_a_phrase_matches_across_light_stemming_on_whole_words_only() -> None:
    domains = words_only()
    assert (
        "trigger 'connection pool'"
        in domains.classify("Connection pools exhausted").evidence["technical"]
    )
    assert domains.classify("the databases grew").scores["technical"] == 0.5
    assert domains.classify("a bugle call").scores["technical"] == 0.0  # not a word of it


def test_an_explicit_tag_labels_with_certainty() -> None:
    domains = words_only()
    assert domains.classify("nothing here", ["area:infra"]).scores["technical"] == 1.0
    assert domains.labels("nothing here", ["domain:personal"]) == ("personal",)
    # An explicit tag and a clear text domain: both labels.
    assert domains.labels(LORA_QUESTION, ["area:infra"]) == ("anime", "technical")


def test_unrelated_text_has_no_domain_and_no_label() -> None:
    domains = words_only()
    found = domains.classify("The weather was mild on Tuesday.")
    assert (found.domain, found.confidence) == (None, 0.0)
    assert domains.labels("The weather was mild on Tuesday.") == ()


def test_confidence_is_the_margin_over_the_runner_up() -> None:
    found = words_only().classify("the postgresql bug in the comfyui plugin")
    assert found.domain == "technical"
    assert found.scores == {"anime": 0.5, "personal": 0.0, "technical": 0.75}
    assert found.confidence == pytest.approx(0.25)


def test_isolation_is_symmetric_and_star_means_every_other_domain() -> None:
    domains = words_only()
    assert domains.isolated("technical", "anime") and domains.isolated("anime", "technical")
    assert domains.isolated("personal", "anime")  # anime: "*"
    assert domains.isolated("technical", "personal")
    assert not domains.isolated("anime", "anime")
    assert domains.half_life_days("anime") == 14
    assert domains.half_life_days("technical") is None


def test_example_similarity_is_rescaled_so_unrelated_text_scores_near_zero() -> None:
    axis = np.eye(4, dtype=np.float32)
    context = {"domains": [{"name": "a", "examples": ["x"]}, {"name": "b", "examples": ["y"]}]}
    domains = parse_domains(context, version="v", centroids={"a": axis[0], "b": axis[1]})
    found = domains.classify("", embedding=[0.9, 0.1, 0.0, 0.0])
    assert found.domain == "a"
    assert found.scores["a"] == 1.0 and found.scores["b"] == 0.0
    assert domains.classify("", embedding=[0.0, 0.0, 1.0, 0.0]).domain is None


@given(st.text(max_size=200), st.lists(st.text(max_size=12), max_size=5))
def test_scores_are_bounded_and_labels_follow_the_floor(text: str, tags: list[str]) -> None:
    domains = words_only()
    found = domains.classify(text, tags)
    assert all(0.0 <= score <= 1.0 for score in found.scores.values())
    assert 0.0 <= found.confidence <= 1.0
    labels = domains.labels(text, tags)
    assert list(labels) == sorted(set(labels))
    if found.domain is not None and found.scores[found.domain] >= LABEL_FLOOR:
        assert found.domain in labels
    assert all(found.scores[name] >= LABEL_FLOOR for name in labels)


WORDS = st.text(alphabet=st.characters(categories=["L", "N"]), min_size=1, max_size=12)


@given(st.lists(WORDS, min_size=1, max_size=12), st.data())
def test_a_trigger_found_in_the_text_matches_in_any_case(
    words: list[str], data: st.DataObject
) -> None:
    start = data.draw(st.integers(0, len(words) - 1))
    end = data.draw(st.integers(start + 1, len(words)))
    trigger = " ".join(words[start:end])
    domains = parse_domains({"domains": [{"name": "d", "triggers": [trigger]}]}, version="v")
    text = " ".join(words)
    shouted = text.upper()  # unless upper-casing changes the letter (Turkish dotless i)
    found = domains.classify(shouted if shouted.casefold() == text.casefold() else text)
    assert found.domain == "d", (trigger, found)
    assert found.evidence["d"] == [f"trigger {trigger!r}"]


def test_a_duplicate_name_is_refused_with_its_path() -> None:
    context = {"domains": [{"name": "a"}, {"name": "b"}, {"name": "a"}]}
    with pytest.raises(InvalidInput) as refused:
        check_domains(context)
    assert refused.value.extra == {"path": "context.domains[2].name"}


def test_isolated_from_an_unknown_domain_is_refused_with_its_path() -> None:
    context = {"domains": [{"name": "a", "isolated_from": ["*", "b", "c"]}, {"name": "b"}]}
    with pytest.raises(InvalidInput) as refused:
        check_domains(context)
    assert refused.value.extra == {"path": "context.domains[0].isolated_from[2]"}
    assert "'c' is not a defined domain" in str(refused.value)


def test_echo_brain_cases_by_example_sentences_alone(model_dir: Path) -> None:
    """With the encoder Cairn runs, and no trigger word to help."""
    encoder = OnnxEncoder(model_dir, threads=2, max_tokens=256)
    by_name = examples(ECHO_BRAIN)
    centroids = {name: centroid(encoder.encode(texts).tolist()) for name, texts in by_name.items()}
    no_words = {"domains": [dict(d, triggers=[]) for d in ECHO_BRAIN["domains"]]}
    domains = parse_domains(no_words, version="v1", centroids=centroids)  # type: ignore[arg-type]
    for question, expected in ((PG_QUESTION, "technical"), (LORA_QUESTION, "anime")):
        (vector,) = encoder.encode([question]).tolist()
        found = domains.classify(question, embedding=vector)
        assert found.domain == expected, found
        assert found.confidence > 0.1, found
    (unrelated,) = encoder.encode(["The train to Lyon leaves at nine."]).tolist()
    assert max(domains.classify("", embedding=unrelated).scores.values()) < 0.25


def test_triggers_in_other_scripts_match_and_one_without_words_never_does() -> None:
    context = {"domains": [{"name": "anime", "triggers": ["アニメ", "Straße", "?!"]}]}
    domains = parse_domains(context, version="v")
    assert domains.classify("新しい アニメ の話").domain == "anime"
    assert domains.classify("STRASSE").evidence["anime"] == ["trigger 'Straße'"]
    assert domains.classify("?! ?!").domain is None


COFFEE = "How do I like my coffee?"  # no trigger word of any domain


def test_neighbours_place_a_trigger_the_words_cannot_and_say_so() -> None:
    domains = words_only()
    alone = domains.classify(COFFEE)
    assert alone.domain is None and not domains.placed(alone)
    near = [
        Neighbour("a", 0.62, ("personal",)),
        Neighbour("b", 0.41, ("personal",)),
        Neighbour("c", 0.30, ("technical",)),
        Neighbour("d", 0.20, ("anime",)),  # at or below the base: no say
    ]
    found = domains.with_neighbours(alone, near)
    assert (found.domain, domains.placed(found)) == ("personal", True)
    assert found.scores["personal"] == pytest.approx(0.53 / 0.58, abs=1e-4)
    assert found.scores["anime"] == 0.0
    assert found.evidence["personal"][:3] == [
        "neighbours 0.914 (2 of 4)",
        "neighbour a cosine 0.620",
        "neighbour b cosine 0.410",
    ]
    assert found.evidence["anime"] == []


def test_a_few_distant_neighbours_count_for_less_than_many_near_ones() -> None:
    domains = words_only()
    one_far = domains.with_neighbours(domains.classify(COFFEE), [Neighbour("a", 0.35, ("anime",))])
    assert one_far.scores["anime"] == pytest.approx(0.2)  # weight 0.1 of the 0.5 that is full
    many_near = [Neighbour(str(i), 0.6, ("anime",)) for i in range(3)]
    assert domains.with_neighbours(domains.classify(COFFEE), many_near).scores["anime"] == 1.0


def test_neighbours_break_no_tie_they_do_not_take_a_side_in() -> None:
    domains = words_only()
    tie = domains.classify("Store the LoRA files in PostgreSQL?")
    assert tie.confidence == 0.0
    both = [Neighbour("a", 0.7, ("anime", "technical")), Neighbour("b", 0.5, ("unknown",))]
    assert not domains.placed(domains.with_neighbours(tie, both))


def test_neighbours_label_a_record_only_when_nothing_else_does_and_they_nearly_agree() -> None:
    domains = words_only()
    agreeing = [Neighbour("a", 0.8, ("personal",)), Neighbour("b", 0.6, ("personal",))]
    split = [*agreeing, Neighbour("c", 0.7, ("anime",))]
    assert domains.labels("The weather was mild.", neighbours=agreeing) == ("personal",)
    assert domains.labels("The weather was mild.", neighbours=split) == ()
    assert domains.labels(PG_QUESTION, neighbours=agreeing) == ("technical",)
    assert domains.labels("The weather was mild.", ["area:infra"], None, agreeing) == ("technical",)


@given(
    st.lists(
        st.tuples(
            st.floats(-1.0, 1.0),
            st.lists(st.sampled_from(["technical", "anime", "personal", "other"]), max_size=3),
        ),
        max_size=12,
    )
)
def test_scores_with_neighbours_stay_bounded_and_labels_need_the_floor(
    raw: list[tuple[float, list[str]]],
) -> None:
    domains = words_only()
    near = [Neighbour(str(i), cosine, tuple(labels)) for i, (cosine, labels) in enumerate(raw)]
    found = domains.with_neighbours(domains.classify(COFFEE), near)
    assert all(0.0 <= score <= 1.0 for score in found.scores.values())
    assert 0.0 <= found.confidence <= 1.0
    for name in domains.labels("The weather was mild.", neighbours=near):
        assert found.scores[name] >= NEIGHBOUR_LABEL_FLOOR
