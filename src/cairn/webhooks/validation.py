"""Checks on webhook registrations, applied before anything is written."""

from __future__ import annotations

import ipaddress
from typing import Any
from urllib.parse import urlsplit

from cairn.breadcrumbs.validation import canonical_json, check_json, check_text
from cairn.config import Settings
from cairn.errors import InvalidInput
from cairn.events.selectors import Selector

MAX_SELECTOR_BYTES = 16 * 1024
_DEFAULT_PORTS = {"http": 80, "https": 443}
_LOCAL_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"}


def check_webhook_url(url: str, settings: Settings) -> str:
    """An absolute http(s) URL with a host that is not this service; returned stripped."""
    url = url.strip()
    check_text(url, "url")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as error:
        raise InvalidInput(f"url: not a valid URL ({error})") from error
    if parts.scheme.lower() not in _DEFAULT_PORTS:
        raise InvalidInput("url: only http and https URLs are allowed")
    host = (parts.hostname or "").rstrip(".")
    if not host:
        raise InvalidInput("url: the URL has no host")
    if any(char.isspace() for char in url):
        raise InvalidInput("url: whitespace is not allowed in a URL")
    port = port or _DEFAULT_PORTS[parts.scheme.lower()]
    if is_own_address(host, port, settings):
        raise InvalidInput("url: webhooks may not point at this service itself")
    return url


def is_own_address(host: str, port: int, settings: Settings) -> bool:
    """The service's configured address, or any local address on the service's port."""
    if port != settings.port:
        return False
    host = host.lower()
    return host == settings.host.lower().strip("[]") or _is_local(host)


def _is_local(host: str) -> bool:
    if host in _LOCAL_NAMES or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_loopback or address.is_unspecified


def selector_document(selector: Selector | None) -> dict[str, Any] | None:
    """The selector as stored (only the conditions given), checked for what PostgreSQL
    refuses and for size."""
    if selector is None:
        return None
    document = selector.model_dump(exclude_none=True)
    check_json(document, "selector")
    if len(canonical_json(document)) > MAX_SELECTOR_BYTES:
        raise InvalidInput(f"selector: larger than {MAX_SELECTOR_BYTES} bytes")
    return document


def check_secret(secret: str) -> str:
    check_text(secret, "secret")
    if not secret.strip():
        raise InvalidInput("secret: may not be blank")
    return secret
