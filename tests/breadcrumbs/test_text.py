"""A record's context as text: the compact body of a record without hints, and the
``llm_text`` it is retrieved by, which the compact rendering must not change."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

import pytest

from cairn.breadcrumbs.text import body_text, build_llm_text, compact_text, context_as_text
from cairn.context.blocks import item_block, run_line
from cairn.context.model import Record

NOW = datetime(2026, 1, 1, tzinfo=UTC)

TURN = {"speaker": "Caroline", "date": "8 May 2023", "text": "I went to a support group."}


def test_a_single_text_field_is_its_value() -> None:
    assert compact_text({"question": "When did Caroline go?"}) == "When did Caroline go?"
    assert compact_text({"message": {"text": "nested hello"}}) == "nested hello"


def test_a_single_field_that_is_not_text_keeps_its_name() -> None:
    assert compact_text({"count": 3}) == "count: 3"
    assert compact_text({"done": False}) == "done: false"


@pytest.mark.parametrize("key", ["text", "content", "message", "body", "summary"])
def test_a_content_key_is_unlabelled(key: str) -> None:
    assert compact_text({"author": "Ada", key: "the content"}) == "author: Ada · the content"
    two_lines = compact_text({"author": "Ada", key: "the content\nof it"})
    assert two_lines == "author: Ada\nthe content\nof it"


def test_only_the_first_content_key_loses_its_name() -> None:
    # Two unlabelled texts could not be told apart: the rest keep their names.
    shown = compact_text({"summary": "short form", "body": "the long form of it all"})
    assert shown == "summary: short form · the long form of it all"


@pytest.mark.parametrize("empty", [None, "", "   ", [], {}, {"a": None}, [None, ""]])
def test_empty_fields_are_left_out(empty: Any) -> None:
    assert compact_text({"speaker": "Ada", "mood": empty, "text": "hi"}) == "speaker: Ada · hi"
    assert compact_text({"mood": empty}) == ""


def test_falsy_values_that_say_something_are_kept() -> None:
    assert compact_text({"retries": 0, "ok": False}) == "retries: 0 · ok: false"


def test_short_scalars_share_one_line_before_the_longer_fields() -> None:
    assert compact_text(TURN) == "speaker: Caroline · 8 May 2023 · I went to a support group."
    long = "x" * 80
    shown = compact_text({"notes": long, "id": 7, "tags": ["a", "b"], "text": "body"})
    assert shown.splitlines() == ["id: 7 · tags: a, b", f"notes: {long}", "body"]


@pytest.mark.parametrize("key", ["date", "Time", "timestamp", "datetime", "when"])
def test_a_date_under_a_name_that_only_says_it_is_one_is_unlabelled(key: str) -> None:
    assert compact_text({key: "8 May 2023", "text": "hi"}) == "8 May 2023 · hi"
    # a name that says more, or a value that does not show it is a date, keeps the name
    assert compact_text({"due": "9 May 2023", "text": "hi"}) == "due: 9 May 2023 · hi"
    assert compact_text({key: "later", "text": "hi"}) == f"{key}: later · hi"
    assert (
        compact_text({"meta": {key: "8 May 2023"}, "text": "hi"}) == f"meta.{key}: 8 May 2023 · hi"
    )


def test_nested_fields_keep_their_paths_and_multiline_values_their_own_lines() -> None:
    context = {"name": "calc", "code": {"language": "js", "source": "f(a)\n  return a"}}
    assert compact_text(context) == (
        "name: calc · code.language: js\ncode.source: f(a)\n  return a"
    )


def test_the_compact_text_is_cut_at_the_limit() -> None:
    assert compact_text({"text": "y" * 50}, limit=10) == "y" * 10
    assert len(compact_text({"a": "1", "text": "z" * 50}, limit=12)) == 12


def test_the_body_is_compact_only_without_hints() -> None:
    assert body_text(TURN, "none", False) == compact_text(TURN)
    assert body_text(TURN, "schema", False) == context_as_text(TURN)
    assert body_text({"formatted": "Caroline: hi"}, "instance", True) == "Caroline: hi"


def test_a_compact_body_is_shorter_than_path_value_lines() -> None:
    context = {**TURN, "reply_to": None, "attachments": [], "meta": {}}
    assert len(compact_text(context)) < len(context_as_text(context))


def test_llm_text_keeps_path_value_lines() -> None:
    """What is embedded and keyword-indexed is unchanged by the compact rendering."""
    assert build_llm_text("Caroline", None, {**TURN, "mood": None}) == (
        "Caroline\nspeaker: Caroline\ndate: 8 May 2023\ntext: I went to a support group."
        "\nmood: null"
    )


def test_a_field_that_says_the_title_leads_the_body_unlabelled() -> None:
    turn = {"speaker": "Caroline", "date": "8 May 2023", "text": "I went to the support group."}
    shown = compact_text(turn, title="caroline")
    assert shown == "Caroline · 8 May 2023 · I went to the support group."
    assert compact_text(turn, title="Melanie").startswith("speaker: Caroline")
    assert compact_text({"name": "Caroline"}, title="Caroline") == "Caroline"  # all it says
    assert compact_text({"speaker": "Caroline", "text": "hi"}, title="Caroline") == "Caroline · hi"
    several = compact_text({**turn, "text": "first\nsecond"}, title="Caroline")
    assert several == "Caroline · 8 May 2023\nfirst\nsecond"
    # so the header leaves the title out, and the record is one line: it can join a run
    record = Record(
        id=uuid.uuid4(), owner_id=uuid.uuid4(), schema_name="locomo.turn.v1", title="Caroline",
        tags=(), context=turn, llm_hints=None, created_at=NOW, updated_at=NOW,
    )  # fmt: skip
    block = item_block(record, lambda r: body_text(r.context, "none", False, r.title))
    assert block == f"⟦item · locomo.turn.v1⟧\n{shown}\n"
    assert run_line(record, block) == f"{shown}\n"


def test_a_long_field_keeps_the_content_on_its_own_line() -> None:
    notes = "n" * 80
    shown = compact_text({"speaker": "Ada", "notes": notes, "text": "hi"}, title="Ada")
    assert shown == f"Ada\nnotes: {notes}\nhi"
