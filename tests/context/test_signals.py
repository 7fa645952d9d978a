"""Task signals: files, modules, complexity tier and time sensitivity, with evidence."""

from __future__ import annotations

from hypothesis import given, strategies as st

from cairn.context.signals import (
    DomainSignal,
    extract_signals,
    mentioned_files,
    mentioned_modules,
)


def test_paths_and_file_names_are_found_in_order_without_sentence_punctuation() -> None:
    text = (
        "Fix the retry in src/cairn/events/relay.py and docker-compose.yml, then check "
        "./tests/test_up.py. See https://example.com/a/b.py for the idea; 1/2 of it and/or "
        "the date 2024/05/01 are not paths."
    )
    assert mentioned_files(text) == (
        "src/cairn/events/relay.py",
        "docker-compose.yml",
        "./tests/test_up.py",
    )


def test_modules_come_from_dotted_names_and_python_files() -> None:
    text = "cairn.context.render trims; see src/cairn/context/graph.py, not example.com or e.g."
    files = mentioned_files(text)
    assert mentioned_modules(text, files) == ("cairn.context.render", "cairn.context.graph")


def test_an_explicit_tier_wins_over_the_rules() -> None:
    signals = extract_signals("one two three", ["complexity:complex"], [])
    assert (signals.tier, signals.tier_evidence) == ("complex", ("tag complexity:complex",))
    stated = extract_signals("word " * 500, [], [], context={"complexity": "Easy"})
    assert stated.tier == "easy"


def test_the_tier_rules() -> None:
    assert extract_signals("rename a variable", [], []).tier == "easy"
    assert extract_signals("touch a.py b.py c.py d.py", [], []).tier == "complex"
    assert extract_signals("word " * 200, [], []).tier == "complex"
    assert extract_signals("word " * 40 + " in src/app/main.py", [], []).tier == "normal"


def test_time_sensitivity_from_words_and_from_the_domain_half_life() -> None:
    words = extract_signals("What is the latest on the deploy this week?", [], [])
    assert words.time_sensitive
    assert words.time_evidence == ('"latest"', '"this week"')
    assert not extract_signals("How does pooling work?", [], []).time_sensitive
    domain = DomainSignal("personal", 0.4, {"personal": 0.9}, {}, True, half_life_days=14)
    timed = extract_signals("How does pooling work?", [], [], domain=domain)
    assert timed.time_sensitive
    assert "half-life of 14 days" in timed.time_evidence[0]


def test_the_explanation_carries_every_signal() -> None:
    explained = extract_signals("see src/x/y.py today", [], ["kw"]).as_explain()
    assert set(explained) == {
        "keywords", "files", "modules", "domain", "complexity", "time_sensitive",
    }  # fmt: skip
    assert explained["files"] == ["src/x/y.py"] and explained["modules"] == ["x.y"]
    assert explained["time_sensitive"]["value"] is True


@given(st.text(max_size=400), st.lists(st.text(max_size=20), max_size=5))
def test_any_text_yields_bounded_signals(text: str, tags: list[str]) -> None:
    signals = extract_signals(text, tags, [])
    assert signals.tier in ("easy", "normal", "complex")
    assert len(signals.files) <= 20 and len(signals.modules) <= 20
    assert all(f in text for f in signals.files)
