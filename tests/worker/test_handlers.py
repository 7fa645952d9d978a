"""The worker's handlers and the outcome vocabulary, in memory (no NATS, no database)."""

from __future__ import annotations

import json
import uuid
from typing import Any

import asyncpg
import pytest
from sqlalchemy.exc import OperationalError, ProgrammingError

from cairn.edges.repository import CONTEXT_SCHEMA
from cairn.events.messages import Delivery
from cairn.events.outcomes import DependencyDown, PoisonMessage, is_outage
from cairn.events.payloads import event_headers
from cairn.worker.handlers import Handlers


class NoContexts:
    """A builder twin: the poison paths never reach it."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"the builder was used ({name})")


def _handlers() -> Handlers:
    return Handlers(None, None, NoContexts())  # type: ignore[arg-type]


def _delivery(data: bytes, headers: dict[str, str] | None = None) -> Delivery:
    return Delivery(
        subject="bc.x.created", data=data, stream_sequence=1, deliveries=1, headers=headers or {}
    )


@pytest.mark.parametrize("data", [b"not json", b"[1, 2]", b'"text"'])
async def test_a_message_that_is_not_an_event_is_poison(data: bytes) -> None:
    with pytest.raises(PoisonMessage):
        await _handlers().handle(_delivery(data))


async def test_an_unknown_event_type_is_poison() -> None:
    with pytest.raises(PoisonMessage, match="unknown event type"):
        await _handlers().handle(_delivery(b'{"type": "breadcrumb.renamed"}'))


async def test_an_event_without_valid_ids_is_poison() -> None:
    handlers = _handlers()
    handlers.table["breadcrumb.created"] = [handlers.build_edges]
    event = {"type": "breadcrumb.created", "owner_id": "nobody", "breadcrumb_id": str(uuid.uuid4())}
    with pytest.raises(PoisonMessage, match="valid ids"):
        await handlers.handle_event(event)


async def test_an_assembled_context_named_in_the_headers_is_not_read() -> None:
    """No step does anything with a context (the worker's own output): with the relay's
    headers its body is not parsed and no step runs; the builder twin fails on any use."""
    headers = event_headers(str(uuid.uuid4()), CONTEXT_SCHEMA)
    await _handlers().handle(_delivery(b"not json", headers))
    # Another schema is read as before.
    with pytest.raises(PoisonMessage):
        await _handlers().handle(_delivery(b"not json", event_headers("x", "user.message.v1")))


class QuietCaches:
    def on_event(self, event: Any) -> bool:
        return False

    def invalidate_for_event(self, event: Any) -> bool:
        return False


class QuietContexts:
    """A builder twin whose caches and triggers answer that nothing is theirs."""

    directory = transforms = QuietCaches()

    async def on_event(self, event: Any) -> int:
        return 0


@pytest.mark.parametrize("change", ["created", "updated", "deleted"])
async def test_a_context_event_without_headers_opens_no_transaction(change: str) -> None:
    """The same event read from its body (a message published before the headers): its
    edge step returns before a session (the factory is None here)."""
    handlers = Handlers(None, None, QuietContexts())  # type: ignore[arg-type]
    event = {
        "type": f"breadcrumb.{change}", "schema_name": CONTEXT_SCHEMA,
        "owner_id": str(uuid.uuid4()), "breadcrumb_id": str(uuid.uuid4()), "tags": [],
    }  # fmt: skip
    await handlers.handle(_delivery(json.dumps(event).encode()))


def _wrapped(error: Exception) -> OperationalError:
    return OperationalError("SELECT 1", {}, error)


@pytest.mark.parametrize(
    "error",
    [
        ConnectionRefusedError("refused"),
        DependencyDown("nats"),
        _wrapped(ConnectionRefusedError("refused")),
        _wrapped(asyncpg.exceptions.CannotConnectNowError("starting up")),
        _wrapped(asyncpg.exceptions.AdminShutdownError("terminating connection")),
        _wrapped(asyncpg.exceptions.ConnectionDoesNotExistError("closed")),
    ],
)
def test_unreachable_dependencies_are_outages(error: Exception) -> None:
    assert is_outage(error)


@pytest.mark.parametrize(
    "error",
    [
        ValueError("a defect"),
        ProgrammingError("SELEC 1", {}, Exception("syntax error")),
        asyncpg.exceptions.QueryCanceledError("statement timeout"),
        asyncpg.exceptions.UniqueViolationError("duplicate key"),
    ],
)
def test_failing_work_is_not_an_outage(error: Exception) -> None:
    assert not is_outage(error)
