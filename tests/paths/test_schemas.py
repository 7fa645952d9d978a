"""The stored shapes of a debug path and its waypoints, and their schema hints."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cairn.bootstrap import load_records
from cairn.context.definitions import check_definition
from cairn.errors import InvalidInput

BOOTSTRAP = Path(__file__).resolve().parents[2] / "bootstrap" / "schemas"
PATH_ID = "0b8f6a52-8f0e-4d6c-9a6c-2b1f1c1d1e1f"


def path_context(**overrides: Any) -> dict[str, Any]:
    context: dict[str, Any] = {
        "session": "session:s1",
        "status": "active",
        "signature": "AssertionError: assert <n> == <n>",
        "successes": 0,
        "failed_commands": ["pytest -q"],
        "sequence": 1,
        "last_at": "2026-11-26T10:00:00+00:00",
        "started_at": "2026-11-26T10:00:00+00:00",
        "resolved_at": None,
        "trigger_record_id": PATH_ID,
        "kiss_summary": None,
        "root_cause": None,
        "what_fixed_it": None,
        "files": [],
    }
    return context | overrides


def test_a_path_context_passes() -> None:
    check_definition("debug.path.v1", path_context())


def test_an_unknown_status_names_its_path() -> None:
    with pytest.raises(InvalidInput) as raised:
        check_definition("debug.path.v1", path_context(status="maybe"))
    assert raised.value.extra == {"path": "context.status"}


def test_a_waypoint_without_a_type_is_refused() -> None:
    waypoint = {"path_id": PATH_ID, "sequence": 1, "summary": "pytest failed"}
    with pytest.raises(InvalidInput, match="'type' is a required property"):
        check_definition("debug.waypoint.v1", waypoint)


def test_a_waypoint_sequence_starts_at_one() -> None:
    waypoint = {"path_id": PATH_ID, "sequence": 0, "type": "error", "summary": "x"}
    with pytest.raises(InvalidInput) as raised:
        check_definition("debug.waypoint.v1", waypoint)
    assert raised.value.extra == {"path": "context.sequence"}


def test_both_schemas_have_hints_in_the_bootstrap() -> None:
    defined = {
        record.body["context"]["defines_schema"]: record.body for record in load_records(BOOTSTRAP)
    }
    for schema in ("debug.path.v1", "debug.waypoint.v1"):
        assert defined[schema]["llm_hints"]["transform"]["text"]["type"] == "template"
