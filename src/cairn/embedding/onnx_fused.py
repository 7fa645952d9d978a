"""The BERT encoder layer as onnxruntime's fused CPU kernels (the ``com.microsoft`` domain).

The same arithmetic as the standard-op layer in ``onnx_build``, in 5 kernels instead of ~25:
``Attention`` (one packed Q/K/V projection, scaled scores, masked softmax, heads merged),
``SkipLayerNormalization`` (bias + residual + LayerNorm) and ``BiasGelu`` (bias + erf-GELU).
onnxruntime's transformer optimizer produces these from a PyTorch export, but its pattern
matcher does not recognise the attention of a hand-built graph, so the builder emits them.
Every onnxruntime CPU build ships these kernels.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from cairn.embedding.onnx_build import BertConfig, Weights, _GraphBuilder

CONTRIB_DOMAIN = "com.microsoft"


def fused_encoder_layer(
    g: _GraphBuilder, x: str, mask_index: str, w: Weights, i: int, cfg: BertConfig
) -> str:
    """One encoder layer; ``mask_index`` is the int32 [batch, seq] attention mask (1 = real)."""
    p = f"encoder.layer.{i}"
    eps = cfg.layer_norm_eps
    attended = _attention(g, x, mask_index, w, f"{p}.attention.self", cfg)
    projected = g.op("MatMul", attended, _weight(g, w, f"{p}.attention.output.dense"))
    x = _skip_layer_norm(g, projected, x, w, f"{p}.attention.output", eps)
    hidden = g.op("MatMul", x, _weight(g, w, f"{p}.intermediate.dense"))
    hidden = g.contrib("BiasGelu", hidden, _bias(g, w, f"{p}.intermediate.dense"))
    ffn = g.op("MatMul", hidden, _weight(g, w, f"{p}.output.dense"))
    return _skip_layer_norm(g, ffn, x, w, f"{p}.output", eps)


def _attention(
    g: _GraphBuilder, x: str, mask_index: str, w: Weights, p: str, cfg: BertConfig
) -> str:
    # Packed [hidden, 3 * hidden] as the kernel wants it: Q, K and V side by side. The
    # kernel scales scores by 1/sqrt(head size) and masks padding with a large negative
    # value whose exp() is exactly 0, as the standard graph's does.
    names = ("query", "key", "value")
    packed = np.concatenate([w[f"{p}.{n}.weight"].T for n in names], axis=1)
    bias = np.concatenate([w[f"{p}.{n}.bias"] for n in names])
    weights = g.const(f"{p}.qkv.wt", packed.astype(np.float32))
    return g.contrib(
        "Attention",
        x,
        weights,
        g.const(f"{p}.qkv", bias.astype(np.float32)),
        mask_index,
        num_heads=cfg.num_heads,
    )


def _skip_layer_norm(
    g: _GraphBuilder, x: str, residual: str, w: Weights, p: str, eps: float
) -> str:
    """LayerNorm(x + dense bias + residual): the dense layer's bias rides in the kernel."""
    norm = f"{p}.LayerNorm"
    return g.contrib(
        "SkipLayerNormalization",
        x,
        residual,
        g.const(f"{norm}.weight", w[f"{norm}.weight"]),
        g.const(f"{norm}.bias", w[f"{norm}.bias"]),
        _bias(g, w, f"{p}.dense"),
        epsilon=eps,
    )


def _weight(g: _GraphBuilder, w: Weights, prefix: str) -> str:
    # torch Linear stores [out, in]; MatMul wants [in, out].
    return g.const(f"{prefix}.wt", w[f"{prefix}.weight"].T.astype(np.float32))


def _bias(g: _GraphBuilder, w: Weights, prefix: str) -> str:
    return g.const(prefix, w[f"{prefix}.bias"].astype(np.float32))
