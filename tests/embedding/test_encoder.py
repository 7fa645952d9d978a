"""The ONNX MiniLM matches sentence-transformers on the reference fixture."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tests.fixtures_path import FIXTURES

from cairn.embedding import (
    EMBEDDING_DIM,
    FUSED_MODEL_FILE,
    MODEL_FILE,
    TOKENIZER_FILE,
    OnnxEncoder,
    build_onnx_model,
    ensure_model,
    weights_dir,
)

REFERENCE = json.loads((FIXTURES / "minilm_reference.json").read_text(encoding="utf-8"))
CASES: list[dict[str, Any]] = REFERENCE["cases"]


@pytest.fixture(scope="session")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return ensure_model(tmp_path_factory.mktemp("models"))


@pytest.fixture(scope="session")
def encoder(model_dir: Path) -> OnnxEncoder:
    return OnnxEncoder(model_dir, threads=2, max_tokens=256)


def _case_id(case: dict[str, Any]) -> str:
    return case["text"][:30] or "<empty>"


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_token_ids_match_sentence_transformers(encoder: OnnxEncoder, case: dict[str, Any]) -> None:
    assert encoder.token_ids([case["text"]]) == [case["token_ids"]]


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_vector_matches_sentence_transformers(encoder: OnnxEncoder, case: dict[str, Any]) -> None:
    (vector,) = encoder.encode([case["text"]])
    reference = np.asarray(case["embedding"], dtype=np.float64)
    cosine = float(vector @ reference) / float(np.linalg.norm(reference))
    assert cosine >= 0.9999


def test_fused_graph_gives_the_reference_vectors(model_dir: Path) -> None:
    """The fused-kernel graph the encoder benchmark weighs must stay a pure speed lever."""
    build_onnx_model(weights_dir(), model_dir / FUSED_MODEL_FILE, fused=True)
    fused = OnnxEncoder(model_dir, model_file=FUSED_MODEL_FILE)
    vectors = fused.encode([c["text"] for c in CASES])
    reference = np.asarray([c["embedding"] for c in CASES], dtype=np.float64)
    reference /= np.linalg.norm(reference, axis=1, keepdims=True)
    assert float(np.min(np.sum(vectors * reference, axis=1))) >= 0.9999


def test_reference_includes_a_text_truncated_at_max_tokens(encoder: OnnxEncoder) -> None:
    lengths = [len(ids) for ids in encoder.token_ids([c["text"] for c in CASES])]
    assert max(lengths) == 256


def test_vectors_are_unit_length_float32(encoder: OnnxEncoder) -> None:
    vectors = encoder.encode([c["text"] for c in CASES])
    assert vectors.shape == (len(CASES), EMBEDDING_DIM)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_batch_of_mixed_lengths_equals_one_by_one(encoder: OnnxEncoder) -> None:
    texts = [c["text"] for c in CASES]  # 2 to 256 tokens: heavy padding in one batch
    batched = encoder.encode(texts)
    single = np.vstack([encoder.encode([t]) for t in texts])
    np.testing.assert_allclose(batched, single, atol=1e-5)


def test_empty_input_gives_empty_matrix(encoder: OnnxEncoder) -> None:
    assert encoder.encode([]).shape == (0, EMBEDDING_DIM)
    assert encoder.token_ids([]) == []


def test_max_tokens_is_configurable(model_dir: Path) -> None:
    short = OnnxEncoder(model_dir, max_tokens=16)
    (ids,) = short.token_ids(["word " * 100])
    assert len(ids) == 16
    assert ids[0] == 101 and ids[-1] == 102  # [CLS] ... [SEP] survive truncation


def test_max_tokens_beyond_position_table_is_rejected(model_dir: Path) -> None:
    with pytest.raises(ValueError, match="max_tokens"):
        OnnxEncoder(model_dir, max_tokens=513)


def _cpu_seconds(threads: set[str]) -> float:
    ticks = 0
    for tid in threads:
        stat = Path(f"/proc/self/task/{tid}/stat").read_text()
        fields = stat.rsplit(")", 1)[1].split()
        ticks += int(fields[11]) + int(fields[12])  # utime, stime
    return ticks / os.sysconf("SC_CLK_TCK")


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux /proc")
def test_pool_threads_sleep_between_encodes(model_dir: Path) -> None:
    """onnxruntime's pool threads spin-wait by default: ~35 ms of a core after each encode,
    which a 2-core server takes from its event loop."""
    before = set(os.listdir("/proc/self/task"))
    encoder = OnnxEncoder(model_dir, threads=2)
    encoder.encode(["the pool is up"])
    pool = set(os.listdir("/proc/self/task")) - before
    assert pool, "threads=2 runs one pool thread beside the caller"
    idle = 0.0
    for _ in range(5):
        encoder.encode(["a short sentence"])
        started = _cpu_seconds(pool)
        time.sleep(0.1)
        idle += _cpu_seconds(pool) - started
    assert idle < 0.03, f"{idle * 1000:.0f} ms of CPU in 0.5 s without work"


def test_ensure_model_reuses_existing_files(model_dir: Path) -> None:
    before = (model_dir / MODEL_FILE).stat().st_mtime_ns
    assert ensure_model(model_dir) == model_dir
    assert (model_dir / MODEL_FILE).stat().st_mtime_ns == before


def test_concurrent_ensure_model_leaves_complete_files(tmp_path: Path) -> None:
    errors: list[BaseException] = []

    def build() -> None:
        try:
            ensure_model(tmp_path)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=build) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([MODEL_FILE, TOKENIZER_FILE])
    (vector,) = OnnxEncoder(tmp_path).encode([CASES[0]["text"]])
    assert float(vector @ np.asarray(CASES[0]["embedding"])) > 0.9999


def test_length_groups_bound_padding_and_keep_every_index() -> None:
    from cairn.embedding.encoder import length_groups

    lengths = [10, 50, 11, 49, 12, 200, 48, 9]
    groups = length_groups(lengths, slack=1.2, size=3)
    assert sorted(i for group in groups for i in group) == list(range(len(lengths)))
    for group in groups:
        assert len(group) <= 3
        assert max(lengths[i] for i in group) <= min(lengths[i] for i in group) * 1.2 + 4
