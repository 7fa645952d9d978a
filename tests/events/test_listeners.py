"""The API's cache listeners are told of every event; from the relay's headers when the
message has them, without parsing its body."""

from __future__ import annotations

import json
import uuid
from types import SimpleNamespace
from typing import Any

from cairn.events.payloads import event_headers
from cairn.events.runtime import _notify


async def test_a_listener_is_told_the_tenant_and_schema_from_the_headers() -> None:
    told: list[Any] = []
    on_message = _notify([told.append, told.append])
    owner = str(uuid.uuid4())
    headers = event_headers(owner, "agent.v1")
    await on_message(SimpleNamespace(headers=headers, data=b"never parsed"))
    assert told == [{"owner_id": owner, "schema_name": "agent.v1"}] * 2


async def test_a_message_without_the_headers_is_parsed() -> None:
    told: list[Any] = []
    on_message = _notify([told.append])
    event = {"owner_id": str(uuid.uuid4()), "schema_name": "agent.v1", "tags": ["a"]}
    nats_only = {"Nats-Msg-Id": "1"}
    await on_message(SimpleNamespace(headers=nats_only, data=json.dumps(event).encode()))
    await on_message(SimpleNamespace(headers=None, data=b"not json"))
    await on_message(SimpleNamespace(headers=None, data=b"[1]"))
    assert told == [event]
