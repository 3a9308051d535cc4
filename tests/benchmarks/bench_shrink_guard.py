"""What the SIGBUS guard costs: size checks before mapped bytes are touched.

:func:`hierret._mapped.check_extents` runs one ``fstat`` per mapped file before
each cache operation (``VectorCache`` lookups, per shard: the shard and its
key index) and before each block :class:`hierret.search.vectors.index.MappedIndex` reads. This
script times the same work with the check on and with it replaced by a no-op:

* ``--lookups`` lookups of ``--batch`` random stored keys in a cache of
  ``--shards`` shards of ``--records`` records in all (dimension ``--dim``);
* ``--queries`` exact searches with :class:`~hierret.search.vectors.index.MappedIndex` over
  the same cache, ``--block-rows`` rows a block.

It prints the best of ``--repeat`` wall times of each side and the added
microseconds per operation.

Usage::

    python tests/benchmarks/bench_shrink_guard.py [--records 200000] [--dim 384]
        [--shards 32] [--lookups 2000] [--batch 10] [--queries 20] [--repeat 5]

A script, not a test; times are facts of the machine (note the load).
"""

from __future__ import annotations

import argparse
import contextlib
import tempfile
import time
from collections.abc import Callable, Iterator

import numpy as np

import hierret.encoders.cache._format as cache_mod  # where shards check their files
import hierret.search.vectors.index as index_mod
from hierret.encoders import EncoderIdentity
from hierret.encoders.cache import VectorCache, text_keys
from hierret.search.vectors.index import MappedIndex


@contextlib.contextmanager
def _unchecked() -> Iterator[None]:
    saved = cache_mod.check_extents, index_mod.check_mapped
    cache_mod.check_extents = index_mod.check_mapped = lambda arrays, what: None  # type: ignore[assignment]
    try:
        yield
    finally:
        cache_mod.check_extents, index_mod.check_mapped = saved


def _best(run: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        run()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, default=200_000)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--shards", type=int, default=32)
    ap.add_argument("--lookups", type=int, default=2000)
    ap.add_argument("--batch", type=int, default=10)
    ap.add_argument("--queries", type=int, default=20)
    ap.add_argument("--block-rows", type=int, default=1 << 16)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    ident = EncoderIdentity("bench", "synthetic", "v1", "fp32", args.dim, 512)
    texts = [f"text {i}" for i in range(args.records)]
    keys = text_keys(ident, "passage", texts)
    with tempfile.TemporaryDirectory() as root:
        writer = VectorCache(root, max_shards=args.shards + 1)
        for part in np.array_split(np.arange(args.records), args.shards):
            vecs = rng.standard_normal((len(part), args.dim)).astype(np.float32)
            vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
            writer.put(ident, [keys[i] for i in part], vecs)
        cache = VectorCache(root, max_shards=args.shards + 1)  # every shard mapped
        picks = [
            [keys[i] for i in rng.integers(0, args.records, args.batch)]
            for _ in range(args.lookups)
        ]
        queries = rng.standard_normal((args.queries, args.dim)).astype(np.float32)
        index = MappedIndex(cache.mapped(ident), ident, block_rows=args.block_rows)

        def lookups() -> None:
            for p in picks:
                cache.get(ident, p)

        def search() -> None:
            index.search(queries, 10, ident)

        for label, run, per in (("lookups", lookups, args.lookups), ("search", search, 1)):
            run()  # warm the page cache
            on = _best(run, args.repeat)
            with _unchecked():
                off = _best(run, args.repeat)
            print(
                f"{label}: checked {on:.4f} s, unchecked {off:.4f} s, "
                f"+{(on - off) / per * 1e6:.1f} us per {'lookup' if per > 1 else 'search'} "
                f"({(on / off - 1) * 100:+.1f}%)"
            )


if __name__ == "__main__":
    main()
