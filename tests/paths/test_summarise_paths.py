"""The worker's ``summarise_paths`` step against the real database and a real HTTP endpoint
speaking the chat-completions API: a resolved path gets the LLM's summary once, and any
failure leaves the extractive summary standing with its reason on the path."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from prometheus_client import REGISTRY
from sqlalchemy import text
from tests.assembly.helpers import post
from tests.paths.llm_server import REPLY, LlmServer, llm_server
from tests.waiting import eventually

from cairn.breadcrumbs import repository as breadcrumbs
from cairn.breadcrumbs.generated import GeneratedWriter
from cairn.config import PathSettings, Settings
from cairn.context.builder import ContextBuilder
from cairn.db.engine import tenant_session
from cairn.edges.builder import EdgeOptions
from cairn.events.payloads import STREAM_NAME, ChangeKind, change_event
from cairn.paths.machine import PathState, Status
from cairn.paths.store import StoredPath, write_path
from cairn.paths.summariser import LlmSummariser, path_summariser
from cairn.paths.summary import Resolution
from cairn.principal import Principal
from cairn.transforms import Transforms
from cairn.worker.app import NoEmbedder, worker_consumer
from cairn.worker.handlers import Handlers

FAILING = {
    "command": "pytest -q",
    "exit_code": 1,
    "output": "FAILED tests/test_cart.py::test_total - AssertionError: assert 3 == 4\n"
    "1 failed, 2 passed in 0.12s",
}
GREEN = {"command": "pytest -q", "exit_code": 0, "output": "3 passed in 0.10s"}
EDIT = {"tool": "edit", "title": "Edit src/cart.py line 12", "text": "changed"}
MODEL = "test-model"


@pytest.fixture
async def llm() -> AsyncIterator[LlmServer]:
    async with llm_server() as server:
        yield server


async def _handlers(app: FastAPI, settings: Settings, summariser: LlmSummariser | None) -> Handlers:
    sessions = app.state.resources.session_factory
    builder = await asyncio.to_thread(
        ContextBuilder.create, settings, sessions, Transforms(settings.transforms), NoEmbedder()
    )
    return Handlers(sessions, EdgeOptions(), builder, summariser=summariser)


def _summariser(llm: LlmServer, timeout_s: float = 10.0) -> LlmSummariser:
    paths = PathSettings(
        summariser_url=llm.url, summariser_model=MODEL, summariser_timeout_s=timeout_s
    )
    summariser = path_summariser(paths)
    assert summariser is not None
    return summariser


async def _row(app: FastAPI, record_id: uuid.UUID | str) -> dict[str, Any]:
    resources = app.state.resources
    owner = resources.default_tenant
    async with tenant_session(resources.session_factory, owner) as session:
        row = await breadcrumbs.get(session, owner, uuid.UUID(str(record_id)))
    assert row is not None
    return dict(row)


async def _event(app: FastAPI, record_id: uuid.UUID | str, kind: ChangeKind) -> dict[str, Any]:
    """The event of a stored record, as the worker receives it."""
    change = "create" if kind is ChangeKind.created else "replace"
    return change_event(kind, await _row(app, record_id), change=change).payload


async def _post_session(
    client: httpx.AsyncClient, handled: Callable[[uuid.UUID], Awaitable[None]]
) -> str:
    """A session that resolves its path, each record ``handled`` before the next is posted
    (workers may handle a burst in any order); the session's tag."""
    session = f"session:{uuid.uuid4().hex[:8]}"
    for context in (FAILING, EDIT, GREEN, GREEN, GREEN):
        body = dict(context)
        title = str(body.pop("title", "Run pytest"))
        record = await post(
            client, schema_name="tool.response.v1", title=title, tags=[session], context=body
        )
        await handled(record)
    return session


async def _paths_of(app: FastAPI, session: str) -> list[tuple[uuid.UUID, dict[str, Any]]]:
    query = text(
        "SELECT id, context FROM breadcrumbs WHERE schema_name = 'debug.path.v1'"
        " AND context->>'session' = :session"
    )
    async with app.state.resources.system_engine.connect() as connection:
        rows = await connection.execute(query, {"session": session})
        return [(row.id, dict(row.context)) for row in rows]


