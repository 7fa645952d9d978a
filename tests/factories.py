"""Factories with keyword overrides for request bodies."""

from __future__ import annotations

from typing import Any


def breadcrumb(**overrides: Any) -> dict[str, Any]:
    """A valid create body; keyword overrides replace fields."""
    body: dict[str, Any] = {
        "schema_name": "note.v1",
        "title": "Deploy notes",
        "description": "How the staging deploy went",
        "tags": ["deploy"],
        "context": {"text": "The staging deploy finished after the database migration."},
    }
    body.update(overrides)
    return body


def schema_definition(
    schema_name: str, hints: dict[str, Any] | None, **overrides: Any
) -> dict[str, Any]:
    """A ``schema.def.v1`` body whose ``llm_hints`` apply to records of ``schema_name``."""
    body: dict[str, Any] = {
        "schema_name": "schema.def.v1",
        "title": f"Schema {schema_name}",
        "tags": ["schema:definition", f"defines:{schema_name}"],
        "context": {"schema_name": schema_name},
        "llm_hints": hints,
    }
    body.update(overrides)
    return body


GARDEN = (
    "Tomatoes in bed {i} were staked and tied with soft twine after the evening watering.",
    "The compost heap beside bed {i} was turned and a layer of straw spread over it.",
    "Beans sown along the fence of bed {i} came up evenly and were thinned to one a hand.",
    "Slugs found on the lettuce of bed {i} were collected at dusk with a torch.",
)
TAIL = (
    "Separately, the office espresso machine broke on Thursday. Its boiler thermostat "
    "failed, and the coffee it made came out lukewarm and sour before it stopped heating "
    "at all. The café supplier inspected it on Friday and confirmed the heating element "
    "had burnt out. A technician will come to the office next Monday morning to replace "
    "the element, descale the group head and check the pump pressure. Until the repair "
    "is done, people are asked to use the kettle and the filter coffee in the kitchen, "
    "and not to unplug the broken machine."
)


def long_note(paragraphs: int = 30, tail: str = TAIL) -> str:
    """A long gardening diary whose last sentence is about something else entirely: only
    a chunk of its end can match a question about that."""
    body = " ".join(GARDEN[i % len(GARDEN)].format(i=i) for i in range(paragraphs))
    return f"{body} {tail}"
