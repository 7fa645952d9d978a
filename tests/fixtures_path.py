"""Where the shared fixtures live: the repo is `<root>/main`, the fixtures `<root>/shared`."""

from __future__ import annotations

from pathlib import Path

SHARED = Path(__file__).resolve().parents[2] / "shared"
FIXTURES = SHARED / "fixtures"
