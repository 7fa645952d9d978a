"""Local sentence embeddings (all-MiniLM-L6-v2 on onnxruntime) and keyword pointers.

- ``ensure_model(model_dir)`` builds the ONNX graph from the packaged weights once.
- ``OnnxEncoder`` is the synchronous encoder; ``BatchingEmbedder`` puts it behind the async
  ``Embedder`` interface with micro-batching; ``HashEmbedder`` is the in-memory twin.
- ``entity_keywords`` / ``extract_keywords`` make the keyword pointers for writes and reads.
"""

from cairn.embedding.embedder import (
    BatchingEmbedder,
    Embedder,
    EncodeFn,
    HashEmbedder,
    hash_encode,
)
from cairn.embedding.encoder import OnnxEncoder
from cairn.embedding.keywords import (
    STATE_TAGS,
    entity_keywords,
    extract_keywords,
    tag_pointers,
)
from cairn.embedding.onnx_build import (
    FUSED_MODEL_FILE,
    MODEL_FILE,
    TOKENIZER_FILE,
    build_onnx_model,
    ensure_model,
    weights_dir,
)
from cairn.embedding.types import EMBEDDING_DIM

__all__ = [
    "EMBEDDING_DIM",
    "FUSED_MODEL_FILE",
    "MODEL_FILE",
    "STATE_TAGS",
    "TOKENIZER_FILE",
    "BatchingEmbedder",
    "Embedder",
    "EncodeFn",
    "HashEmbedder",
    "OnnxEncoder",
    "build_onnx_model",
    "ensure_model",
    "entity_keywords",
    "extract_keywords",
    "hash_encode",
    "tag_pointers",
    "weights_dir",
]
