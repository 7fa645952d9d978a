"""Agent definitions, the blacklist, the domains and debug paths are checked on write
against the JSON Schemas in ``schemas/``, so a broken one answers 422 naming the path
instead of being skipped silently at assembly time."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from cairn.context import sources
from cairn.context.domains import DOMAINS_SCHEMA, check_domains
from cairn.context.sections import check_sections
from cairn.errors import InvalidInput

SCHEMAS_DIR = Path(__file__).resolve().parents[3] / "schemas"
VALIDATED = (
    "agent.def.v1",
    "context.blacklist.v1",
    DOMAINS_SCHEMA,
    "debug.path.v1",
    "debug.waypoint.v1",
)


@cache
def _validator(schema_name: str) -> Draft202012Validator:
    schema = json.loads((SCHEMAS_DIR / f"{schema_name}.json").read_text())
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def check_definition(schema_name: str | None, context: Any) -> None:
    """Raise 422 for the first problem in a validated schema's context, with its path."""
    if schema_name not in VALIDATED:
        return
    errors = sorted(_validator(schema_name).iter_errors(context), key=lambda e: list(e.path))
    if errors:
        first = errors[0]
        path = "context" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first.path)
        raise InvalidInput(f"{path}: {first.message}"[:500], extra={"path": path})
    if schema_name == "agent.def.v1":
        check_sections(context, sources.NAMES)
    if schema_name == DOMAINS_SCHEMA:
        check_domains(context)  # what a JSON Schema cannot say: unique names, known references