async def _resolved_path(handlers: Handlers, client: httpx.AsyncClient, app: FastAPI) -> str:
    """A session driven to resolution through ``handlers``; its path's id."""

    async def handled(record: uuid.UUID) -> None:
        await handlers.handle_event(await _event(app, record, ChangeKind.created))

    ((path_id, _),) = await _paths_of(app, await _post_session(client, handled))
    return str(path_id)


def _summaries(by: str) -> float:
    return REGISTRY.get_sample_value("cairn_path_summaries_total", {"by": by}) or 0.0


async def _deliver_path(handlers: Handlers, app: FastAPI, path_id: str) -> dict[str, Any]:
    """The path's latest event handled by ``handlers``; the path's context after."""
    await handlers.handle_event(await _event(app, path_id, ChangeKind.updated))
    return dict((await _row(app, path_id))["context"])


async def test_a_resolved_path_gets_the_llms_summary(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, llm: LlmServer
) -> None:
    handlers = await _handlers(app, settings, _summariser(llm))
    path_id = await _resolved_path(handlers, client, app)
    extractive = dict((await _row(app, path_id))["context"])
    assert extractive["status"] == "resolved" and "summariser" not in extractive
    before = _summaries("llm")
    context = await _deliver_path(handlers, app, path_id)
    assert _summaries("llm") == before + 1
    assert context["summariser"]["by"] == "llm" and context["summariser"]["model"] == MODEL
    assert {key: context[key] for key in REPLY} == REPLY
    assert context["replaced_summary"] == {
        key: extractive[key] for key in ("kiss_summary", "root_cause", "what_fixed_it")
    }
    assert context["files"] == extractive["files"]  # the LLM names none of its own
    (request,) = llm.requests
    prompt = request["messages"][-1]["content"]
    assert "AssertionError" in prompt and "src/cart.py" in prompt
    assert request["model"] == MODEL


async def test_redelivery_and_the_outcomes_own_event_ask_no_more(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, llm: LlmServer
) -> None:
    handlers = await _handlers(app, settings, _summariser(llm))
    path_id = await _resolved_path(handlers, client, app)
    resolved_event = await _event(app, path_id, ChangeKind.updated)
    await handlers.handle_event(resolved_event)
    await handlers.handle_event(resolved_event)  # redelivered
    await _deliver_path(handlers, app, path_id)  # the event of the outcome's write
    assert len(llm.requests) == 1


async def test_a_timeout_leaves_the_extractive_summary_with_its_reason(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, llm: LlmServer
) -> None:
    llm.delay_s = 10.0
    handlers = await _handlers(app, settings, _summariser(llm, timeout_s=0.3))
    path_id = await _resolved_path(handlers, client, app)
    extractive = dict((await _row(app, path_id))["context"])
    context = await _deliver_path(handlers, app, path_id)
    assert context["summariser"]["by"] == "extractive"
    assert context["summariser"]["error"] == "timeout after 0.3 s"
    assert context["kiss_summary"] == extractive["kiss_summary"]
    assert "replaced_summary" not in context
    await _deliver_path(handlers, app, path_id)  # one attempt per resolution
    assert len(llm.requests) == 1


async def test_an_http_error_leaves_the_extractive_summary(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, llm: LlmServer
) -> None:
    llm.status = 500
    handlers = await _handlers(app, settings, _summariser(llm))
    path_id = await _resolved_path(handlers, client, app)
    extractive = dict((await _row(app, path_id))["context"])
    before = _summaries("extractive")
    context = await _deliver_path(handlers, app, path_id)
    assert _summaries("extractive") == before + 1
    assert context["summariser"]["by"] == "extractive"
    assert context["summariser"]["error"] == "HTTP 500"
    assert context["what_fixed_it"] == extractive["what_fixed_it"]
    assert len(llm.requests) == 1  # no retries


async def test_a_reply_that_is_not_json_leaves_the_extractive_summary(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, llm: LlmServer
) -> None:
    llm.content = "Sure! The fix was to edit the cart {"
    handlers = await _handlers(app, settings, _summariser(llm))
    path_id = await _resolved_path(handlers, client, app)
    extractive = dict((await _row(app, path_id))["context"])
    context = await _deliver_path(handlers, app, path_id)
    assert context["summariser"]["by"] == "extractive"
    assert context["summariser"]["error"].startswith("invalid JSON")
    assert context["root_cause"] == extractive["root_cause"]


