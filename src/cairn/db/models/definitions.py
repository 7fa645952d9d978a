"""What processes cache from definitions: the change counter and the domain centroids."""

from __future__ import annotations

from pgvector.sqlalchemy import Vector
from sqlalchemy import (
    BigInteger,
    Column,
    ForeignKey,
    Table,
    Text,
)
from sqlalchemy.dialects.postgresql import UUID

from cairn.db.models.base import EMBEDDING_DIM, metadata

# Bumped by a trigger on every write of an agent, blacklist or schema definition (revision
# 0011): every worker compares it with what its caches were loaded at.
definition_generations = Table(
    "definition_generations",
    metadata,
    Column("owner_id", UUID(as_uuid=True), ForeignKey("tenants.id"), primary_key=True),
    Column("generation", BigInteger, nullable=False),
)

# The unit centroids of each domain's example embeddings, per definition version (the
# definition's checksum; revision 0013): the worker, which runs no encoder, reads them here.
domain_centroids = Table(
    "domain_centroids",
    metadata,
    Column("owner_id", UUID(as_uuid=True), ForeignKey("tenants.id"), primary_key=True),
    Column("version", Text, primary_key=True),
    Column("domain", Text, primary_key=True),
    Column("centroid", Vector(EMBEDDING_DIM), nullable=False),
)
