"""Python client for Cairn: ``Client`` (blocking) and ``AsyncClient`` (asyncio), one method
per route (``ROUTES``), typed answers (``cairn_client.models``), one exception tree
(``cairn_client.errors``), and a resuming event stream (``client.events(...)``)."""

from cairn_client._client import DEFAULT_URL, AsyncClient, Client
from cairn_client._retry import NO_RETRY, RetryPolicy
from cairn_client._routes import ROUTES
from cairn_client.errors import (
    CairnError,
    Conflict,
    Forbidden,
    InvalidInput,
    NotFound,
    RateLimited,
    Unauthorized,
    Unavailable,
    Unreachable,
    VersionMismatch,
)
from cairn_client.models import (
    BatchRecord,
    BatchResult,
    BreadcrumbUpdate,
    Event,
    PathFrame,
    Selector,
)
from cairn_client.sse import AsyncEventStream, EventStream

__all__ = [
    "DEFAULT_URL",
    "NO_RETRY",
    "ROUTES",
    "AsyncClient",
    "AsyncEventStream",
    "BatchRecord",
    "BatchResult",
    "BreadcrumbUpdate",
    "CairnError",
    "Client",
    "Conflict",
    "Event",
    "EventStream",
    "Forbidden",
    "InvalidInput",
    "NotFound",
    "PathFrame",
    "RateLimited",
    "RetryPolicy",
    "Selector",
    "Unauthorized",
    "Unavailable",
    "Unreachable",
    "VersionMismatch",
]
