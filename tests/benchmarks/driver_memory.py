"""Driver memory per passage of ``hierret embed --engine ray``, stage by stage.

Usage: ``python tests/benchmarks/driver_memory.py [CORPUS]`` (default ``scifact``;
``$HIERRET_DATA`` as for the tests). Measures, with :mod:`tracemalloc` (Python
allocations that are still live, so each stage's figure is what the driver holds
while the next runs), what the driver of ``--engine ray`` holds before Ray sees a
text: the loaded corpus, its hierarchy and passage texts, the distinct texts and
their cache keys, and the partition rows handed to ``ray.data.from_items`` with the
Arrow table it builds from them (pyarrow, as Ray Data does). Prints bytes per
passage for each; the resident set (psutil) is printed beside them for scale.
Until 2026-12-06 the command kept the corpus and its hierarchy through the run;
it now lets them go once the passage texts are made (``hierret.cli._passages``).
"""

from __future__ import annotations

import gc
import sys
import tracemalloc

import psutil

from hierret.cache import text_keys
from hierret.datasets import load
from hierret.embed import corpus_passages
from hierret.embed_ray import partitions
from hierret.encoders import HashEncoder
from hierret.hierarchy import build_hierarchy


def main(corpus: str = "scifact") -> None:
    proc = psutil.Process()
    gc.collect()
    tracemalloc.start()
    rss0 = proc.memory_info().rss
    marks: list[tuple[str, int]] = []

    def mark(stage: str) -> None:
        gc.collect()
        marks.append((stage, tracemalloc.get_traced_memory()[0]))

    bundle = load(corpus, questions=False)
    mark("corpus loaded")
    hierarchy = build_hierarchy(bundle.corpus, heading_styles=bundle.heading_styles)
    mark("hierarchy built")
    texts = corpus_passages(hierarchy)
    mark("passage texts")
    del bundle, hierarchy  # what hierret embed keeps from here on (cli._passages)
    mark("corpus and hierarchy let go")
    distinct = list(dict.fromkeys(texts))
    keys = text_keys(HashEncoder().identity, "passage", distinct)
    mark("distinct texts and their keys")
    rows = [{"pos": p, "text": [distinct[i] for i in p]} for p in partitions(distinct)]
    mark("partition rows")
    import pyarrow as pa

    table = pa.Table.from_pylist(rows)  # what ray.data.from_items makes of them
    marks.append(("+ Arrow table (from_items)", marks[-1][1] + table.nbytes))
    n = len(texts)
    chars = sum(map(len, distinct))
    print(f"{corpus}: {n} passages, {len(distinct)} distinct")
    print(f"  (mean {chars / len(distinct):.0f} characters a distinct passage, {len(keys)} keys)")
    for stage, held in marks:
        print(f"  {stage:34s} {held / n:8.0f} B/passage  ({held / 2**20:7.1f} MiB)")
    rss = proc.memory_info().rss - rss0
    print(f"  resident set grew by {rss / 2**20:.1f} MiB ({rss / n:.0f} B/passage)")


if __name__ == "__main__":
    main(*sys.argv[1:])
