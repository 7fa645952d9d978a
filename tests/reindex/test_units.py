"""Pure parts of reindex: which schemas a definition write affects, the columns a record
gets, the ``--since`` parsing."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from cairn.context.domains import parse_domains
from cairn.reindex.command import parse_since
from cairn.reindex.enqueue import schemas_to_reindex
from cairn.reindex.record import Prepared, derived_values

HINTS = {"transform": {"x": {"type": "format", "format": "{a}"}}}


def _definition(*schemas: str, hints: Any = HINTS, nested: bool = False) -> dict[str, Any]:
    tags = ["schema:definition", *(f"defines:{name}" for name in schemas)]
    context: dict[str, Any] = {"llm_hints": hints} if nested else {}
    return {
        "schema_name": "schema.def.v1",
        "tags": tags,
        "context": context,
        "llm_hints": None if nested else hints,
    }


def test_a_new_definition_reindexes_what_it_defines() -> None:
    assert schemas_to_reindex(None, _definition("a.v1", "b.v1")) == {"a.v1", "b.v1"}


def test_a_deleted_definition_reindexes_what_it_defined() -> None:
    assert schemas_to_reindex(_definition("a.v1"), None) == {"a.v1"}


def test_same_hints_reindex_only_schemas_added_or_dropped() -> None:
    assert schemas_to_reindex(_definition("a.v1"), _definition("a.v1")) == set()
    assert schemas_to_reindex(_definition("a.v1"), _definition("b.v1")) == {"a.v1", "b.v1"}


def test_changed_hints_reindex_every_defined_schema() -> None:
    other = {"transform": {"y": {"type": "format", "format": "{b}"}}}
    assert schemas_to_reindex(_definition("a.v1"), _definition("a.v1", hints=other)) == {"a.v1"}


def test_hints_in_the_context_count_as_the_definitions() -> None:
    before, after = _definition("a.v1"), _definition("a.v1", nested=True)
    assert schemas_to_reindex(before, after) == set()  # the same hints, moved
    assert schemas_to_reindex(_definition("a.v1", hints=None), after) == {"a.v1"}


def test_records_that_are_not_definitions_reindex_nothing() -> None:
    note = {"schema_name": "note.v1", "tags": ["defines:a.v1"], "context": {}, "llm_hints": None}
    assert schemas_to_reindex(note, {**note, "llm_hints": HINTS}) == set()


def _row(**overrides: Any) -> dict[str, Any]:
    row = {
        "id": uuid.uuid4(), "owner_id": uuid.uuid4(), "schema_name": "note.v1",
        "tags": ["deploy", "session:s1"], "llm_text": "old", "embedding": None,
        "domains": [], "domains_version": None, "version": 3,
    }  # fmt: skip
    return row | overrides


def test_an_assembled_context_is_neither_embedded_nor_labelled() -> None:
    row = _row(schema_name="agent.context.v1", domains=["x"], domains_version="v1")
    values = derived_values(Prepared(row, None, None), None)
    assert values == {
        "entity_keywords": ["deploy"],
        "llm_text": None,
        "embedding": None,
        "domains": [],
        "domains_version": None,
    }


def test_labels_follow_the_current_domains() -> None:
    domains = parse_domains(
        {"domains": [{"name": "ops", "tags": ["deploy"]}]}, version="v2", centroids={}
    )
    values = derived_values(Prepared(_row(), "Deploy went fine", [0.0] * 384), domains)
    assert values["domains"] == ["ops"] and values["domains_version"] == "v2"
    assert values["llm_text"] == "Deploy went fine"


def test_labels_of_a_tenant_without_domains_are_cleared() -> None:
    row = _row(domains=["ops"], domains_version="v1")
    values = derived_values(Prepared(row, "text", [0.0] * 384), None)
    assert (values["domains"], values["domains_version"]) == ([], None)


def test_since_takes_iso_dates_and_times() -> None:
    assert parse_since("2026-11-01") == datetime(2026, 11, 1, tzinfo=UTC)
    offset = timezone(timedelta(hours=2))
    assert parse_since("2026-11-01T10:00:00+02:00") == datetime(2026, 11, 1, 10, tzinfo=offset)
    assert parse_since(None) is None
    with pytest.raises(ValueError):
        parse_since("last tuesday")


@pytest.mark.parametrize(
    ("option", "value"), [("--since", "last tuesday"), ("--tenant", "not-a-uuid")]
)
def test_the_command_refuses_bad_filters_before_touching_the_database(
    option: str, value: str
) -> None:
    from typer.testing import CliRunner

    from cairn.cli import app

    result = CliRunner().invoke(app, ["reindex", option, value])
    assert result.exit_code == 2, result.output
    assert "Invalid value" in result.output
