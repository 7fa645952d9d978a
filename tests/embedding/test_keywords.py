"""Keyword pointers on plain strings and on real RCRT bootstrap records."""

from __future__ import annotations

import json
from typing import Any

from tests.fixtures_path import FIXTURES

from cairn.embedding import STATE_TAGS, entity_keywords, extract_keywords, tag_pointers

BOOTSTRAP = FIXTURES / "rcrt-bootstrap"


def _record(relative: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((BOOTSTRAP / relative).read_text(encoding="utf-8"))
    return data


def _llm_text(record: dict[str, Any]) -> str:
    # What the write side embeds for a schema without hints: title, description, raw context.
    context = json.dumps(record["context"], separators=(",", ":"))
    return "\n".join([record["title"], record.get("description", ""), context])


def test_tag_pointers_drop_routing_and_state_tags() -> None:
    tags = ["workspace:tools", "Tool", "tool:echo", "approved", "validated", "testing", "tool"]
    assert tag_pointers(tags) == ["tool", "testing"]


def test_state_tags_cover_the_usual_lifecycle() -> None:
    assert {"draft", "approved", "rejected", "pending", "archived", "deprecated"} <= STATE_TAGS


def test_stopwords_short_words_and_numbers_are_dropped() -> None:
    text = "The id is 42 and it was true, null or 3.14 on 2025-11-07 via https or www"
    assert extract_keywords(text) == []


def test_identifiers_stay_whole_and_lend_their_parts() -> None:
    keywords = extract_keywords("Run tool.code.v1 for semantic-search.")
    assert keywords[:2] == ["tool.code.v1", "semantic-search"]
    assert {"semantic", "search", "tool", "code"} <= set(keywords)


def test_frequent_distinctive_words_rank_first() -> None:
    text = "pgvector stores embeddings. Use pgvector with cosine distance. pgvector is fast."
    assert extract_keywords(text)[0] == "pgvector"


def test_common_words_rank_below_rare_ones() -> None:
    assert extract_keywords("using example embeddings")[0] == "embeddings"
    assert extract_keywords("using embed")[0] == "embed"


def test_ties_keep_first_position_and_output_is_deterministic() -> None:
    text = "alpha bravo charlie delta"
    assert extract_keywords(text) == ["charlie", "alpha", "bravo", "delta"]  # longer first
    assert extract_keywords("zulu yoke") == ["zulu", "yoke"]
    assert extract_keywords(text) == extract_keywords(text)


def test_limit_caps_the_result() -> None:
    text = " ".join(f"word{i}x" for i in range(100))
    assert len(extract_keywords(text)) == 24
    assert len(extract_keywords(text, limit=5)) == 5
    assert extract_keywords(text, limit=0) == []


def test_json_escapes_and_ids_are_not_keywords() -> None:
    text = json.dumps({"note": "first line\nsecond \u2192 arrow", "id": "session-1762288119864"})
    keywords = extract_keywords(text)
    assert not any(k.startswith(("nsecond", "u2192")) for k in keywords)
    assert "session-1762288119864" not in keywords
    assert {"second", "arrow", "session"} <= set(keywords)


def test_uuids_and_hashes_are_not_keywords() -> None:
    text = "record 550e8400-e29b-41d4-a716-446655440000 checksum 9f86d081884c7d65"
    assert extract_keywords(text) == ["checksum", "record"]


def test_knowledge_record_yields_domain_keywords() -> None:
    record = _record("knowledge/vector-search-semantic.json")
    keywords = extract_keywords(_llm_text(record))
    assert {"pgvector", "semantic", "vector", "embeddings", "similarity"} <= set(keywords)
    assert not set(keywords) & {"the", "and", "true", "false", "null"}


def test_entity_keywords_put_tag_pointers_first() -> None:
    record = _record("knowledge/vector-search-semantic.json")
    pointers = entity_keywords(record["tags"], _llm_text(record))
    assert pointers[:4] == ["semantic-search", "vector", "embeddings", "search"]
    assert "workspace:knowledge" not in pointers
    assert len(pointers) == len(set(pointers)) <= 32


def test_tool_record_pointers_skip_state_and_routing_tags() -> None:
    record = _record("tools-self-contained/openrouter.json")
    pointers = entity_keywords(record["tags"], _llm_text(record))
    assert pointers[:3] == ["tool", "bootstrap", "llm-integration"]
    assert not {"approved", "validated", "workspace:tools", "tool:openrouter"} & set(pointers)
    assert "openrouter" in pointers


def test_query_and_record_meet_on_shared_keywords() -> None:
    record = _record("knowledge/vector-search-semantic.json")
    pointers = set(entity_keywords(record["tags"], _llm_text(record)))
    query = extract_keywords("How does pgvector semantic search work?")
    assert {"pgvector", "semantic", "search"} <= pointers & set(query)
