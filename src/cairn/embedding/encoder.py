"""Synchronous MiniLM sentence encoder: tokenizers + onnxruntime on the CPU."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import onnxruntime as ort
from tokenizers import Encoding, Tokenizer

from cairn.embedding.onnx_build import MODEL_FILE, TOKENIZER_FILE
from cairn.embedding.types import EMBEDDING_DIM

# BERT's position table has 512 rows; nothing longer can be encoded.
_MAX_POSITIONS = 512


class OnnxEncoder:
    """Encodes texts into L2-normalised 384-d vectors, matching sentence-transformers.

    Not async: callers run it off the event loop (see ``BatchingEmbedder``). The ORT
    session is thread-safe, but one worker thread is the intended use.
    """

    def __init__(self, model_dir: Path, *, threads: int = 2, max_tokens: int = 256) -> None:
        if not 2 <= max_tokens <= _MAX_POSITIONS:
            raise ValueError(f"max_tokens must be within 2..{_MAX_POSITIONS}, got {max_tokens}")
        self.max_tokens = max_tokens
        self._tokenizer = _load_tokenizer(model_dir / TOKENIZER_FILE, max_tokens)
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self._session = ort.InferenceSession(
            str(model_dir / MODEL_FILE), sess_options=options, providers=["CPUExecutionProvider"]
        )

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """The real token ids of each text, [CLS] and [SEP] included, without padding."""
        return [_real_ids(encoding) for encoding in self._tokenize(texts)]

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Shape (len(texts), 384), float32, each row of unit length."""
        if not texts:
            return np.zeros((0, EMBEDDING_DIM), dtype=np.float32)
        encodings = self._tokenize(texts)
        feeds = {
            "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
        }
        (vectors,) = self._session.run(["sentence_embedding"], feeds)
        return np.asarray(vectors, dtype=np.float32)

    def _tokenize(self, texts: Sequence[str]) -> list[Encoding]:
        return self._tokenizer.encode_batch(list(texts))


def _load_tokenizer(path: Path, max_tokens: int) -> Tokenizer:
    tokenizer = Tokenizer.from_file(str(path))
    # The packaged tokenizer.json pads every input to a fixed 128 and truncates at 128.
    # sentence-transformers truncates at 256 and pads to the longest text of the batch;
    # the attention mask then keeps padding out of the mean.
    tokenizer.enable_truncation(max_length=max_tokens)
    tokenizer.enable_padding(pad_id=0, pad_type_id=0, pad_token="[PAD]")
    return tokenizer


def _real_ids(encoding: Encoding) -> list[int]:
    return [i for i, m in zip(encoding.ids, encoding.attention_mask, strict=True) if m]
