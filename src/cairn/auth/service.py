"""Who is calling: ``CAIRN_AUTH`` decides between the loopback-only default caller and
verified tokens; either way the caller's request rate is limited here."""

from __future__ import annotations

import ipaddress
import logging
import secrets
import uuid

from sqlalchemy.ext.asyncio import AsyncEngine

from cairn.auth.keys import load_keys
from cairn.auth.limits import ConnectionLimiter, RateLimiter
from cairn.auth.tokens import Tokens
from cairn.config import Settings
from cairn.db.tenants import ensure_tenant
from cairn.errors import ConfigurationError, Unauthorized
from cairn.principal import Principal

log = logging.getLogger(__name__)
LOOPBACK_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost"}


def is_loopback(host: str) -> bool:
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(settings: Settings) -> None:
    """Refuse to serve without authentication anywhere but on loopback."""
    if settings.auth == "disabled" and not is_loopback(settings.host):
        raise ConfigurationError(
            f"CAIRN_AUTH=disabled serves everyone as the default tenant, so it binds only to "
            f"loopback (127.0.0.1, ::1, localhost), not {settings.host!r}. Set CAIRN_AUTH=jwt "
            "with a key (see docs/operations.md, 'Authentication') or bind to 127.0.0.1."
        )
    check_open_minting(settings)


def check_open_minting(settings: Settings) -> None:
    """Minting without a credential hands any caller any token: loopback only, unless the
    operator forces it as well, and never silently."""
    compat = settings.compat
    if not compat.open_minting or settings.auth == "disabled":
        return
    if not is_loopback(settings.host) and not compat.open_minting_off_loopback:
        raise ConfigurationError(
            f"CAIRN_COMPAT__OPEN_MINTING lets anyone who reaches {settings.host!r} mint any "
            "token; it is allowed on loopback only (or set CAIRN_COMPAT__OPEN_MINTING_OFF_LOOPBACK"
            "=true behind a network you trust). Give RCRT runners a token from `cairn token`."
        )
    log.warning(
        "CAIRN_COMPAT__OPEN_MINTING is on: POST /auth/token mints a token for anyone "
        "without a credential (RCRT's runners); use it on a trusted machine only"
    )


class Authenticator:
    def __init__(self, settings: Settings, tokens: Tokens | None) -> None:
        self.settings = settings
        self.tokens = tokens
        admin = settings.admin_token.get_secret_value() if settings.admin_token else ""
        self._admin = admin.encode() or None
        limits = settings.limits
        self.rate = RateLimiter(limits.rate_per_s, limits.rate_burst)
        self.streams = ConnectionLimiter(limits.max_sse_per_caller)
        self.default = Principal(
            owner_id=uuid.UUID(settings.default_tenant_id), actor=settings.default_actor
        )
        self._known_tenants: set[uuid.UUID] = {self.default.owner_id}

    @classmethod
    def from_settings(cls, settings: Settings) -> Authenticator:
        """Fails (``ConfigurationError``) on settings that cannot serve safely."""
        check_bind(settings)
        if settings.auth == "disabled":
            return cls(settings, None)
        return cls(settings, Tokens(load_keys(settings), settings.jwt))

    @property
    def enabled(self) -> bool:
        return self.tokens is not None

    def is_admin(self, credential: str | None) -> bool:
        if self._admin is None or not credential:
            return False
        return secrets.compare_digest(credential.encode(), self._admin)

    def authenticate(self, credential: str | None) -> Principal:
        """The caller, with one request taken from its rate allowance."""
        if self.tokens is None:
            principal = self.default
        elif not credential:
            raise Unauthorized("this route needs a token: Authorization: Bearer <token>")
        else:
            principal = self.tokens.verify(credential)
        self.rate.take((principal.owner_id, principal.actor))
        return principal

    async def ensure_tenant(self, engine: AsyncEngine, owner_id: uuid.UUID) -> None:
        """A verified token's tenant gets its row on first sight (tokens minted offline by
        ``cairn token`` name tenants the database may not have yet)."""
        if owner_id in self._known_tenants:
            return
        await ensure_tenant(engine, owner_id, str(owner_id))
        self._known_tenants.add(owner_id)

    def ensure_known(self, owner_id: uuid.UUID) -> None:
        """Minting made the tenant's row: no need to look again."""
        self._known_tenants.add(owner_id)
