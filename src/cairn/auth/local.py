"""Tokens minted from the configured key without a server: ``cairn token`` (an operator's
first token), and the short-lived token ``cairn up`` and ``cairn bootstrap`` load with."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from pathlib import Path

from cairn.auth.keys import ensure_generated_key, explicit_key, load_keys
from cairn.auth.tokens import Tokens
from cairn.config import Settings
from cairn.principal import Role

BOOTSTRAP_AGENT = "cairn-bootstrap"
BOOTSTRAP_TTL_S = 3600


def prepare_key(settings: Settings) -> Path | None:
    """``cairn up`` with CAIRN_AUTH=jwt and no key configured: the data directory's key
    (generated on the first start, reused afterwards)."""
    if settings.auth != "jwt" or explicit_key(settings):
        return None
    return ensure_generated_key(settings)


def mint_local(
    settings: Settings,
    agent_id: str,
    roles: Iterable[Role],
    ttl_s: int,
    owner_id: uuid.UUID | None = None,
) -> tuple[str, int]:
    """A token signed with this configuration's key (``ConfigurationError`` without one)."""
    tokens = Tokens(load_keys(settings), settings.jwt)
    owner = owner_id or uuid.UUID(settings.default_tenant_id)
    return tokens.mint(owner, agent_id, set(roles), ttl_s)


def bootstrap_token(settings: Settings) -> str | None:
    """A curator token of the default tenant for loading bootstrap records, when auth is on."""
    if settings.auth != "jwt":
        return None
    token, _ = mint_local(settings, BOOTSTRAP_AGENT, {Role.CURATOR}, BOOTSTRAP_TTL_S)
    return token
