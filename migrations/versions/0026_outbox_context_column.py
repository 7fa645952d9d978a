"""An outbox event's context in a column of its own.

The writes that copy the stored record into its event (an assembly's write, a create or
update through the API) built the payload as ``payload || jsonb_build_object(…,
'context', context)``: PostgreSQL decodes and re-encodes the whole context to make the new
document, ~0.5 ms of the statement for an assembly's ~60 KB context. They now copy the
stored context as it is into ``context`` and leave it out of ``payload``; the relay
publishes the payload with the context as its ``context`` key (``cairn.events.outbox
.published_body``). Other events keep their whole payload in ``payload`` and ``context``
NULL, as do rows written before this revision. ``EXTERNAL`` as the payload (revision 0024):
read once, never compressed.

Revision ID: 0026
Revises: 0025
Create Date: 2026-11-27
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0026"
down_revision: str | None = "0025"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("ALTER TABLE outbox ADD COLUMN context jsonb")
    op.execute("ALTER TABLE outbox ALTER COLUMN context SET STORAGE EXTERNAL")


def downgrade() -> None:
    # Events not yet published take their context back into the payload.
    op.execute(
        "UPDATE outbox SET payload = payload || jsonb_build_object('context', context)"
        " WHERE context IS NOT NULL"
    )
    op.execute("ALTER TABLE outbox DROP COLUMN context")
