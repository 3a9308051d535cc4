"""Driver memory per passage of ``hierret embed --engine ray``, stage by stage.

Usage: ``python tests/benchmarks/driver_memory.py [CORPUS] [--json]`` (default
``scifact``; ``$HIERRET_DATA`` as for the tests; ``--json``: one JSON line of the
figures instead, as ``docs/cost_model.py`` reads them). Measures, with :mod:`tracemalloc` (Python
allocations that are still live, so each stage's figure is what the driver holds
while the next runs), what the driver of ``--engine ray`` holds before Ray sees a
text: the loaded corpus, its hierarchy and passage texts, the distinct texts and
their cache keys, and the partition rows handed to ``ray.data.from_items`` with the
Arrow table it builds from them (pyarrow, as Ray Data does). Prints bytes per
passage for each; the resident set (psutil) is printed beside them for scale.
Until 2026-12-06 the command kept the corpus and its hierarchy through the run;
it now lets them go once the passage texts are made (``hierret.cli._run._passages``).

Since 2026-12-07 a BEIR corpus is streamed (:mod:`hierret.encoders.embed.stream`): the
driver keeps keys and locators, not texts. ``streamed`` measures that path the
same way, stage by stage (the driver's pass over the file, the rows the cache
lacks, the partitions, the rows handed to ``ray.data.from_items`` and their
Arrow table), with each stage's peak of the traced memory, on the first quarter, half
and all of the corpus's documents (a BEIR corpus only), so that the bytes a
passage are measured against corpus size.
"""

from __future__ import annotations

import gc
import json
import shutil
import sys
import tempfile
import tracemalloc
from pathlib import Path
from typing import Any

import psutil

from hierret.datasets import load
from hierret.encoders import HashEncoder
from hierret.encoders.cache import text_keys
from hierret.encoders.embed.local import corpus_passages
from hierret.encoders.embed.ray import partitions
from hierret.structure.hierarchy import build_hierarchy


def measure(corpus: str = "scifact") -> dict[str, Any]:
    """Documents, passages, bytes held after each stage, and the resident set's growth."""
    proc = psutil.Process()
    gc.collect()
    tracemalloc.start()
    rss0 = proc.memory_info().rss
    marks: list[tuple[str, int]] = []

    def mark(stage: str) -> None:
        gc.collect()
        marks.append((stage, tracemalloc.get_traced_memory()[0]))

    bundle = load(corpus, questions=False)
    documents = len(bundle.corpus)
    mark("corpus loaded")
    hierarchy = build_hierarchy(bundle.corpus, heading_styles=bundle.heading_styles)
    mark("hierarchy built")
    texts = corpus_passages(hierarchy)
    mark("passage texts")
    del bundle, hierarchy  # what hierret embed keeps from here on (cli._run._passages)
    mark("corpus and hierarchy let go")
    distinct = list(dict.fromkeys(texts))
    keys = text_keys(HashEncoder().identity, "passage", distinct)
    mark("distinct texts and their keys")
    rows = [{"pos": p, "text": [distinct[i] for i in p]} for p in partitions(distinct)]
    mark("partition rows")
    import pyarrow as pa

    table = pa.Table.from_pylist(rows)  # what ray.data.from_items makes of them
    marks.append(("+ Arrow table (from_items)", marks[-1][1] + table.nbytes))
    return {
        "corpus": corpus,
        "documents": documents,
        "passages": len(texts),
        "distinct": len(distinct),
        "characters": sum(map(len, distinct)),
        "keys": len(keys),
        "stages": marks,
        "rss_bytes": proc.memory_info().rss - rss0,
    }


def measure_streamed(file: Path, documents: int | None = None) -> dict[str, Any]:
    """The streamed driver's memory on the first ``documents`` lines of ``file`` (a BEIR
    ``corpus.jsonl``; all by default), against an empty cache: bytes held after each
    stage and the traced peak."""
    import pyarrow as pa

    from hierret.encoders.cache import VectorCache, cached_encoder
    from hierret.encoders.embed.stream import (
        CorpusSource,
        missing_rows,
        stream_partitions,
        stream_rows,
    )

    with tempfile.TemporaryDirectory() as tmp:
        part = Path(tmp) / "corpus" / "corpus.jsonl"
        part.parent.mkdir()
        with file.open("rb") as src, part.open("wb") as out:
            if documents is None:
                shutil.copyfileobj(src, out)
            else:
                for _, line in zip(range(documents), src, strict=False):
                    out.write(line)
        encoder = cached_encoder("hash", VectorCache(Path(tmp) / "cache"))
        source = CorpusSource.of(str(part.parent))
        gc.collect()
        tracemalloc.start()
        marks: list[tuple[str, int]] = []
        peaks: list[tuple[str, int]] = []

        def mark(stage: str) -> None:
            peaks.append((stage, tracemalloc.get_traced_memory()[1]))  # the stage's peak
            gc.collect()
            marks.append((stage, tracemalloc.get_traced_memory()[0]))
            tracemalloc.reset_peak()

        loc = source.locate(encoder.identity)
        mark("keys and locators")
        todo, distinct, _ = missing_rows(loc, encoder, None)
        mark("rows the cache lacks")
        parts = stream_partitions(loc, todo)
        mark("partitions")
        rows = stream_rows(loc, parts)
        mark("partition rows")
        table = pa.Table.from_pylist(rows)  # what ray.data.from_items makes of them
        marks.append(("+ Arrow table (from_items)", marks[-1][1] + table.nbytes))
        peaks.append(("+ Arrow table (from_items)", marks[-1][1]))
        peak = max(p for _, p in peaks)
        tracemalloc.stop()
        return {
            "documents": loc.documents,
            "passages": len(loc),
            "distinct": distinct,
            "stages": marks,
            "stage_peaks": peaks,
            "peak": peak,
            "arrays_bytes": loc.nbytes(),
        }


def streamed_sizes(corpus: str = "scifact") -> list[dict[str, Any]]:
    """:func:`measure_streamed` on a quarter, a half and all of ``corpus``'s lines."""
    from hierret.encoders.embed.stream import streamable

    file = streamable(corpus)
    if file is None:
        return []
    with file.open("rb") as f:
        lines = sum(1 for _ in f)
    measure_streamed(file, 10)  # once unmeasured: the modules it imports are not the corpus's
    return [measure_streamed(file, n) for n in (lines // 4, lines // 2, None)]


def main(corpus: str = "scifact", *flags: str) -> None:
    m = measure(corpus)
    m["streamed"] = streamed_sizes(corpus)
    if "--json" in flags:
        print(json.dumps(m))
        return
    n, distinct = m["passages"], m["distinct"]
    print(f"{corpus}: {m['documents']} documents, {n} passages, {distinct} distinct")
    print(
        f"  (mean {m['characters'] / distinct:.0f} characters a distinct passage, {m['keys']} keys)"
    )
    for stage, held in m["stages"]:
        print(f"  {stage:34s} {held / n:8.0f} B/passage  ({held / 2**20:7.1f} MiB)")
    rss = m["rss_bytes"]
    print(f"  resident set grew by {rss / 2**20:.1f} MiB ({rss / n:.0f} B/passage)")
    for size in m["streamed"]:
        n = size["passages"]
        print(f"streamed, {size['documents']} documents, {n} passages:")
        for (stage, held), (_, top) in zip(size["stages"], size["stage_peaks"], strict=True):
            print(f"  {stage:34s} {held / n:8.0f} B/passage held, {top / n:8.0f} at its peak")


if __name__ == "__main__":
    main(*sys.argv[1:])
