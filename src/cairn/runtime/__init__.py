"""The embedded PostgreSQL (+ pgvector) and NATS JetStream behind ``cairn up`` and the tests."""

from cairn.runtime.nats import EmbeddedNats
from cairn.runtime.ports import EmbeddedServerError, free_port, wait_for_port
from cairn.runtime.postgres import EmbeddedPostgres

__all__ = [
    "EmbeddedNats",
    "EmbeddedPostgres",
    "EmbeddedServerError",
    "free_port",
    "wait_for_port",
]
