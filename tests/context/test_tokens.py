"""Token counts with the real o200k/cl100k encodings, built offline from litellm's copies."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import tiktoken
import tiktoken_ext.openai_public as openai_public  # type: ignore[import-untyped]
from hypothesis import given, settings, strategies as st

from cairn.context import (
    TokenCounter,
    TokenizerFilesError,
    encoding_for_model,
    tokens as tokens_module,
)
from cairn.context.tokens import ENCODINGS, ensure_tokenizer_files, load_encoding

SAMPLES = [
    "hello world",
    "tiktoken is great!",
    "Ünïcödé — 日本語のテキスト, emoji 🎉🎉 and\r\nCRLF\n\n\ttabs",
    "def f(x):\n    return x ** 2  # 12345678901234567890",
    "<|endoftext|> is only text here",
]


def test_files_come_from_the_installed_litellm_package(tmp_path: Path) -> None:
    target = ensure_tokenizer_files(tmp_path / "tok")
    assert sorted(p.name for p in target.iterdir()) == sorted(
        ["9b5ad71b2ce5302211f9c61530b329a4922fc6a4", "fb374d419588a4632f3f557e76b4b70aebbca790"]
    )


def test_copying_is_idempotent_and_repairs_a_damaged_copy(tmp_path: Path) -> None:
    ensure_tokenizer_files(tmp_path)
    o200k = tmp_path / ENCODINGS["o200k_base"].file_name
    intact = o200k.read_bytes()
    stamp = o200k.stat().st_mtime_ns
    ensure_tokenizer_files(tmp_path)
    assert o200k.stat().st_mtime_ns == stamp
    o200k.write_bytes(b"garbage")
    ensure_tokenizer_files(tmp_path)
    assert o200k.read_bytes() == intact


def test_counts_offline(tmp_path: Path, no_network: None) -> None:
    cache = ensure_tokenizer_files(tmp_path / "offline")
    o200k = TokenCounter.from_dir(cache)
    cl100k = TokenCounter.from_dir(cache, "cl100k_base")
    assert o200k.encoding_name == "o200k_base"
    assert o200k.count("hello world") == 2  # [24912, 2375]
    assert (
        cl100k.count("tiktoken is great!") == 6
    )  # tiktoken's README: [83, 1609, 5963, 374, 2294, 0]
    assert o200k.count("") == 0


@pytest.mark.parametrize("name", sorted(ENCODINGS))
def test_same_tokens_as_tiktoken_own_constructor(
    name: str, tokenizer_dir: Path, monkeypatch: pytest.MonkeyPatch, no_network: None
) -> None:
    # tiktoken's own definition, fed from the same copy through its documented cache dir.
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tokenizer_dir))
    official = openai_public.ENCODING_CONSTRUCTORS[name]()
    assert official["pat_str"] == ENCODINGS[name].pat_str
    assert official["special_tokens"] == ENCODINGS[name].special_tokens
    reference = tiktoken.Encoding(**official)
    ours = load_encoding(tokenizer_dir, name)
    for text in SAMPLES:
        assert ours.encode_ordinary(text) == reference.encode_ordinary(text)


def test_special_token_text_is_counted_not_rejected(counter: TokenCounter) -> None:
    assert counter.count("<|endoftext|>") > 1


def test_missing_rank_file_fails_without_downloading(tmp_path: Path, no_network: None) -> None:
    with pytest.raises(TokenizerFilesError):
        TokenCounter.from_dir(tmp_path)


def test_missing_litellm_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(TokenizerFilesError, match="litellm"):
        tokens_module.ensure_tokenizer_files(tmp_path)


def test_unknown_encoding_is_refused(tokenizer_dir: Path) -> None:
    with pytest.raises(ValueError, match="unsupported encoding"):
        load_encoding(tokenizer_dir, "p50k_base")


@pytest.mark.parametrize(
    ("model", "encoding"),
    [
        (None, "o200k_base"),
        ("gpt-4o-mini", "o200k_base"),
        ("openai/gpt-4o", "o200k_base"),
        ("gpt-4", "cl100k_base"),
        ("openai/gpt-3.5-turbo", "cl100k_base"),
        ("anthropic/claude-3.5-sonnet", "o200k_base"),
        ("text-davinci-003", "o200k_base"),  # p50k_base is not offered: the default instead
    ],
)
def test_encoding_for_model(model: str | None, encoding: str) -> None:
    assert encoding_for_model(model) == encoding


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=300), limit=st.integers(min_value=0, max_value=60))
def test_truncate_keeps_a_prefix_within_the_limit(
    counter: TokenCounter, text: str, limit: int
) -> None:
    cut = counter.truncate(text, limit)
    assert text.startswith(cut)
    assert counter.count(cut) <= limit
    if counter.count(text) <= limit:
        assert cut == text


def test_repeated_counts_are_remembered(counter: TokenCounter) -> None:
    text = "the same block, counted by every assembly that holds it"
    first = counter.count(text)
    assert counter.count(text) == first
    assert counter._count.cache_info().hits >= 1
