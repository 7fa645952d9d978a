"""Constants shared by the embedding modules and their users (no heavy imports here)."""

from __future__ import annotations

from typing import Final

# all-MiniLM-L6-v2 hidden size; the width of the `embedding vector(384)` column.
EMBEDDING_DIM: Final = 384
