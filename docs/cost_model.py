"""Measure the terms of the embedding cost model and keep its predictions as a record.

    PYTHONPATH=src:<ray> python docs/cost_model.py [--data DIR] [--texts 128]
        [--measured build/cost/measured.json] [--results data/results]

The model is :class:`hierret.study.scale.CostModel`: time = start-up + model load
+ texts / (workers x throughput x efficiency) + write. This script measures, on
this machine, what the package's records do not hold yet:

* **efficiency** from 1 to 2 workers: the same SciFact abstracts embedded by one
  worker process alone, then by two at once (one thread each), in CPU seconds
  (on a shared machine, other people's work takes wall time from a worker but
  not CPU time: what is left is what two workers cost each other, caches and
  memory bandwidth; the wall-time ratio is kept too), with
  ``minilm-int8`` (the model's efficiency) and the ``hash`` test encoder (no
  arithmetic to speak of: what process start and memory cost);
* **start-up**: starting a local Ray cluster (``ray.init``), and what Ray's
  actor pool adds to a run whose work is nothing (``hash``, 2,000 texts, Ray's
  wall time less the local one);
* **model load**: each encoder loaded in a fresh process (and one text
  embedded, so that a lazy model is loaded too);
* **write**: the driver storing 384-dimensional vectors in a fresh cache;
* **Ray against local** on 512 abstracts (a partition for each actor) with
  ``minilm-int8``: 2 actors of one thread each against the local engine's one
  process of 2 threads, each run loading its model (Ray's cluster already
  started).

The measurements go to ``--measured`` (reused when the file exists: delete it
to measure again). The throughputs come from the records: each encoder's
passages per second in ``bench`` (``encode_backends_*_pps``) and ``dr002``
(``cost_*_pps``), lowest and highest. Predictions for MS MARCO's passages and
the BEIR suite's corpora (``data/scale/beir-corpora.json``, from the BEIR
paper's Table 1) at 1, 2, 8 and 32 workers, with the vectors' bytes on disk,
are published as the record ``cost_model`` (``cost-model.json``); the timing
page (``docs/timing_page.py``) shows them.

Needs Ray (``pip install 'hierret[ray]'``) for the start-up and the Ray run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "data" / "results"
CORPORA = ROOT / "data" / "scale" / "beir-corpora.json"
#: Encoder (load_encoder name) -> its label in the dr002 record's keys.
ENCODERS = {
    "minilm": "all_minilm_l6_v2",
    "minilm-int8": "minilm_int8",
    "e5-small": "e5_small",
    "wordllama": "wordllama",
}
#: One thread per worker, by encoder (wordllama and hash have no thread setting).
ONE_THREAD: dict[str, dict[str, Any]] = {
    "minilm-int8": {"num_threads": 1},
    "hash": {"dimension": 384},
}
WORKERS = (1, 2, 8, 32)
CORES = 2  # the records' machine: every rate in them used both cores


def _texts(data: Path, n: int) -> list[str]:
    with (data / "scifact" / "corpus.jsonl").open(encoding="utf-8") as f:
        docs = [json.loads(line) for _, line in zip(range(n), f, strict=False)]
    return [f"{d['title']} {d['text']}" for d in docs]


def worker(name: str, kw: dict[str, Any], data: Path, n: int) -> dict[str, Any]:
    """Load ``name`` and embed ``n`` texts in this process: load and encode seconds."""
    from hierret.encoders import load_encoder

    texts = _texts(data, max(n, 1))
    start = time.perf_counter()
    enc = load_encoder(name, **kw)
    enc.encode_passages(texts[:1])  # a lazy model loads now
    loaded, cpu = time.perf_counter(), time.process_time()
    if n:
        enc.encode_passages(texts)
    done = time.perf_counter()
    return {
        "load_s": loaded - start,
        "encode_s": done - loaded,
        "encode_cpu_s": time.process_time() - cpu,
        "identity": enc.identity.describe(),
        "dimension": enc.identity.dimension,
    }


def _spawn(name: str, kw: dict[str, Any], data: Path, n: int) -> subprocess.Popen[str]:
    args = [sys.executable, __file__, "--worker", name, json.dumps(kw), str(data), str(n)]
    return subprocess.Popen(args, stdout=subprocess.PIPE, text=True)


def _result(proc: subprocess.Popen[str]) -> dict[str, Any]:
    out, _ = proc.communicate()
    if proc.returncode:
        raise RuntimeError(f"a worker failed ({proc.args}): exit {proc.returncode}")
    result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return result


def measure_efficiency(name: str, data: Path, n: int) -> dict[str, Any]:
    """One worker alone, then two at once, on the same ``n`` texts."""
    kw = ONE_THREAD.get(name, {})
    one = _result(_spawn(name, kw, data, n))
    pair = [_spawn(name, kw, data, n) for _ in range(2)]
    two = [_result(p) for p in pair]
    return {"one": one, "two": two}


def measure_ray(data: Path) -> dict[str, Any]:
    """Ray's start-up, and Ray against the local engine, each on a fresh cache."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    import ray

    from hierret import VectorCache, cached_encoder
    from hierret.embed import embed_texts  # the engines beneath the face: what is measured
    from hierret.embed_ray import PARTITION_TEXTS

    out: dict[str, Any] = {}
    start = time.perf_counter()
    ray.init(
        num_cpus=CORES,
        include_dashboard=False,
        _node_ip_address="127.0.0.1",
        log_to_driver=False,
        configure_logging=False,
    )
    out["ray_init_s"] = time.perf_counter() - start
    hash_texts = [f"text {i}" for i in range(2000)]
    int8_texts = _texts(data, 2 * PARTITION_TEXTS)  # a partition for each actor
    runs = [
        ("hash", {"dimension": 384}, hash_texts, 1),
        ("hash", {"dimension": 384}, hash_texts, 2),
        ("minilm-int8", {"num_threads": 1}, int8_texts, 2),
    ]
    try:
        for name, kw, texts, actors in runs:
            with tempfile.TemporaryDirectory() as tmp:
                enc = cached_encoder(name, VectorCache(Path(tmp) / "ray"), **kw)
                report = embed_texts(
                    texts, enc, engine="ray", model=name, model_kw=kw, actors=actors,
                    show_progress=False,
                )  # fmt: skip
                out[f"ray_{name}_{actors}_s"] = report.seconds
                if actors == 2:  # the local engine: one process, the encoder's own threads
                    local = cached_encoder(name, VectorCache(Path(tmp) / "local"))
                    out[f"local_{name}_s"] = embed_texts(texts, local, show_progress=False).seconds
    finally:
        ray.shutdown()
    return out


