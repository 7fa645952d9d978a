"""The `cairn` command's own outputs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from tests.fixtures_path import FIXTURES
from typer.testing import CliRunner

from cairn.cli import app


def test_embed_prints_one_reference_vector_per_line(
    model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CAIRN_EMBEDDING__MODEL_DIR", str(model_dir))
    from cairn.config import get_settings

    get_settings.cache_clear()
    reference = json.loads((FIXTURES / "minilm_reference.json").read_text())
    cases = reference["cases"][:3]
    texts = [case["text"] for case in cases]
    result = CliRunner().invoke(app, ["embed", *texts])
    get_settings.cache_clear()
    assert result.exit_code == 0, result.output
    lines = [line for line in result.stdout.splitlines() if line.startswith("[")]
    assert len(lines) == len(texts)
    for line, case in zip(lines, cases, strict=True):
        vector = np.array(json.loads(line))
        expected = np.array(case["embedding"])
        assert vector.shape == (384,)
        cosine = float(vector @ expected / np.linalg.norm(vector) / np.linalg.norm(expected))
        assert cosine >= 0.9999
