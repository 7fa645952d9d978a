"""Build the process's embedder from the settings (called by the composition roots)."""

from __future__ import annotations

from cairn.config import Settings
from cairn.embedding.embedder import BatchingEmbedder
from cairn.embedding.encoder import OnnxEncoder
from cairn.embedding.onnx_build import ensure_model


def load_embedder(settings: Settings) -> BatchingEmbedder:
    """The ONNX model (built on first use) behind the micro-batching async interface."""
    options = settings.embedding
    encoder = OnnxEncoder(
        ensure_model(settings.model_dir), threads=options.threads, max_tokens=options.max_tokens
    )
    return BatchingEmbedder(
        lambda texts: encoder.encode(texts),
        max_batch=options.max_batch,
        max_wait_ms=options.max_wait_ms,
        spans=encoder.token_spans,
    )
