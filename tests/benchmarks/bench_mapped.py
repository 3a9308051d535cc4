"""Exact search over a cache's memory-mapped shards against the one-matrix index.

Writes ``--records`` seeded random unit vectors (dimension ``--dim``) into a
fresh :class:`hierret.encoders.cache.VectorCache` in ``--shards`` shards, opens them with
:meth:`~hierret.encoders.cache.VectorCache.mapped` (no vector read), and searches
``--queries`` queries with :class:`hierret.search.vectors.index.MappedIndex` and with
:class:`hierret.search.vectors.index.VectorIndex` over the same rows loaded into memory. It
prints each side's best of ``--repeat`` wall times, their ratio (mapped /
in-memory), the resident memory each needed beyond the process's start, and
whether the two rankings are identical (ids, order and every score's bits),
which they must be.

Usage::

    python tests/benchmarks/bench_mapped.py [--records 200000] [--dim 384] [--shards 8]
        [--queries 20] [--k 100] [--repeat 3]

A script, not a test (pytest does not collect it); times and memory are facts
of the machine, the identity of the rankings is the finding.
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time

import numpy as np

from hierret.encoders import EncoderIdentity
from hierret.encoders.cache import VectorCache, text_keys
from hierret.search.vectors.index import MappedIndex, VectorIndex


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, default=200_000)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--shards", type=int, default=8)
    ap.add_argument("--queries", type=int, default=20)
    ap.add_argument("--k", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    ident = EncoderIdentity("bench/mapped", "random", "v1", "fp32", args.dim, 512)
    ids = [f"u{i:08d}" for i in range(args.records)]
    keys = text_keys(ident, "passage", ids)
    with tempfile.TemporaryDirectory() as tmp:
        cache = VectorCache(tmp, max_shards=args.shards + 1)
        for part in np.array_split(np.arange(args.records), args.shards):
            vecs = rng.standard_normal((len(part), args.dim)).astype(np.float32)
            vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
            cache.put(ident, [keys[i] for i in part], vecs)
        queries = rng.standard_normal((args.queries, args.dim)).astype(np.float32)
        by_key = dict(zip(keys, ids, strict=True))
        start = _rss_mb()
        parts = [([by_key[k] for k in ks], v) for ks, v in VectorCache(tmp).mapped(ident)]
        mapped = MappedIndex(parts, ident)
        t_mapped, got = _best(lambda: mapped.search(queries, args.k, ident), args.repeat)
        rss_mapped = _rss_mb() - start
        whole = VectorIndex(
            [u for part_ids, _ in parts for u in part_ids],
            np.vstack([np.asarray(v) for _, v in parts]),
            ident,
        )
        t_whole, want = _best(lambda: whole.search(queries, args.k, ident), args.repeat)
        rss_whole = _rss_mb() - start
    print(f"{args.records:,} records x {args.dim} in {args.shards} shards, {args.queries} "
          f"queries, k={args.k}")  # fmt: skip
    print(f"mapped   {t_mapped:.3f} s  (peak RSS +{rss_mapped:.0f} MB)")
    print(f"in memory {t_whole:.3f} s  (peak RSS +{rss_whole:.0f} MB)")
    print(f"ratio mapped / in memory: {t_mapped / t_whole:.2f}; identical rankings: {got == want}")


def _best(run, repeat):  # type: ignore[no-untyped-def]
    best, out = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        out = run()
        best = min(best, time.perf_counter() - start)
    return best, out


if __name__ == "__main__":
    main()
