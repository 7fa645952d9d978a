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

    def __init__(
        self,
        model_dir: Path,
        *,
        threads: int = 2,
        max_tokens: int = 256,
        model_file: str = MODEL_FILE,
    ) -> None:
        if not 2 <= max_tokens <= _MAX_POSITIONS:
            raise ValueError(f"max_tokens must be within 2..{_MAX_POSITIONS}, got {max_tokens}")
        self.max_tokens = max_tokens
        self._tokenizer = _load_tokenizer(model_dir / TOKENIZER_FILE, max_tokens)
        # The same vocabulary without truncation: it says where a long text's pieces are.
        self._counter = Tokenizer.from_file(str(model_dir / TOKENIZER_FILE))
        self._counter.no_truncation()
        self._counter.no_padding()
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        # onnxruntime's pool threads spin-wait for work by default: ~35 ms of a core burnt
        # after every encode, even a 4 ms one. On 2 cores that is taken from the event loop
        # (requests, SSE fan-out) right after each write; woken threads cost ~3 ms instead.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session = ort.InferenceSession(
            str(model_dir / model_file), sess_options=options, providers=["CPUExecutionProvider"]
        )

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """The real token ids of each text, [CLS] and [SEP] included, without padding."""
        return [_real_ids(encoding) for encoding in self._tokenize(texts)]

    def token_spans(self, text: str) -> list[tuple[int, int]]:
        """Character offsets of every word-piece of ``text``, however long it is."""
        encoding = self._counter.encode(text, add_special_tokens=False)
        return [(int(start), int(end)) for start, end in encoding.offsets]

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Shape (len(texts), 384), float32, each row of unit length.

        Texts run in groups of similar length: padding costs as much compute as real
        tokens, and a batch pads everything to its longest text.
        """
        out = np.zeros((len(texts), EMBEDDING_DIM), dtype=np.float32)
        ids = self.token_ids(texts)
        for group in length_groups([len(row) for row in ids]):
            out[group] = self._run([ids[i] for i in group])
        return out

    def _run(self, rows: list[list[int]]) -> np.ndarray:
        width = max(len(row) for row in rows)
        input_ids = np.zeros((len(rows), width), dtype=np.int64)
        mask = np.zeros((len(rows), width), dtype=np.int64)
        for i, row in enumerate(rows):
            input_ids[i, : len(row)] = row
            mask[i, : len(row)] = 1
        feeds = {"input_ids": input_ids, "attention_mask": mask}
        (vectors,) = self._session.run(["sentence_embedding"], feeds)
        return np.asarray(vectors, dtype=np.float32)

    def _tokenize(self, texts: Sequence[str]) -> list[Encoding]:
        return self._tokenizer.encode_batch(list(texts))


def length_groups(lengths: Sequence[int], *, slack: float = 1.2, size: int = 32) -> list[list[int]]:
    """Indices grouped by similar length: within a group the longest is at most ``slack``
    times the shortest (plus a few tokens), and no group exceeds ``size``."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    groups: list[list[int]] = []
    for index in order:
        group = groups[-1] if groups else None
        if group and len(group) < size and lengths[index] <= lengths[group[0]] * slack + 4:
            group.append(index)
        else:
            groups.append([index])
    return groups


def _load_tokenizer(path: Path, max_tokens: int) -> Tokenizer:
    tokenizer = Tokenizer.from_file(str(path))
    # The packaged tokenizer.json pads every input to a fixed 128 and truncates at 128.
    # sentence-transformers truncates at 256 and pads to the longest text of the batch;
    # the attention mask then keeps padding out of the mean.
    tokenizer.enable_truncation(max_length=max_tokens)
    tokenizer.no_padding()  # the encoder pads each group of similar length itself
    return tokenizer


def _real_ids(encoding: Encoding) -> list[int]:
    return [i for i, m in zip(encoding.ids, encoding.attention_mask, strict=True) if m]
