"""How far float32 results move with the CPU's kernels, and what counting near ties does.

    python tests/benchmarks/kernel_variation.py [--out build/kernel-variation.json]

A published finding must not depend on the CPU model. PyTorch picks its float32
kernels by CPU (AVX2, AVX-512, VNNI...), so another machine gives vectors that
differ in their last bits. This script plays other machines on this one: it
embeds the Python reference's passages and gold questions with MiniLM (fp32)
in fresh processes, once on the default kernel path and once on each forced
other path (``ATEN_CPU_CAPABILITY=default``: PyTorch's non-vectorised kernels;
with ``ONEDNN_MAX_CPU_ISA=SSE41`` and ``MKL_CBWR=COMPATIBLE`` as well), and int8
queries once. It reports the largest change of a vector element and of a
query-passage cosine, and DR-002's int8 agreement (int8 queries searched
against the fp32 passages, top-10 overlap, dense and fused with BM25 as the
hybrid is) on each path, ranked by the raw
floats and with near ties counted as ties
(:data:`hierret.study.agreement.TIE_TOLERANCE`), with the number of
questions whose top 100 changed. About 8 minutes on two cores; no cache is
used (every vector is computed fresh in each process).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

PATHS = {
    "default": {},
    "aten-default": {"ATEN_CPU_CAPABILITY": "default"},
    "compatible": {
        "ATEN_CPU_CAPABILITY": "default",
        "ONEDNN_MAX_CPU_ISA": "SSE41",
        "MKL_CBWR": "COMPATIBLE",
    },
}

_EMBED = """
import sys, numpy as np
from hierret.encoders import load_encoder
from hierret.study.testbed import Testbed
bed = Testbed.load("python-reference")
enc = load_encoder(sys.argv[1])
np.savez(sys.argv[2], P=enc.encode_passages(bed.texts()),
         Q=enc.encode_queries([q.text for q in bed.queries]),
         ids=[u.id for u in bed.units()], qids=[q.id for q in bed.queries])
"""


def _embed(model: str, out: Path, env: dict[str, str]) -> dict[str, np.ndarray]:
    subprocess.run(
        [sys.executable, "-c", _EMBED, model, str(out)],
        env={**os.environ, "TQDM_DISABLE": "1", **env},
        check=True,
    )
    with np.load(out) as f:
        return {k: f[k] for k in f.files}


def main(argv: list[str] | None = None) -> int:
    from hierret.encoders import HashEncoder
    from hierret.search.profile import Profile
    from hierret.search.rankers.fusion import rrf
    from hierret.search.searcher import Searcher
    from hierret.study.agreement import TIE_TOLERANCE, score_run, top_overlap
    from hierret.study.testbed import Testbed

    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", type=Path, help="write the report here as JSON")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        fp32 = {n: _embed("all-MiniLM-L6-v2", Path(tmp) / f"{n}.npz", e) for n, e in PATHS.items()}
        int8 = _embed("minilm-int8", Path(tmp) / "int8.npz", {})
    bed = Testbed.load("python-reference")  # the BM25 leg of the hybrid (no vectors)
    bm25 = Searcher(bed.hierarchy, HashEncoder()).run(bed.queries, Profile(ranker="bm25"), k=100)

    def hybrid(run: dict) -> dict:
        return {q: rrf([run[q], bm25[q]], 60, 100) for q in run}

    base = fp32["default"]
    ids, qids = [str(u) for u in base["ids"]], [str(q) for q in base["qids"]]
    report: dict[str, object] = {"tolerance": TIE_TOLERANCE, "paths": {}}
    ranked = {}
    for tol in (0.0, TIE_TOLERANCE):
        for name, v in fp32.items():
            ref = score_run(qids, ids, v["Q"] @ v["P"].T, 100, tol)
            other = score_run(qids, ids, int8["Q"] @ v["P"].T, 100, tol)
            ranked[name, tol] = ref
            moved = sum(
                [u for u, _ in ref[q]] != [u for u, _ in ranked["default", tol][q]] for q in qids
            )
            row = report["paths"].setdefault(name, {})  # type: ignore[attr-defined]
            row |= {
                "max_abs_vector_change": float(np.abs(v["P"] - base["P"]).max()),
                "max_abs_cosine_change": float(
                    np.abs(v["Q"] @ v["P"].T - base["Q"] @ base["P"].T).max()
                ),
                f"int8_dense_overlap_tol{tol:g}": top_overlap(ref, other, 10),
                f"int8_hybrid_overlap_tol{tol:g}": top_overlap(hybrid(ref), hybrid(other), 10),
                f"questions_top100_moved_tol{tol:g}": int(moved),
            }
    text = json.dumps(report, indent=1)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
