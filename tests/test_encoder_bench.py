"""The encoder benchmark compares like with like (benchmarks/encoder.py): its unbucketed
configuration encodes the same vectors, and its ratios are to the baseline's medians."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from cairn.embedding import OnnxEncoder, ensure_model

# The benchmark's modules import each other as top-level modules.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from encoder import UnbucketedEncoder, summarise, workloads


def test_unbucketed_encoder_gives_the_bucketed_vectors(model_dir: Path) -> None:
    ensure_model(model_dir)
    texts = [w.texts[0] for w in workloads(16)] + ["short", "a much longer text " * 20]
    bucketed = OnnxEncoder(model_dir, threads=1).encode(texts)
    padded = UnbucketedEncoder(model_dir, threads=1).encode(texts)
    np.testing.assert_allclose(padded, bucketed, atol=1e-5)


def test_workloads_cover_each_batch_size_and_mixed_lengths() -> None:
    works = workloads(32)
    assert [w.batch for w in works] == [1, 8, 32, 32]
    turns = works[-1].texts
    assert len(turns) == 64
    assert max(map(len, turns)) > 4 * min(map(len, turns))  # lengths really do vary


def test_summary_is_median_rate_and_ratio_to_the_baseline() -> None:
    samples = {
        "base": {"w": {"wall": [10.0, 30.0, 20.0], "cpu": [5.0, 5.0, 5.0]}},
        "other": {"w": {"wall": [30.0, 50.0, 40.0], "cpu": [4.0, 6.0, 4.0]}},
    }
    table = summarise(samples, "base")
    assert table["base"]["w"] == {
        "texts_per_s": 20.0,
        "texts_per_cpu_s": 5.0,
        "wall_vs_baseline": 1.0,
        "cpu_vs_baseline": 1.0,
    }
    assert table["other"]["w"]["wall_vs_baseline"] == 2.0
    assert table["other"]["w"]["cpu_vs_baseline"] == 0.8
