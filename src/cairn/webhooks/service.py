"""Registrations, secrets and the dead-letter queue, for one caller's tenant.

Everything is checked before the first write, so a refused request changes nothing; the
request's transaction commits the rest. Delivery itself never happens here: the delivery
loop reads the committed rows (see ``worker.py``).
"""

from __future__ import annotations

import secrets
import uuid
from typing import Any

from sqlalchemy import RowMapping
from sqlalchemy.ext.asyncio import AsyncSession

from cairn.config import Settings
from cairn.errors import NotFound
from cairn.events.selectors import Selector
from cairn.principal import Principal
from cairn.webhooks import repository
from cairn.webhooks.schemas import (
    DeadLetter,
    WebhookCreate,
    WebhookCreated,
    WebhookListItem,
)
from cairn.webhooks.validation import check_secret, check_webhook_url, selector_document


class WebhookService:
    def __init__(self, session: AsyncSession, settings: Settings, principal: Principal) -> None:
        self.session = session
        self.settings = settings
        self.owner_id = principal.owner_id

    async def register(self, agent_id: str, body: WebhookCreate) -> WebhookCreated:
        url = check_webhook_url(body.url, self.settings)
        selector = selector_document(body.selector)
        secret = await self._secret_for_registration(agent_id, body.secret)
        row = await repository.insert_webhook(
            self.session,
            {
                "id": uuid.uuid4(),
                "owner_id": self.owner_id,
                "agent_id": agent_id,
                "url": url,
                "selector": selector,
            },
        )
        await repository.bump_generation(self.session, self.owner_id)
        return WebhookCreated(id=row["id"], url=url, selector=body.selector, secret=secret)

    async def _secret_for_registration(self, agent_id: str, given: str | None) -> str | None:
        """The secret to show the caller: the one given, a new one if the agent had none,
        else None (an existing secret is never shown again)."""
        if given is not None:
            await self.set_secret(agent_id, given)
            return given
        generated = secrets.token_urlsafe(32)
        created = await repository.create_secret_if_missing(
            self.session, self.owner_id, agent_id, generated
        )
        return generated if created else None

    async def active(self, agent_id: str) -> list[WebhookListItem]:
        rows = await repository.active_webhooks(self.session, self.owner_id, agent_id)
        return [
            WebhookListItem(
                id=row["id"],
                url=row["url"],
                selector=_selector(row["selector"]),
                created_at=row["created_at"],
            )
            for row in rows
        ]

    async def deactivate(self, agent_id: str, webhook_id: uuid.UUID) -> None:
        if not await repository.deactivate_webhook(
            self.session, self.owner_id, agent_id, webhook_id
        ):
            raise NotFound(f"no active webhook {webhook_id} for agent {agent_id}")
        await repository.bump_generation(self.session, self.owner_id)

    async def set_secret(self, agent_id: str, secret: str) -> None:
        check_secret(secret)
        await repository.set_secret(self.session, self.owner_id, agent_id, secret)
        await repository.bump_generation(self.session, self.owner_id)


class DeadLetterService:
    def __init__(self, session: AsyncSession, principal: Principal) -> None:
        self.session = session
        self.owner_id = principal.owner_id

    async def newest(self, limit: int) -> list[DeadLetter]:
        rows = await repository.dead_letters(self.session, self.owner_id, limit)
        return [dead_letter(row) for row in rows]

    async def delete(self, entry_id: uuid.UUID) -> None:
        if not await repository.delete_dead_letter(self.session, self.owner_id, entry_id):
            raise NotFound(f"no dead-letter entry {entry_id}")

    async def requeue(self, entry_id: uuid.UUID) -> None:
        """Mark the entry; a delivery loop claims it within ``webhook_requeue_poll_s``."""
        if not await repository.requeue_dead_letter(self.session, self.owner_id, entry_id):
            raise NotFound(f"no dead-letter entry {entry_id}")


def dead_letter(row: RowMapping) -> DeadLetter:
    fields = {name: row[name] for name in DeadLetter.model_fields if name != "requeued"}
    return DeadLetter(**fields, requeued=row["requeued_at"] is not None)


def _selector(document: Any) -> Selector | None:
    return None if document is None else Selector.model_validate(document)
