"""Which hints apply (instance, then schema definition, then none) and how caches forget."""

from __future__ import annotations

import uuid

from tests.transforms.helpers import record, rule

from cairn.transforms import SCHEMA_DEFINITION, Definition, Transforms, defined_schemas
from cairn.transforms.definitions import DefinitionCache

OWNER = uuid.UUID("00000000-0000-0000-0000-000000000001")
SCHEMA_HINTS = {"transform": {"s": rule("format", "schema says {text}")}}
INSTANCE_HINTS = {"transform": {"i": rule("format", "instance says {text}")}}
DEFINITION = Definition(uuid.uuid4(), 3, SCHEMA_HINTS)


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_instance_hints_win_over_the_schema_definition() -> None:
    view = Transforms().render(record(llm_hints=INSTANCE_HINTS), DEFINITION)
    assert view.source == "instance" and view.definition_id is None
    assert view.context == {"i": "instance says The staging deploy finished."}


def test_schema_hints_apply_without_instance_hints() -> None:
    view = Transforms().render(record(), DEFINITION)
    assert view.source == "schema"
    assert (view.definition_id, view.definition_version) == (DEFINITION.id, 3)
    assert view.context == {"s": "schema says The staging deploy finished."}


def test_no_hints_is_the_context_as_stored() -> None:
    view = Transforms().render(record(), None)
    assert view.source == "none" and view.context == record()["context"]
    assert Transforms().render(record(), Definition(uuid.uuid4(), 1, None)).source == "none"


def test_empty_instance_hints_opt_out_of_the_schema_hints() -> None:
    view = Transforms().render(record(llm_hints={}), DEFINITION)
    assert view.source == "instance" and view.context == record()["context"]


def test_a_definitions_own_hints_describe_its_schema_not_itself() -> None:
    definition = record(schema_name=SCHEMA_DEFINITION, llm_hints=SCHEMA_HINTS)
    assert Transforms().render(definition, None).source == "none"


def test_compiled_instance_hints_are_cached_by_record_version() -> None:
    transforms = Transforms()
    transforms.render(record(llm_hints=INSTANCE_HINTS), None)
    changed = {"transform": {"i": rule("literal", "v2")}}
    stale = transforms.render(record(llm_hints=changed), None)  # same id and version
    fresh = transforms.render(record(llm_hints=changed, version=2), None)
    unsaved = transforms.render(record(llm_hints=changed, version=None), None)
    assert stale.context == {"i": "instance says The staging deploy finished."}
    assert fresh.context == unsaved.context == {"i": "v2"}


def test_defined_schemas_reads_the_defines_tags() -> None:
    assert defined_schemas(["schema:definition", "defines:a.v1", "defines:b.v1"]) == {
        "a.v1",
        "b.v1",
    }


def test_cached_definitions_are_found_until_invalidated() -> None:
    cache = DefinitionCache(ttl_s=60, clock=FakeClock())
    cache.store(OWNER, {"a.v1": DEFINITION, "b.v1": None}, cache.generation)
    assert cache.lookup(OWNER, ["a.v1", "b.v1", "c.v1"]) == (
        {"a.v1": DEFINITION, "b.v1": None},
        ["c.v1"],
    )
    cache.invalidate(["a.v1"])
    assert cache.lookup(OWNER, ["a.v1", "b.v1"]) == ({"b.v1": None}, ["a.v1"])
    cache.invalidate()
    assert cache.lookup(OWNER, ["b.v1"]) == ({}, ["b.v1"])


def test_cached_definitions_expire_after_the_ttl() -> None:
    clock = FakeClock()
    cache = DefinitionCache(ttl_s=60, clock=clock)
    cache.store(OWNER, {"a.v1": DEFINITION}, cache.generation)
    clock.now = 61
    assert cache.lookup(OWNER, ["a.v1"]) == ({}, ["a.v1"])


def test_an_answer_from_before_an_invalidation_is_not_cached() -> None:
    cache = DefinitionCache(ttl_s=60, clock=FakeClock())
    started = cache.generation
    cache.invalidate(["a.v1"])  # a definition was committed while the query ran
    cache.store(OWNER, {"a.v1": DEFINITION}, started)
    assert cache.lookup(OWNER, ["a.v1"]) == ({}, ["a.v1"])


def test_definition_events_from_other_processes_clear_the_cache() -> None:
    transforms = Transforms()
    transforms.definitions.store(OWNER, {"a.v1": DEFINITION}, transforms.definitions.generation)
    assert not transforms.invalidate_for_event({"schema_name": "note.v1", "tags": []})
    assert transforms.definitions.lookup(OWNER, ["a.v1"])[1] == []
    assert transforms.invalidate_for_event({"schema_name": SCHEMA_DEFINITION, "tags": []})
    assert transforms.definitions.lookup(OWNER, ["a.v1"])[1] == ["a.v1"]


def test_invalidate_takes_one_name_or_several() -> None:
    transforms = Transforms()
    answers = {"a.v1": DEFINITION, "b.v1": DEFINITION, "c.v1": DEFINITION}
    transforms.definitions.store(OWNER, answers, transforms.definitions.generation)
    transforms.invalidate("a.v1")
    transforms.invalidate(["b.v1"])
    assert transforms.definitions.lookup(OWNER, answers)[1] == ["a.v1", "b.v1"]