def measure_write(n: int = 20_000, dimension: int = 384, batch: int = 256) -> float:
    """Seconds per vector for the driver to store ``n`` vectors a batch at a time."""
    from hierret import VectorCache
    from hierret.cache import text_keys  # the store's own keys: its write rate is measured
    from hierret.encoders import HashEncoder

    ident = HashEncoder(dimension=dimension).identity
    rng = np.random.default_rng(0)
    vecs = rng.standard_normal((n, dimension)).astype(np.float32)
    keys = text_keys(ident, "passage", [f"w{i}" for i in range(n)])
    with tempfile.TemporaryDirectory() as tmp:
        cache = VectorCache(tmp)
        start = time.perf_counter()
        for s in range(0, n, batch):
            cache.put(ident, keys[s : s + batch], vecs[s : s + batch])
        return (time.perf_counter() - start) / n


def measure(data: Path, n: int) -> dict[str, Any]:
    """Every measurement the model needs (see the module docstring), with the load
    average (1 minute) before and after: the machine may be shared."""
    before = os.getloadavg()[0]
    out: dict[str, Any] = {"texts": n}
    out["load"] = {name: _result(_spawn(name, {}, data, 0)) for name in ENCODERS}
    out["efficiency"] = {
        "minilm-int8": measure_efficiency("minilm-int8", data, n),
        "hash": measure_efficiency("hash", data, 20 * n),
    }
    out["ray"] = measure_ray(data)
    out["write_s_per_text"] = measure_write()
    out["load_average"] = [before, os.getloadavg()[0]]
    return out


