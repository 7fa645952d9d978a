"""A per-tenant webhook generation: every change to a tenant's webhooks or agent secrets
bumps it in the same transaction, and webhook delivery compares it with the generation its
cached targets were loaded at. A registration then takes effect for every event committed
after it, whatever the cache's age (``cairn.webhooks.targets``).

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-24
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "tenants",
        sa.Column("webhook_generation", sa.BigInteger, nullable=False, server_default="0"),
    )


def downgrade() -> None:
    op.drop_column("tenants", "webhook_generation")
