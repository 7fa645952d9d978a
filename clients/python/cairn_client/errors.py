"""One exception tree: every failure of a call is a ``CairnError``.

An answer with an error status carries the server's ``{"error": code, "detail": message}``;
the subclass says which kind of failure it is, so callers catch what they can handle
(``except NotFound``) and let the rest rise.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import httpx


class CairnError(Exception):
    """A call that failed: ``status`` (``None`` when no answer came), the server's ``error``
    code and ``detail``, and the answer's ``headers``."""

    def __init__(
        self,
        status: int | None,
        error: str,
        detail: str,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(f"{status or 'no answer'} {error}: {detail}")
        self.status = status
        self.error = error
        self.detail = detail
        self.headers: dict[str, str] = dict(headers or {})


class InvalidInput(CairnError):
    """400, 413, 422 or 431: the request was refused as it is; nothing was changed."""


class Unauthorized(CairnError):
    """401: no token, or one the server does not accept."""


class Forbidden(CairnError):
    """403: the token's roles or the record's owner do not allow it."""


class NotFound(CairnError):
    """404: no such record (or another tenant's)."""


class Conflict(CairnError):
    """409: e.g. an ``Idempotency-Key`` reused with another body, or a name taken."""


class VersionMismatch(CairnError):
    """412: ``If-Match`` named a version that is no longer current."""


class RateLimited(CairnError):
    """429: over the caller's rate or stream limit; ``retry_after`` says when to come back."""

    @property
    def retry_after(self) -> str | None:
        return self.headers.get("retry-after")


class Unavailable(CairnError):
    """503: the database or NATS is unreachable, or the server is at capacity."""

    @property
    def retry_after(self) -> str | None:
        return self.headers.get("retry-after")


class Unreachable(CairnError):
    """No answer at all: the connection failed or timed out."""


_BY_STATUS: dict[int, type[CairnError]] = {
    400: InvalidInput,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    412: VersionMismatch,
    413: InvalidInput,
    422: InvalidInput,
    429: RateLimited,
    431: InvalidInput,
    503: Unavailable,
}


def error_from(response: httpx.Response) -> CairnError:
    """The exception for an answer with an error status (its body must have been read)."""
    error, detail = f"http_{response.status_code}", response.text[:2000]
    try:
        body = json.loads(response.content)
    except ValueError:
        body = None
    if isinstance(body, dict) and "error" in body:
        error, detail = str(body["error"]), str(body.get("detail", ""))
    kind = _BY_STATUS.get(response.status_code, CairnError)
    headers = {name.lower(): value for name, value in response.headers.items()}
    return kind(response.status_code, error, detail, headers)


def unreachable(error: httpx.TransportError) -> Unreachable:
    return Unreachable(None, "unreachable", f"{type(error).__name__}: {error}"[:500])
