"""``GET /events/stream``: Server-Sent Events with filters and replay."""

from __future__ import annotations

import json
from typing import Annotated, Literal

from fastapi import APIRouter, Header, Query
from pydantic import ValidationError
from sse_starlette import EventSourceResponse

from cairn.acl import repository as acl
from cairn.acl.schemas import AclAction
from cairn.api.deps import ResourcesDep, StreamPrincipalDep, require_role
from cairn.api.resources import Resources
from cairn.breadcrumbs.queries import tag_list
from cairn.breadcrumbs.validation import MAX_JSON_DEPTH, check_json
from cairn.db.engine import tenant_session
from cairn.errors import InvalidInput, Unavailable
from cairn.events.selectors import Selector
from cairn.principal import Principal, Role
from cairn.stream.compat import RcrtSseConnection
from cairn.stream.feed import open_replay
from cairn.stream.response import event_stream
from cairn.stream.sse import SseConnection

router = APIRouter(tags=["events"])
MAX_SUBSCRIBED = 10_000
# JetStream's stream sequence is an unsigned 64-bit integer, and replay starts after it.
MAX_SEQUENCE = 2**64 - 2
MAX_FILTERS_CHARS = 16 * 1024


def build_selector(
    schema_name: str | None,
    any_tags: str | None,
    all_tags: str | None,
    session: str | None,
    filters: str | None,
    *,
    most_tags: int,
) -> Selector:
    selector = Selector(
        schema_name=schema_name,
        any_tags=list(tag_list(any_tags, "any_tags", most_tags)) or None,
        all_tags=list(tag_list(all_tags, "all_tags", most_tags)) or None,
        session=session,
    )
    if filters is None:
        return selector
    merged = selector.merged(parse_filters(filters))
    for field, tags in (("any_tags", merged.any_tags), ("all_tags", merged.all_tags)):
        if tags and len(tags) > most_tags:
            raise InvalidInput(f"filters.{field}: {len(tags)} tags, at most {most_tags}")
    return merged


def parse_filters(filters: str) -> Selector:
    """The ``filters`` JSON selector, bounded in size and depth before it is parsed further."""
    if len(filters) > MAX_FILTERS_CHARS:
        raise InvalidInput(f"filters: longer than {MAX_FILTERS_CHARS} characters")
    try:
        document = json.loads(filters)
        check_json(document, "filters")
        return Selector.model_validate(document)
    except RecursionError as error:
        raise InvalidInput(f"filters: nested deeper than {MAX_JSON_DEPTH} levels") from error
    except (ValueError, ValidationError) as error:
        raise InvalidInput(f"filters: not a valid selector ({error})"[:500]) from error


async def subscribed_records(resources: Resources, principal: Principal) -> frozenset[str]:
    """Other tenants' records whose events an ACL ``subscribe`` entry grants the caller, read
    once when the stream opens (the DB session is released before streaming)."""
    scoped = tenant_session(resources.session_factory, principal.owner_id)
    async with scoped as db, db.begin():
        ids = await acl.granted_record_ids(
            db, principal, [AclAction.SUBSCRIBE.value], limit=MAX_SUBSCRIBED
        )
    return frozenset(str(record_id) for record_id in ids)


def start_sequence(since: int | None, last_event_id: str | None) -> int | None:
    if last_event_id is not None and last_event_id.strip():
        sequence = last_event_id.strip()
        if not (sequence.isascii() and sequence.isdigit()) or int(sequence) > MAX_SEQUENCE:
            raise InvalidInput("Last-Event-ID must be a stream sequence number (0 to 2**64-2)")
        return int(sequence)
    return since


@router.get(
    "/events/stream",
    response_class=EventSourceResponse,
    responses={200: {"content": {"text/event-stream": {}}}},
    dependencies=[require_role(Role.SUBSCRIBER, stream=True)],
)
async def events_stream(
    resources: ResourcesDep,
    principal: StreamPrincipalDep,
    schema_name: str | None = None,
    any_tags: Annotated[str | None, Query(description="comma-separated")] = None,
    all_tags: Annotated[str | None, Query(description="comma-separated")] = None,
    session: str | None = None,
    filters: Annotated[str | None, Query(description="a JSON selector")] = None,
    since: Annotated[int | None, Query(ge=0, le=MAX_SEQUENCE)] = None,
    last_event_id: Annotated[str | None, Header(alias="Last-Event-ID")] = None,
    compat: Annotated[
        Literal["cairn", "rcrt"] | None,
        Query(description="rcrt: creates typed breadcrumb.updated, no deletes (RCRT's framing)"),
    ] = None,
    paths: Annotated[
        bool,
        Query(description="also path_started, path_waypoint, path_resolved, path_abandoned"),
    ] = False,
) -> EventSourceResponse:
    most_tags = resources.settings.limits.max_query_tags
    selector = build_selector(
        schema_name, any_tags, all_tags, session, filters, most_tags=most_tags
    )
    start = start_sequence(since, last_event_id)
    granted = await subscribed_records(resources, principal)
    feed, js = resources.feed, resources.nats.jetstream() if resources.nats else None
    if feed is None or js is None:
        raise Unavailable("the event stream is unavailable: NATS is not connected")
    slot = resources.auth.streams.acquire((principal.owner_id, principal.actor))
    try:
        await feed.start()
        replay = None if start is None else (js, await open_replay(js, start))
    except Exception as error:
        slot.release()
        raise Unavailable(f"the event stream is unavailable: {error}"[:300]) from error
    events = resources.settings.events
    framing = compat or resources.settings.compat.sse
    connection = (RcrtSseConnection if framing == "rcrt" else SseConnection)(
        feed,
        selector,
        principal.owner_id,
        queue_size=events.sse_queue_size,
        on_close=slot.release,
        granted=granted,
        since=start,
        replay=replay,
        paths=paths,
    )
    return event_stream(connection, events.sse_ping_interval_s)
