"""Benchmark the analyzer, dense search and the chunker against their peers.

Side by side in one run, min and median over ``--repeat`` runs, with ratios
(hierret's time / the peer's):

* the English analyzer vs ``bm25s.tokenize`` (English stop words, PyStemmer)
  on the SciFact corpus (``title + " " + text``); bm25s is skipped if absent;
* dense search (top 10, 300 queries, 384-d unit vectors, as many units as
  SciFact has passages) by :class:`hierret.search.vectors.index.VectorIndex` vs a bare numpy
  matrix product + ``argpartition`` and a bare ``faiss.IndexFlatIP``. The peers give
  each query's top rows by float32 score (numpy's unordered); the index gives them
  ranked by exact scores with its tie order, as ``(id, score)`` lists, so it does more
  work than either: the goal of beating the bare product is a hard one;
* the chunker's time per character on the corpus repeated 1x, 4x and 16x and
  on single lines of 10-160 kB without a newline (``"e.g. "`` and words), in
  CPU time: the chunker is single-threaded, and on a shared machine a long
  call is preempted more often than a short one, which bends wall time per
  character upwards with length even for a linear algorithm.

Usage::

    python tests/benchmarks/bench_speed.py [--data DIR] [--repeat 3] [--json out.json]

A script, not a test (pytest does not collect ``bench_*.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import faiss
import numpy as np

from hierret.search.rankers import get_analyzer
from hierret.search.vectors.index import VectorIndex
from hierret.structure.chunking import chunk_text

REPO_ROOT = Path(__file__).resolve().parents[2]


def timed(fn: Callable[[], object], repeat: int) -> dict[str, float]:
    """Min and median wall time of ``repeat`` calls (one warm-up call first), and the
    least CPU time of this process (``min_cpu_s``: what other processes cannot inflate)."""
    fn()
    times, cpu = [], []
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        fn()
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return {"min_s": min(times), "median_s": statistics.median(times), "min_cpu_s": min(cpu)}


def scifact_texts(data: Path) -> list[str]:
    with (data / "scifact" / "corpus.jsonl").open(encoding="utf-8") as f:
        return [f"{d['title']} {d['text']}" for d in map(json.loads, f)]


def bench_analyzer(texts: list[str], repeat: int) -> dict[str, Any]:
    english = get_analyzer("english")
    out: dict[str, Any] = {"hierret": timed(lambda: [english(t) for t in texts], repeat)}
    try:
        import bm25s
        import Stemmer
    except ImportError:
        return out
    stemmer = Stemmer.Stemmer("english")
    out["bm25s"] = timed(
        lambda: bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False), repeat
    )
    out["ratio_vs_bm25s"] = out["hierret"]["min_s"] / out["bm25s"]["min_s"]
    return out


def bench_dense(n_units: int, repeat: int, n_queries: int = 300, k: int = 10) -> dict[str, Any]:
    rng = np.random.default_rng(0)
    index = VectorIndex(
        [str(i) for i in range(n_units)], rng.standard_normal((n_units, 384)), "bench"
    )
    queries = np.ascontiguousarray(index._queries(rng.standard_normal((n_queries, 384))))
    flat = faiss.IndexFlatIP(384)
    flat.add(np.ascontiguousarray(index.vectors))
    vectors = index.vectors
    out: dict[str, Any] = {
        "units": n_units,
        "queries": n_queries,
        "hierret": timed(lambda: index.search(queries, k, "bench"), repeat),
        "numpy": timed(lambda: np.argpartition(-(queries @ vectors.T), k - 1, axis=1), repeat),
        "faiss": timed(lambda: flat.search(queries, k), repeat),
    }
    for peer in ("numpy", "faiss"):
        out[f"ratio_vs_{peer}"] = out["hierret"]["min_s"] / out[peer]["min_s"]
    return out


def bench_chunker(texts: list[str], repeat: int) -> dict[str, Any]:
    out: dict[str, Any] = {"corpus": {}, "lines": {}}
    for times in (1, 4, 16):
        docs = [t * times for t in texts[:300]]
        chars = sum(map(len, docs))
        r = timed(lambda docs=docs: [chunk_text(d) for d in docs], repeat)
        out["corpus"][f"{times}x"] = {**r, "us_per_char": r["min_cpu_s"] / chars * 1e6}
    words = " ".join(" ".join(texts[:50]).split())  # one line: newlines gone
    lines = {
        f"{kind} {kb} kB": (unit * (kb * 1000 // len(unit) + 1))[: kb * 1000]
        for kind, unit in (("e.g.", "e.g. "), ("words", words))
        for kb in (10, 20, 40, 80, 160)
    }
    # The machine's speed changes on a scale of seconds (this shared VM's CPU ran the
    # same call at about 0.27 or 0.43 us/char for a while): every round times every
    # line once, so each length meets the same states; the least CPU time of 15 rounds.
    cpu: dict[str, list[float]] = {name: [] for name in lines}
    wall: dict[str, list[float]] = {name: [] for name in lines}
    for _ in range(max(repeat, 15)):
        for name, line in lines.items():
            start, start_cpu = time.perf_counter(), time.process_time()
            chunk_text(line)
            wall[name].append(time.perf_counter() - start)
            cpu[name].append(time.process_time() - start_cpu)
    for name, line in lines.items():
        out["lines"][name] = {
            "min_s": min(wall[name]),
            "median_s": statistics.median(wall[name]),
            "min_cpu_s": min(cpu[name]),
            "us_per_char": min(cpu[name]) / len(line) * 1e6,
        }
    return out


def main() -> None:
    default = os.environ.get("HIERRET_DATA", str(REPO_ROOT.parent / "shared" / "datasets"))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path(default))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--units",
        type=int,
        default=10_000,
        help="dense index size (SciFact's passages, about 10,000)",
    )
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    texts = scifact_texts(args.data)
    result = {
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
        },
        "repeat": args.repeat,
        "analyzer": bench_analyzer(texts, args.repeat),
        "dense": bench_dense(args.units, args.repeat),
        "chunker": bench_chunker(texts, args.repeat),
    }
    print(json.dumps(result, indent=1))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