def values_from(
    measured: dict[str, Any], records: dict[str, dict[str, Any]], corpora: dict[str, Any]
) -> dict[str, float | int]:
    """The record's values: the measured terms, each encoder's model, its predictions."""
    from hierret.publish import key
    from hierret.study.site_build import (
        CostModel,
        efficiency,
        record_bytes,
        throughput_range,
        worker_throughput,
    )

    v: dict[str, float | int] = {"cores": CORES, "texts_measured": measured["texts"]}
    for name, runs in measured["efficiency"].items():  # by CPU seconds: others' load
        v[key("efficiency", name)] = efficiency(  # on a shared machine does not count
            runs["one"]["encode_cpu_s"], [r["encode_cpu_s"] for r in runs["two"]]
        )
        v[key("efficiency", name, "wall")] = efficiency(
            runs["one"]["encode_s"], [r["encode_s"] for r in runs["two"]]
        )
        v[key("one_worker", name, "pps")] = (
            measured["texts"] * (20 if name == "hash" else 1) / (runs["one"]["encode_s"])
        )
    eff = float(v["efficiency_minilm_int8"])
    ray = measured["ray"]
    v["ray_init_s"] = ray["ray_init_s"]
    v["startup_s"] = ray["ray_init_s"] + max(ray["ray_hash_2_s"] - ray["local_hash_s"], 0.0)
    for k, seconds in ray.items():
        if k != "ray_init_s":
            v[key(k)] = seconds
    v["ray_over_local_minilm_int8"] = ray["ray_minilm-int8_2_s"] / ray["local_minilm-int8_s"]
    v["write_s_per_text"] = measured["write_s_per_text"]
    sizes = {
        "msmarco": corpora["msmarco"]["passages"],
        "beir": sum(c["passages"] for c in corpora["corpora"]),
        "beir_public": sum(c["passages"] for c in corpora["corpora"] if c["public"]),
    }
    for corpus, n in sizes.items():
        v[key(corpus, "texts")] = n
    bench, dr002 = records["bench"]["values"], records["dr002"]["values"]
    for name, label in ENCODERS.items():
        enc = key(name)
        costs = [k[:-4] for k in dr002 if k.startswith("cost_") and k.endswith(f"_{label}_pps")]
        low, high = throughput_range({**bench, **dr002}, [f"encode_backends_{enc}", *costs])
        load = measured["load"][name]
        dim = int(load["dimension"])
        v |= {
            key(enc, "pps", "low"): low,
            key(enc, "pps", "high"): high,
            key(enc, "rates"): 1 + len(costs),
            key(enc, "load_s"): load["load_s"],
            key(enc, "dimension"): dim,
            key(enc, "record_bytes"): record_bytes(dim),
        }
        for pace, rate in (("slow", low), ("fast", high)):
            model = CostModel(
                startup_s=float(v["startup_s"]),
                load_s=load["load_s"],
                throughput=worker_throughput(rate, CORES, eff),
                efficiency=eff,
                write_s_per_text=measured["write_s_per_text"],
            )
            v[key(enc, "worker_pps", pace)] = model.throughput
            for corpus, n in sizes.items():
                for w in WORKERS:
                    v[key(enc, corpus, f"{w}w", pace, "h")] = model.seconds(n, w) / 3600
        for corpus, n in sizes.items():
            v[key(enc, corpus, "gb")] = n * record_bytes(dim) / 1e9
    return v


def main(argv: list[str] | None = None) -> int:
    if argv is None and len(sys.argv) > 1 and sys.argv[1] == "--worker":
        name, kw, data, n = sys.argv[2:6]
        print(json.dumps(worker(name, json.loads(kw), Path(data), int(n))))
        return 0
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--data", type=Path, default=Path(os.environ.get("HIERRET_DATA", "data")))
    ap.add_argument("--texts", type=int, default=128, help="SciFact abstracts per worker")
    ap.add_argument("--measured", type=Path, default=ROOT / "build" / "cost" / "measured.json")
    ap.add_argument("--results", type=Path, default=RESULTS, help="where the record goes")
    args = ap.parse_args(argv)
    if args.measured.is_file():
        measured = json.loads(args.measured.read_text(encoding="utf-8"))
    else:
        measured = measure(args.data, args.texts)
        args.measured.parent.mkdir(parents=True, exist_ok=True)
        args.measured.write_text(json.dumps(measured, indent=1) + "\n", encoding="utf-8")
    from hierret.publish.site_build import load_results, write_results

    records = load_results(RESULTS)
    corpora = json.loads(CORPORA.read_text(encoding="utf-8"))
    values = values_from(measured, records, corpora)
    identity = {
        "encoders": {name: measured["load"][name]["identity"] for name in ENCODERS},
        "workers": list(WORKERS),
        "throughputs_from": {r: records[r]["machine"]["cpu"] for r in ("bench", "dr002")},
        "corpora_source": corpora["source"],
        "load_average": measured.get("load_average"),
    }
    path = write_results(
        args.results / "cost-model.json", "cost_model", values, identity, facts=values
    )
    print(f"[cost model] {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