async def test_a_refusal_leaves_the_extractive_summary(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, llm: LlmServer
) -> None:
    llm.refusal = "I can't help\nwith that."
    handlers = await _handlers(app, settings, _summariser(llm))
    path_id = await _resolved_path(handlers, client, app)
    context = await _deliver_path(handlers, app, path_id)
    assert context["summariser"]["by"] == "extractive"
    assert context["summariser"]["error"] == "refused: I can't help with that."


async def test_off_by_default_nothing_is_sent(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, llm: LlmServer
) -> None:
    assert path_summariser(settings.paths) is None
    handlers = await _handlers(app, settings, None)
    assert all(handlers.summarise_paths not in steps for steps in handlers.table.values())
    path_id = await _resolved_path(handlers, client, app)
    context = await _deliver_path(handlers, app, path_id)
    assert context["status"] == "resolved" and "summariser" not in context
    assert llm.requests == []


async def test_a_path_written_resolved_elsewhere_is_summarised_from_its_created_event(
    app: FastAPI, settings: Settings, llm: LlmServer
) -> None:
    """As an explicit resolution writes it: a resolved path record, whoever wrote it."""
    handlers = await _handlers(app, settings, _summariser(llm))
    resources, contexts = app.state.resources, handlers.contexts
    owner, now = resources.default_tenant, datetime.now(UTC)
    state = PathState(status=Status.RESOLVED, signature="KeyError: <s>", sequence=0, last_at=now)
    resolution = Resolution("When KeyError: add the key.", "KeyError: <s>", "add the key", ())
    path = StoredPath(
        uuid.uuid4(), f"session:{uuid.uuid4().hex[:8]}", state, now, uuid.uuid4(), now, resolution
    )
    async with tenant_session(resources.session_factory, owner) as session, session.begin():
        principal = Principal(owner, "api")
        writer = GeneratedWriter(
            session, contexts.embedder, contexts.limits, principal, contexts.transforms
        )
        await write_path(writer, path)
    await handlers.handle_event(await _event(app, path.id, ChangeKind.created))
    context = dict((await _row(app, path.id))["context"])
    assert context["summariser"]["by"] == "llm"
    assert context["kiss_summary"] == REPLY["kiss_summary"]
    prompt = llm.requests[0]["messages"][-1]["content"]
    assert "First error: KeyError: <s>" in prompt
    assert "What fixed it as recorded: add the key" in prompt  # an agent's own words, say
    assert context["replaced_summary"]["what_fixed_it"] == "add the key"


async def _has_waypoint_from(app: FastAPI, record: uuid.UUID) -> bool:
    query = text(
        "SELECT 1 FROM breadcrumbs WHERE schema_name = 'debug.waypoint.v1'"
        " AND context->>'source_record_id' = :source"
    )
    async with app.state.resources.system_engine.connect() as connection:
        return (await connection.execute(query, {"source": str(record)})).first() is not None


async def _has_consumer(js: Any, durable: str) -> bool:
    try:
        await js.consumer_info(STREAM_NAME, durable)
    except Exception:
        return False
    return True


async def test_the_worker_consumer_summarises_a_session_resolved_over_nats(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, llm: LlmServer
) -> None:
    """The wiring: records posted through the API, relayed over NATS to a worker consumer
    built with a summariser, end as a path with the LLM's summary."""
    resources = app.state.resources
    builder = await asyncio.to_thread(
        ContextBuilder.create,
        settings,
        resources.session_factory,
        Transforms(settings.transforms),
        NoEmbedder(),
    )
    durable = f"llm-{uuid.uuid4().hex[:8]}"
    runner = worker_consumer(
        settings,
        resources.session_factory,
        resources.nats,
        builder,
        durable=durable,
        summariser=_summariser(llm),
    )
    task = asyncio.create_task(runner.run())
    try:
        await eventually(lambda: _has_consumer(resources.nats.jetstream(), durable))

        async def handled(record: uuid.UUID) -> None:
            await eventually(lambda: _has_waypoint_from(app, record), timeout=30)

        session = await _post_session(client, handled)

        async def summarised() -> bool:
            found = await _paths_of(app, session)
            return bool(found) and found[0][1].get("summariser", {}).get("by") == "llm"

        await eventually(summarised, timeout=60)
    finally:
        await runner.stop()
        await task
    assert len(llm.requests) == 1
