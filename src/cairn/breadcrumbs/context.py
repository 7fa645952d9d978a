"""What every breadcrumb service works with: one transaction, on behalf of one caller."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from cairn.config import Limits
from cairn.embedding import Embedder
from cairn.principal import Principal
from cairn.transforms import Transforms


class BreadcrumbService:
    def __init__(
        self,
        session: AsyncSession,
        embedder: Embedder,
        limits: Limits,
        principal: Principal,
        transforms: Transforms | None = None,
    ) -> None:
        self.session = session
        self.embedder = embedder
        self.limits = limits
        self.principal = principal
        # The app passes its one Transforms, whose caches writes of schema definitions
        # invalidate; None (tests, tools) gets a private one with default limits.
        self.transforms = transforms or Transforms()
