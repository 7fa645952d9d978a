"""The selector shared by SSE and webhooks: RCRT's keys plus ``session``, nothing else."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from cairn.events.selectors import Selector

EVENT = {"schema_name": "note.v1", "tags": ["a", "session:s1"], "context": {"status": "open"}}


def test_rcrt_keys_are_accepted_and_applied() -> None:
    selector = Selector.model_validate(
        {
            "any_tags": ["a", "z"],
            "all_tags": ["a"],
            "schema_name": "note.v1",
            "context_match": [{"path": "$.status", "op": "eq", "value": "open"}],
            "session": "s1",
        }
    )
    assert selector.matches(EVENT)
    assert not selector.model_copy(update={"schema_name": "other.v1"}).matches(EVENT)


@pytest.mark.parametrize(
    "document",
    [
        {"any_tag": ["a"]},  # misspelt: ignoring it would match every event
        {"tags": ["a"]},
        {"visibility_in": ["team"]},  # declared by RCRT's SDK, never applied by its server
        {"context_match": [{"path": "$.status", "value": "open", "operator": "ne"}]},
    ],
)
def test_unknown_keys_are_refused(document: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        Selector.model_validate(document)
