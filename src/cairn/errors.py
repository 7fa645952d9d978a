"""One exception tree for the whole service; each error carries its HTTP status.

The API renders every ``CairnError`` as ``{"error": code, "detail": message}``.
"""

from __future__ import annotations

from typing import Any


class CairnError(Exception):
    status_code = 500
    code = "internal_error"

    def __init__(
        self,
        detail: str,
        *,
        extra: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(detail)
        self.detail = detail
        self.extra = extra or {}
        self.headers = headers or {}


class BadRequest(CairnError):
    status_code = 400
    code = "bad_request"


class Unauthorized(CairnError):
    """No credential, or one that does not verify; always asks for a Bearer token."""

    status_code = 401
    code = "unauthorized"

    def __init__(self, detail: str, *, extra: dict[str, Any] | None = None) -> None:
        super().__init__(detail, extra=extra, headers={"WWW-Authenticate": "Bearer"})


class Forbidden(CairnError):
    status_code = 403
    code = "forbidden"


class NotFound(CairnError):
    status_code = 404
    code = "not_found"


class Conflict(CairnError):
    status_code = 409
    code = "conflict"


class PreconditionFailed(CairnError):
    status_code = 412
    code = "version_mismatch"


class PayloadTooLarge(CairnError):
    status_code = 413
    code = "payload_too_large"


class InvalidInput(CairnError):
    status_code = 422
    code = "invalid_input"


class TooManyRequests(CairnError):
    status_code = 429
    code = "too_many_requests"


class ConfigurationError(CairnError):
    """Settings that cannot work (raised before serving, never over HTTP)."""

    code = "configuration_error"


class Unavailable(CairnError):
    status_code = 503
    code = "unavailable"
