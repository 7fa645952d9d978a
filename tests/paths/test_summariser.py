"""The LLM summariser's pure parts: the prompt it sends, the reply it accepts, and the
outcome's place in the stored path."""

from __future__ import annotations

import json
import uuid
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import httpx
import openai
import pytest
from pydantic import SecretStr
from tests.paths.test_schemas import path_context

from cairn.config import PathSettings
from cairn.context.definitions import SCHEMAS_DIR, check_definition
from cairn.errors import InvalidInput
from cairn.paths import summariser
from cairn.paths.machine import PathState, Status, Waypoint
from cairn.paths.refinement import awaits_summary
from cairn.paths.store import (
    StoredPath,
    SummaryOutcome,
    path_context as stored_context,
    path_from_context,
)
from cairn.paths.summariser import (
    LlmSummariser,
    SummariserFailed,
    parse_reply,
    path_summariser,
    prompt_of,
)
from cairn.paths.summary import Resolution, WaypointNote

NOW = datetime(2026, 11, 26, 12, 0, tzinfo=UTC)
EXTRACTIVE = Resolution(
    "When KeyError: 'sku': add the key.", "KeyError: 'sku'", "add the key", ("src/cart.py",)
)
REPLY = {"kiss_summary": "When X: do Y.", "root_cause": "X", "what_fixed_it": "Y"}


def _notes(attempts: int) -> list[WaypointNote]:
    notes = [WaypointNote(Waypoint.ERROR, "KeyError: 'sku'", "pytest -q", ("tests/t.py",))]
    notes += [
        WaypointNote(Waypoint.ATTEMPT, f"Edit line {n}", "edit", ("src/cart.py",))
        for n in range(attempts)
    ]
    return [*notes, WaypointNote(Waypoint.SUCCESS, "3 passed", "pytest -q")]


def test_the_prompt_names_the_first_error_the_attempts_the_fix_and_the_files() -> None:
    prompt = prompt_of(_notes(2), EXTRACTIVE)
    assert prompt.splitlines()[0] == "First error: KeyError: 'sku' (`pytest -q`) [tests/t.py]"
    assert "- Edit line 0 (`edit`) [src/cart.py]" in prompt
    assert "What fixed it as recorded: add the key" in prompt
    assert "Root cause as recorded: KeyError: 'sku'" in prompt
    assert prompt.endswith("Files: src/cart.py")


def test_a_long_path_sends_only_its_last_attempts() -> None:
    prompt = prompt_of(_notes(25), EXTRACTIVE)
    assert "(15 earlier attempts left out)" in prompt
    assert "Edit line 14 " not in prompt and "Edit line 15 " in prompt
    assert len(prompt) < 2000


def test_a_reply_in_a_code_fence_is_read() -> None:
    reply = parse_reply(f"```json\n{json.dumps(REPLY)}\n```")
    assert reply.what_fixed_it == "Y"


def test_overlong_fields_are_clipped_to_the_schema() -> None:
    reply = parse_reply(json.dumps(REPLY | {"root_cause": "x" * 5000, "extra": 1}))
    assert len(reply.root_cause) == summariser.MAX_ROOT_CAUSE and reply.root_cause.endswith("…")


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("not json", "invalid JSON: Expecting value"),
        (json.dumps({"kiss_summary": "x", "root_cause": "y"}), "invalid reply: what_fixed_it"),
        (json.dumps(REPLY | {"kiss_summary": "  "}), "invalid reply: kiss_summary"),
        (json.dumps(["a list"]), "invalid reply: reply"),
        (
            json.dumps(REPLY | {"root_cause": "a\u0000b"}),
            "invalid reply: root_cause: Value error, NUL",
        ),
        (
            '{"kiss_summary": "\\ud800", "root_cause": "x", "what_fixed_it": "y"}',
            "invalid reply: kiss_summary: Input should be a valid string",
        ),
    ],
)
def test_an_unusable_reply_fails_with_a_short_reason(content: str, reason: str) -> None:
    with pytest.raises(SummariserFailed) as failed:
        parse_reply(content)
    assert failed.value.reason.startswith(reason)
    assert len(failed.value.reason) <= summariser.MAX_REASON


def test_the_clip_limits_are_the_schemas() -> None:
    schema = json.loads((SCHEMAS_DIR / "debug.path.v1.json").read_text())["properties"]
    assert schema["kiss_summary"]["maxLength"] == summariser.MAX_KISS
    assert schema["root_cause"]["maxLength"] == summariser.MAX_ROOT_CAUSE
    assert schema["what_fixed_it"]["maxLength"] == summariser.MAX_FIX
    assert schema["summariser"]["properties"]["error"]["maxLength"] == summariser.MAX_REASON


def test_unset_url_means_no_summariser() -> None:
    assert path_summariser(PathSettings()) is None
    configured = PathSettings(
        summariser_url="http://127.0.0.1:9/v1",
        summariser_model="m",
        summariser_api_key=SecretStr("k"),
    )
    made = path_summariser(configured)
    assert made is not None and made.model == "m" and made.client.max_retries == 0


def _path(**overrides: Any) -> StoredPath:
    state = PathState(status=Status.RESOLVED, signature="KeyError", sequence=3, last_at=NOW)
    path = StoredPath(uuid.uuid4(), "session:s", state, NOW, uuid.uuid4(), NOW, EXTRACTIVE)
    return replace(path, **overrides)


@pytest.mark.parametrize(
    "outcome",
    [
        {"summariser": SummaryOutcome("llm", NOW, model="m"), "replaced": EXTRACTIVE},
        {"summariser": SummaryOutcome("extractive", NOW, error="HTTP 500")},
    ],
)
def test_an_outcome_round_trips_and_passes_the_schema(outcome: dict[str, Any]) -> None:
    path = _path(**outcome)
    context = stored_context(path)
    check_definition("debug.path.v1", context)
    assert path_from_context(path.id, context) == path
    assert not awaits_summary({"schema_name": "debug.path.v1", "context": context})


def test_a_resolved_path_without_outcome_awaits_one() -> None:
    context = stored_context(_path())
    assert "summariser" not in context
    assert awaits_summary({"schema_name": "debug.path.v1", "context": context})
    assert not awaits_summary({"schema_name": "debug.waypoint.v1", "context": context})


def test_an_unknown_summariser_is_refused() -> None:
    context = path_context(status="resolved", summariser={"by": "magic", "at": NOW.isoformat()})
    with pytest.raises(InvalidInput) as raised:
        check_definition("debug.path.v1", context)
    assert raised.value.extra == {"path": "context.summariser.by"}


@pytest.mark.parametrize(
    "body",
    [
        b"<html>502 from the proxy</html>",
        b'{"foo": 1}',
        b'{"choices": []}',
        b"[1, 2]",
        b'{"choices": [{"message": {"content": 5}}]}',
    ],
)
async def test_a_200_that_is_no_chat_completion_is_a_failure(body: bytes) -> None:
    """The SDK does not validate what it reads, so Cairn does: else an AttributeError would
    fail the step and the redelivered event would ask again."""

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=body, headers={"content-type": "application/json"})

    http = httpx.AsyncClient(transport=httpx.MockTransport(answer))
    client = openai.AsyncOpenAI(base_url="http://llm.test/v1", api_key="k", http_client=http)
    with pytest.raises(SummariserFailed) as failed:
        await LlmSummariser(client, "m", 1.0).refine(_notes(1), EXTRACTIVE)
    assert failed.value.reason == "invalid response: not a chat completion"
