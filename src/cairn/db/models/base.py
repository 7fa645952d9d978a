"""What every table module shares: the metadata, the embedding width, timestamp columns."""

from __future__ import annotations

from sqlalchemy import Column, DateTime, MetaData, func

EMBEDDING_DIM = 384

metadata = MetaData()


def timestamp(name: str, *, nullable: bool = False) -> Column[object]:
    default = None if nullable else func.now()
    return Column(name, DateTime(timezone=True), nullable=nullable, server_default=default)
