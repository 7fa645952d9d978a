"""Writing an assembly: one ``agent.context.v1`` per (consumer, session), updated in place.

The record's id is derived from (owner, consumer, session), so concurrent workers and
redelivered events converge on the same record: created once, then replaced with a
version-checked update. Like any other change it has history and an outbox event, and
reaches SSE subscribers; the writer's path for generated records skips only what cannot
apply to it (see ``GeneratedWriter.put_generated``); its history keeps only the newest
versions (``context.history_versions``).
"""

from __future__ import annotations

import uuid

from cairn.breadcrumbs.generated import GeneratedWriter
from cairn.breadcrumbs.replace import Rider
from cairn.breadcrumbs.repository import Row
from cairn.breadcrumbs.schemas import BreadcrumbCreate
from cairn.context.agents import CONTEXT_SCHEMA
from cairn.context.assemble import Assembly

_NAMESPACE = uuid.UUID("6b1f3c1e-27a4-4f7e-9a53-2f0c6a0e5c11")
NO_SESSION = "none"


def context_record_id(owner_id: uuid.UUID, consumer_id: str, session_tag: str | None) -> uuid.UUID:
    return uuid.uuid5(_NAMESPACE, f"{owner_id}|{consumer_id}|{session_tag or NO_SESSION}")


def context_body(assembly: Assembly) -> BreadcrumbCreate:
    tags = ["agent:context", f"consumer:{assembly.agent_id}"]
    if assembly.session_tag:
        tags.append(assembly.session_tag)
    return BreadcrumbCreate(
        schema_name=CONTEXT_SCHEMA,
        title=f"Context for {assembly.agent_id}",
        tags=tags,
        context=assembly.context,
    )


async def write_context(
    writer: GeneratedWriter, assembly: Assembly, *, keep_versions: int, log: Rider | None = None
) -> Row:
    """Upsert the assembly, unless the record already holds one for a later trigger (an
    older event handled late must not overwrite a newer context). The record's history
    keeps its newest ``keep_versions`` versions (0: all): every assembly adds one, so an
    agent's history would otherwise grow without bound. ``log``: the assembly's log entry,
    written with it (cairn.assemblies.entry)."""
    owner = writer.principal.owner_id
    record_id = context_record_id(owner, assembly.agent_id, assembly.session_tag)
    return await writer.put_generated(
        record_id,
        context_body(assembly),
        unless_later="trigger_created_at",
        keep_versions=keep_versions,
        rider=log,
    )
