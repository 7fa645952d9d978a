"""Minting and verifying tokens (PyJWT). Claims: ``sub`` (agent id), ``owner_id`` (tenant),
``roles``, ``exp`` and ``iat``; ``iss`` and ``aud`` when configured."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable
from typing import Any

import jwt
from pydantic import BaseModel, Field, ValidationError

from cairn.auth.keys import KeySet
from cairn.config import JwtSettings
from cairn.errors import ConfigurationError, Unauthorized
from cairn.principal import Principal, Role

AGENT_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$"


class TokenClaims(BaseModel):
    sub: str = Field(pattern=AGENT_ID_PATTERN)
    owner_id: uuid.UUID
    roles: list[Role] = Field(min_length=1, max_length=3)


class Tokens:
    def __init__(self, keys: KeySet, settings: JwtSettings) -> None:
        self.keys = keys
        self.settings = settings
        required = ["exp", "sub"]
        required += ["iss"] if settings.issuer else []
        required += ["aud"] if settings.audience else []
        self._options: Any = {"require": required, "verify_aud": settings.audience is not None}

    @property
    def can_mint(self) -> bool:
        return self.keys.signing_key is not None

    def mint(
        self, owner_id: uuid.UUID, agent_id: str, roles: Iterable[Role], ttl_s: int
    ) -> tuple[str, int]:
        """A signed token and its expiry (Unix seconds)."""
        if self.keys.signing_key is None:
            raise ConfigurationError("this server has only a public key: it cannot mint tokens")
        now = int(time.time())
        claims: dict[str, Any] = {
            "sub": agent_id,
            "owner_id": str(owner_id),
            "roles": sorted(role.value for role in roles),
            "iat": now,
            "exp": now + ttl_s,
            "jti": uuid.uuid4().hex,
        }
        if self.settings.issuer:
            claims["iss"] = self.settings.issuer
        if self.settings.audience:
            claims["aud"] = self.settings.audience
        headers = {"kid": self.keys.signing_kid}
        token = jwt.encode(claims, self.keys.signing_key, self.keys.algorithm, headers=headers)
        return token, claims["exp"]

    def verify(self, token: str) -> Principal:
        """The caller a token names; ``Unauthorized`` for anything that does not verify."""
        payload = self._decode(token)
        try:
            claims = TokenClaims.model_validate(payload)
        except ValidationError as error:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in error.errors()
            )
            raise Unauthorized(f"token claims are invalid ({problems})"[:300]) from error
        return Principal(owner_id=claims.owner_id, actor=claims.sub, roles=frozenset(claims.roles))

    def _decode(self, token: str) -> dict[str, Any]:
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError as error:
            raise Unauthorized("the token is malformed") from error
        kid = header.get("kid")
        if isinstance(kid, str) and kid in self.keys.verification:
            candidates = [self.keys.verification[kid]]
        elif kid is None:
            candidates = list(self.keys.verification.values())
        else:
            raise Unauthorized("the token names a key this server does not know")
        for key in candidates:
            try:
                return self._decode_with(token, key)
            except jwt.InvalidSignatureError:
                continue
        raise Unauthorized("the token's signature does not verify")

    def _decode_with(self, token: str, key: Any) -> dict[str, Any]:
        try:
            payload: dict[str, Any] = jwt.decode(
                token,
                key,
                algorithms=[self.keys.algorithm],
                audience=self.settings.audience,
                issuer=self.settings.issuer,
                leeway=self.settings.leeway_s,
                options=self._options,
            )
        except jwt.InvalidSignatureError:
            raise
        except jwt.ExpiredSignatureError as error:
            raise Unauthorized("the token has expired") from error
        except jwt.InvalidAudienceError as error:
            raise Unauthorized("the token is not meant for this audience") from error
        except jwt.InvalidIssuerError as error:
            raise Unauthorized("the token comes from another issuer") from error
        except jwt.PyJWTError as error:
            raise Unauthorized(f"the token is invalid: {error}"[:300]) from error
        return payload
