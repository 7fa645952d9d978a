"""Table definitions (SQLAlchemy Core), one module per part of the domain. Alembic
revisions in ``migrations/`` create them; every table is importable from here."""

from cairn.db.models.base import EMBEDDING_DIM, metadata
from cairn.db.models.definitions import (
    definition_generations,
    domain_centroids,
)
from cairn.db.models.events import (
    event_dead_letters,
    outbox,
    webhook_dlq,
    webhooks,
)
from cairn.db.models.identity import (
    agent_secrets,
    agents,
    secret_audit,
    secrets,
)
from cairn.db.models.operations import (
    assemblies,
    record_processing,
    reindex_jobs,
)
from cairn.db.models.records import (
    breadcrumb_acl,
    breadcrumb_chunks,
    breadcrumb_edges,
    breadcrumb_history,
    breadcrumbs,
    idempotency_keys,
    tenants,
)

__all__ = [
    "EMBEDDING_DIM",
    "agent_secrets",
    "agents",
    "assemblies",
    "breadcrumb_acl",
    "breadcrumb_chunks",
    "breadcrumb_edges",
    "breadcrumb_history",
    "breadcrumbs",
    "definition_generations",
    "domain_centroids",
    "event_dead_letters",
    "idempotency_keys",
    "metadata",
    "outbox",
    "record_processing",
    "reindex_jobs",
    "secret_audit",
    "secrets",
    "tenants",
    "webhook_dlq",
    "webhooks",
]
