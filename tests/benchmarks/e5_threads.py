"""e5-small with 1 and 2 OpenMP threads, OpenMP's wait policy active and passive.

Each encoder named by ``--encoders`` (default: the C engine ``e5-small`` and its
PyTorch float32 graph ``e5-small-torch``, whose threads are PyTorch's, an OpenMP
runtime too) is measured in every setting.

Each setting runs in its own process (``OMP_WAIT_POLICY`` is read once, when the
OpenMP runtime starts), embeds the same passages of the python reference
(its 900-character passages, the first ``--passages`` of the corpus order) in
the engine's batches, ``--repeat`` times after one untimed warm-up, and saves
its vectors; the settings take turns round by round, so that a change in what
else the machine is doing falls on all of them alike. The report gives each
setting's best and median passages per second (of wall and of the process's
CPU time), the 1-minute load average when each of its runs began, and whether
its vectors equal the first setting's of the same encoder, and the very first
setting's, bit for bit. An encoder name may carry constructor options after
colons: ``e5-small:engine=fast`` is hierret's fast build of the engine.

Usage::

    python tests/benchmarks/e5_threads.py [--passages 50] [--corpus scifact]
        [--repeat 3] [--rounds 2]
        [--settings 1:default 2:passive ...] [--encoders e5-small e5-small-torch]
        [--json out.json]

A script, not a test (pytest does not collect it).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

#: (threads, OMP_WAIT_POLICY) tried; None leaves the variable unset (the runtime's default).
SETTINGS = ((1, None), (2, None), (1, "passive"), (2, "passive"), (2, "active"))


def passages(n: int, corpus: str = "python-reference") -> list[str]:
    """The first ``n`` passages of the python reference, as the package chunks them, or
    with ``corpus="scifact"`` the first ``n`` SciFact abstracts the bench encodes."""
    if corpus == "scifact":
        from bench_speed import REPO_ROOT, scifact_texts

        data = Path(os.environ.get("HIERRET_DATA", REPO_ROOT.parent / "shared" / "datasets"))
        return scifact_texts(data)[:n]
    from hierret.datasets import load
    from hierret.structure.hierarchy import build_hierarchy

    bundle = load("python-reference")
    h = build_hierarchy(bundle.corpus)
    return [h.text(p) for p in h.passages[:n]]


def _child(job: Path) -> None:
    """Run in a fresh process: embed the texts with the job's threads; times and vectors."""
    spec = json.loads(job.read_text(encoding="utf-8"))
    from hierret.encoders import load_encoder

    name, *options = spec["encoder"].split(":")
    kwargs = dict(option.split("=", 1) for option in options)  # e.g. e5-small:engine=fast
    enc = load_encoder(name, num_threads=spec["threads"], show_progress=False, **kwargs)
    texts = spec["texts"]
    enc.encode_passages(texts[:2])  # untimed warm-up
    times, cpu, vectors = [], [], None
    for _ in range(spec["repeat"]):
        start, start_cpu = time.perf_counter(), time.process_time()
        vectors = enc.encode_passages(texts)
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    np.save(job.with_suffix(".npy"), vectors)
    job.with_suffix(".out").write_text(json.dumps([times, cpu]), encoding="utf-8")


def run(
    texts: list[str],
    repeat: int,
    rounds: int,
    settings: Sequence[tuple[int, str | None]],
    encoders: Sequence[str] = ("e5-small",),
) -> dict[str, Any]:
    times: dict[str, list[float]] = {}
    cpu: dict[str, list[float]] = {}
    loads: dict[str, list[float]] = {}
    vectors: dict[str, np.ndarray] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(rounds):
            for encoder, (threads, policy) in ((e, s) for e in encoders for s in settings):
                name = f"{encoder}_{threads}_threads_{policy or 'default'}"
                job = Path(tmp) / f"{name}-{r}.json"
                spec = {"encoder": encoder, "threads": threads, "texts": texts, "repeat": repeat}
                job.write_text(json.dumps(spec))
                env = dict(os.environ)
                env.pop("OMP_WAIT_POLICY", None)
                env |= {"OMP_WAIT_POLICY": policy} if policy else {}
                loads.setdefault(name, []).append(os.getloadavg()[0])
                subprocess.run([sys.executable, __file__, "--child", str(job)], env=env, check=True)
                print(f"round {r}: {name} done", file=sys.stderr, flush=True)
                wall, cpu_s = json.loads(job.with_suffix(".out").read_text())
                times.setdefault(name, []).extend(wall)
                cpu.setdefault(name, []).extend(cpu_s)
                vectors.setdefault(name, np.load(job.with_suffix(".npy")))
    chars = sum(map(len, texts)) / len(texts)
    out: dict[str, Any] = {"passages": len(texts), "mean_chars": chars, "settings": {}}
    for name, t in times.items():
        # compared with the first setting of the same encoder
        first = next(v for n, v in vectors.items() if n.split("_")[0] == name.split("_")[0])
        out["settings"][name] = {
            "best_pps": len(texts) / min(t),
            "median_pps": len(texts) / float(np.median(t)),
            "best_pps_of_cpu_time": len(texts) / min(cpu[name]),
            "median_pps_of_cpu_time": len(texts) / float(np.median(cpu[name])),
            "load_1min_at_starts": loads[name],
            "runs": len(t),
            "identical_vectors": bool(np.array_equal(vectors[name], first)),
            "identical_to_first_setting": bool(
                np.array_equal(vectors[name], next(iter(vectors.values())))
            ),
            "max_abs_diff": float(np.abs(vectors[name] - first).max()),
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passages", type=int, default=50)
    parser.add_argument("--corpus", choices=["python-reference", "scifact"],
                        default="python-reference", help="scifact: the bench's texts")  # fmt: skip
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--settings",
        nargs="+",
        default=[f"{t}:{p or 'default'}" for t, p in SETTINGS],
        help="THREADS:POLICY, the policy default (unset), passive or active",
    )
    parser.add_argument("--encoders", nargs="+", default=["e5-small", "e5-small-torch"])
    parser.add_argument("--json", type=Path)
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child)
        return
    settings = [(int(t), None if p == "default" else p) for t, p in
                (x.split(":") for x in args.settings)]  # fmt: skip
    texts = passages(args.passages, args.corpus)
    result = run(texts, args.repeat, args.rounds, settings, args.encoders)
    result["load_1min"] = os.getloadavg()[0]
    print(json.dumps(result, indent=1))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
