"""Who is calling: the tenant every query is scoped to, and the acting agent."""

from __future__ import annotations

import uuid
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Principal:
    owner_id: uuid.UUID
    actor: str
