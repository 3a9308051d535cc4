"""One long Markdown document: the folder loader's peak memory and the hierarchy's build
time against the document's size.

Writes a seeded Markdown document of each ``--sizes`` (MB: headings every ~40
paragraphs, two levels, paragraphs of ~400 characters) into a folder, and in a
fresh child process per size measures: the peak resident memory of
:func:`hierret.datasets.load` over the process's baseline (``--questions``: with
a ``questions.jsonl`` whose one question quotes the document, so the quote is
located; else ``questions=False``, as ``hierret search`` loads it),
and the wall and CPU time of :func:`hierret.structure.hierarchy.build_hierarchy` (default
passage sizes). It prints one line per size and, for each size after the first,
the growth of time and memory relative to the first (a linear step grows as the
size does; a quadratic one as its square).

Usage::

    python tests/benchmarks/bench_big_document.py [--sizes 1 4 16]

A script, not a test: times and memory are facts of the machine (note the load).
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

_CHILD = """
import json, resource, sys, time
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
from hierret.datasets import load
from hierret.structure.hierarchy import build_hierarchy
after_import = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
bundle = load(sys.argv[1], questions=sys.argv[2] == "1")
load_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t0, c0 = time.perf_counter(), time.process_time()
h = build_hierarchy(bundle.corpus, heading_styles=bundle.heading_styles)
wall, cpu = time.perf_counter() - t0, time.process_time() - c0
print(json.dumps({"load_mb": (load_peak - after_import) / 1024, "build_wall": wall,
                  "build_cpu": cpu, "passages": len(h.passages),
                  "sections": sum(len(s) for s in h.sections.values()),
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def document(mb: float, seed: int = 0) -> str:
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(5000)]
    parts, size, n = [], 0, 0
    while size < mb * 1_000_000:
        if n % 40 == 0:
            head = "#" * (1 + (n // 40) % 2) + f" Section {n // 40}\n\n"
            parts.append(head)
            size += len(head)
        para = " ".join(rng.choice(words) for _ in range(80)) + ".\n\n"
        parts.append(para)
        size += len(para)
        n += 1
    return "".join(parts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=float, nargs="+", default=[1.0, 4.0, 16.0])
    ap.add_argument(
        "--questions",
        action="store_true",
        help="with a questions.jsonl whose one question quotes the document (located)",
    )
    args = ap.parse_args()
    first = None
    for mb in args.sizes:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp, "big")
            root.mkdir()
            text = document(mb)
            (root / "manual.md").write_text(text, encoding="utf-8")
            if args.questions:
                quote = text[len(text) // 2 :].split("\n\n")[1][:200]
                row = {"question": "Where?", "evidence": [quote]}
                (root / "questions.jsonl").write_text(json.dumps(row) + "\n", encoding="utf-8")
            out = subprocess.run(
                [sys.executable, "-c", _CHILD, str(root), "1" if args.questions else "0"],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
        row = json.loads(out.strip().splitlines()[-1])
        line = (
            f"{mb:g} MB: load peak +{row['load_mb']:.0f} MB (process {row['peak_mb']:.0f} MB); "
            f"build {row['build_wall']:.2f} s wall, {row['build_cpu']:.2f} s CPU; "
            f"{row['sections']} sections, {row['passages']} passages"
        )
        if first is None:
            first = (mb, row)
        else:
            k = mb / first[0]
            line += (
                f"; x{k:g} size: build CPU x{row['build_cpu'] / first[1]['build_cpu']:.1f}, "
                f"load memory x{row['load_mb'] / max(first[1]['load_mb'], 1e-9):.1f}"
            )
        print(line, flush=True)


if __name__ == "__main__":
    main()
