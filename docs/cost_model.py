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
* **driver memory** and **passages per document**: ``tests/benchmarks/driver_memory.py``
  on SciFact in a fresh process (bytes a passage the driver holds at its peak,
  chunking, and when Ray receives the texts; SciFact's passages per document);
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
page (``docs/timing_page.py``) shows them. The BEIR suite is counted in
passages: its documents times SciFact's passages per document (measured on
SciFact, assumed for the other corpora), each corpus once (Climate-FEVER
searches FEVER's). The record's identity names which parameters were measured
here and which are assumed; with no GPU here, a GPU's throughput is not
measured and no prediction is made for one.

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
MEASURED_WORKERS = (1, 2)  # what this machine's cores allow; beyond, efficiency is assumed
CORES = 2  # the records' machine: every rate in them used both cores
DRIVER_MEMORY = ROOT / "tests" / "benchmarks" / "driver_memory.py"
#: The stage of driver_memory.py at which Ray receives the texts.
RAY_RECEIVES = "+ Arrow table (from_items)"
#: Passages per document of MS MARCO, assumed: its documents are already passages.
MSMARCO_PER_DOCUMENT = 1.0


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
    """Ray's start-up, and Ray against the local engine, each on a fresh cache.

    The local engine's runs are measured whether or not Ray starts; when a local Ray
    cannot start (a loaded machine: its helper processes miss Ray's start-up
    deadline), ``ray_failed`` holds the error and no Ray time is measured.
    """
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    import ray

    from hierret import VectorCache, cached_encoder
    from hierret.encoders.embed import PARTITION_TEXTS, embed_texts

    out: dict[str, Any] = {}
    hash_texts = [f"text {i}" for i in range(2000)]
    int8_texts = _texts(data, 2 * PARTITION_TEXTS)  # a partition for each actor
    local = [("hash", {"dimension": 384}, hash_texts), ("minilm-int8", {}, int8_texts)]
    for name, kw, texts in local:  # one process, the encoder's own threads
        with tempfile.TemporaryDirectory() as tmp:
            enc = cached_encoder(name, VectorCache(Path(tmp) / "local"), **kw)
            out[f"local_{name}_s"] = embed_texts(texts, enc, show_progress=False).seconds
    start = time.perf_counter()
    try:
        ray.init(
            num_cpus=CORES,
            include_dashboard=False,
            _node_ip_address="127.0.0.1",
            log_to_driver=False,
            configure_logging=False,
        )
    except Exception as err:  # Ray raises a bare Exception when its node times out
        out["ray_failed"] = f"{type(err).__name__}: {str(err).splitlines()[0]}"
        out["ray_failed_after_s"] = time.perf_counter() - start
        return out
    out["ray_init_s"] = time.perf_counter() - start
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
    finally:
        ray.shutdown()
    return out


def measure_driver(data: Path, corpus: str = "scifact") -> dict[str, Any]:
    """``tests/benchmarks/driver_memory.py`` on ``corpus``, in a fresh process."""
    env = {**os.environ, "HIERRET_DATA": str(data)}
    args = [sys.executable, str(DRIVER_MEMORY), corpus, "--json"]
    done = subprocess.run(args, capture_output=True, text=True, env=env, check=False)
    if done.returncode:
        raise RuntimeError(f"{DRIVER_MEMORY.name} failed (exit {done.returncode}): {done.stderr}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def measure_write(n: int = 20_000, dimension: int = 384, batch: int = 256) -> float:
    """Seconds per vector for the driver to store ``n`` vectors a batch at a time."""
    from hierret import VectorCache
    from hierret.encoders import HashEncoder
    from hierret.encoders.cache import text_keys  # the store's own keys: its write rate is measured

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
    out["driver"] = measure_driver(data)
    out["load_average"] = [before, os.getloadavg()[0]]
    return out


def values_from(
    measured: dict[str, Any],
    records: dict[str, dict[str, Any]],
    corpora: dict[str, Any],
    previous: dict[str, Any] | None = None,
) -> dict[str, float | int]:
    """The record's values: the measured terms, each encoder's model, its predictions.

    When a local Ray did not start for the measurement, Ray's terms (start-up, the
    Ray runs, and the local runs they were compared with) come from ``previous``,
    the values of the earlier ``cost_model`` record, and ``ray_measured`` is 0.
    """
    from hierret.publish import key
    from hierret.study.site_build import (
        CostModel,
        distinct_corpora,
        efficiency,
        passages,
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
    ray = dict(measured["ray"])
    v["ray_measured"] = int("ray_failed" not in ray)
    if "ray_failed" in ray:  # Ray did not start here: its terms from the earlier record
        if previous is None or "ray_init_s" not in previous:
            raise RuntimeError(
                f"a local Ray did not start ({ray['ray_failed']}) and no earlier cost_model "
                "record holds Ray's terms: measure again on a less loaded machine"
            )
        v["ray_failed_after_s"] = ray.pop("ray_failed_after_s")
        ray.pop("ray_failed")
        for k in ("ray_init_s", "ray_hash_1_s", "ray_hash_2_s", "ray_minilm_int8_2_s"):
            ray[k] = previous[k]
        ray["ray_minilm-int8_2_s"] = ray.pop("ray_minilm_int8_2_s")
        for k in ("local_hash_s", "local_minilm_int8_s"):  # the runs Ray was compared with
            ray[f"earlier_{k}"] = previous.get(f"earlier_{k}", previous[k])
        base_hash, base_int8 = ray["earlier_local_hash_s"], ray["earlier_local_minilm_int8_s"]
    else:
        base_hash, base_int8 = ray["local_hash_s"], ray["local_minilm-int8_s"]
    v["ray_init_s"] = ray["ray_init_s"]
    v["startup_s"] = ray["ray_init_s"] + max(ray["ray_hash_2_s"] - base_hash, 0.0)
    for k, seconds in ray.items():
        if k != "ray_init_s":
            v[key(k)] = seconds
    v["ray_over_local_minilm_int8"] = ray["ray_minilm-int8_2_s"] / base_int8
    v["write_s_per_text"] = measured["write_s_per_text"]
    driver = measured["driver"]
    n_passages = driver["passages"]
    per_document = n_passages / driver["documents"]
    v |= {
        key(driver["corpus"], "documents"): driver["documents"],
        key(driver["corpus"], "passages"): n_passages,
        "passages_per_document": per_document,
    }
    suite = distinct_corpora(corpora["corpora"])
    v["beir_corpora_counted"] = len(suite)
    documents = {
        "msmarco": corpora["msmarco"]["documents"],
        "beir": sum(c["documents"] for c in suite),
        "beir_public": sum(c["documents"] for c in suite if c["public"]),
    }
    sizes = {
        "msmarco": passages(documents["msmarco"], MSMARCO_PER_DOCUMENT),
        "beir": sum(passages(c["documents"], per_document) for c in suite),
        "beir_public": sum(passages(c["documents"], per_document) for c in suite if c["public"]),
    }
    for corpus, n in sizes.items():
        v[key(corpus, "documents")] = documents[corpus]
        v[key(corpus, "texts")] = n
    v |= driver_values(driver, {corpus: int(v[key(corpus, "texts")]) for corpus in sizes})
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


def driver_values(driver: dict[str, Any], texts: dict[str, int]) -> dict[str, float | int]:
    """The driver-memory term from ``driver_memory.py``'s figures, and each corpus's
    driver GB (``texts``: passages by corpus).

    In-driver (texts held, before streaming): bytes a passage at the peak and when
    Ray receives the texts. Streamed (a BEIR corpus, ``hierret.encoders.embed.stream``): at
    each measured size, the bytes held when Ray receives the locators and the
    traced peak of each stage; the term bounds the largest stage's peak from above
    (each stage's least-squares line against the passages; the steepest slope
    as bytes a passage, the largest intercept as the fixed part: the documents
    chunked at a time). ``{corpus}_driver_gb`` is one job's streamed peak (what ``hierret embed
    --engine ray`` holds for a BEIR corpus), ``{corpus}_driver_gb_in_driver`` the
    in-driver peak.
    """
    from hierret.publish import key
    from hierret.study.site_build import CostModel

    n, stages = driver["passages"], dict(driver["stages"])
    v: dict[str, float | int] = {
        "driver_peak_b_per_passage": max(stages.values()) / n,
        "driver_held_b_per_passage": stages[RAY_RECEIVES] / n,
    }
    sizes = driver.get("streamed") or []
    if len(sizes) >= 2:
        passages = np.array([s["passages"] for s in sizes], dtype=float)
        lines = [  # each stage's peak against the passages: (bytes a passage, fixed)
            np.polyfit(passages, [dict(s["stage_peaks"])[stage] for s in sizes], 1)
            for stage, _ in sizes[0]["stage_peaks"]
        ]
        # an upper bound of the largest stage's peak at any size: the steepest slope and
        # the largest fixed part (the pass's documents at a time peak on small corpora, the
        # arrays of keys and rows on large ones)
        slope, fixed = max(a for a, _ in lines), max(b for _, b in lines)
        v |= {
            "driver_streamed_b_per_passage": float(slope),
            "driver_streamed_fixed_b": max(float(fixed), 0.0),
            "driver_streamed_sizes": len(sizes),
        }
        for i, size in enumerate(sizes):
            m = size["passages"]
            v |= {
                key("driver_streamed", i, "passages"): m,
                key("driver_streamed", i, "documents"): size["documents"],
                key("driver_streamed", i, "held_b_per_passage"): dict(size["stages"])[RAY_RECEIVES]
                / m,
                key("driver_streamed", i, "peak_b_per_passage"): size["peak"] / m,
            }
    for corpus, count in texts.items():
        v[key(corpus, "driver_gb_in_driver")] = (
            CostModel.driver_bytes(count, float(v["driver_peak_b_per_passage"])) / 1e9
        )
        v[key(corpus, "driver_gb")] = (
            CostModel.driver_bytes(
                count,
                float(v["driver_streamed_b_per_passage"]),
                fixed_bytes=float(v["driver_streamed_fixed_b"]),
            )
            / 1e9
            if "driver_streamed_b_per_passage" in v
            else v[key(corpus, "driver_gb_in_driver")]
        )
    return v


#: Which of the model's parameters this script measured, and which it assumes.
PROVENANCE: dict[str, list[str]] = {
    "measured": [
        "start-up: a local Ray cluster and its actor pool, on this machine",
        "model load: each encoder in a fresh process, on this machine",
        "efficiency at 1 and 2 workers, in CPU and wall seconds, on this machine",
        "write: the driver storing vectors, on this machine",
        "driver memory per passage, peak and when Ray receives the texts, on SciFact: "
        "with the texts in the driver, and streamed (keys and locators) at a quarter, a "
        "half and all of SciFact's documents",
        "passages per document, on SciFact",
        "throughput: the bench and dr002 records' rates, on the machines that wrote them",
    ],
    "assumed": [
        "efficiency beyond 2 workers: the 2-worker CPU efficiency, unmeasured (optimistic)",
        "passages per document of every BEIR corpus but SciFact: SciFact's (the largest "
        "hold shorter documents than SciFact's abstracts: Wikipedia paragraphs, entity "
        "abstracts, questions; so their passages are likely overcounted)",
        "passages per document of MS MARCO: 1 (its documents are already passages)",
        "corpus sizes: the BEIR paper's Table 1, in documents",
        "a GPU: not measured, no prediction",
    ],
}


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
    ap.add_argument(
        "--driver-only",
        action="store_true",
        help="measure the driver-memory term again and keep every other value of the "
        "record as it is",
    )
    args = ap.parse_args(argv)
    if args.driver_only:
        return _driver_only(args)
    if args.measured.is_file():
        measured = json.loads(args.measured.read_text(encoding="utf-8"))
    else:
        measured = measure(args.data, args.texts)
    if "driver" not in measured:  # measured before the driver term was part of the model
        measured["driver"] = measure_driver(args.data)
    args.measured.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.measured.with_suffix(".tmp")
    tmp.write_text(json.dumps(measured, indent=1) + "\n", encoding="utf-8")
    tmp.replace(args.measured)
    from hierret.publish.site_build import load_results, write_results

    records = load_results(RESULTS)
    corpora = json.loads(CORPORA.read_text(encoding="utf-8"))
    earlier = records.get("cost_model")
    previous = earlier["values"] if earlier else None
    values = values_from(measured, records, corpora, previous)
    identity = {
        "encoders": {name: measured["load"][name]["identity"] for name in ENCODERS},
        "workers": list(WORKERS),
        "measured_workers": list(MEASURED_WORKERS),
        "measured": PROVENANCE["measured"],
        "assumed": PROVENANCE["assumed"],
        "gpu": "not measured: no GPU on the machine that measured; no GPU prediction is made",
        "throughputs_from": {r: records[r]["machine"]["cpu"] for r in ("bench", "dr002")},
        "corpora_source": corpora["source"],
        "load_average": measured.get("load_average"),
        "ray": (
            "measured here"
            if values["ray_measured"]
            else f"a local Ray did not start here ({measured['ray']['ray_failed']}, after "
            f"{measured['ray']['ray_failed_after_s']:.0f} s): start-up and the Ray runs are "
            f"the earlier record's (hierret {earlier['hierret_version'] if earlier else '?'}, "
            f"load average {(earlier or {}).get('identity', {}).get('load_average')})"
        ),
    }
    path = write_results(
        args.results / "cost-model.json", "cost_model", values, identity, facts=values
    )
    print(f"[cost model] {path}")
    return 0


def _driver_only(args: argparse.Namespace) -> int:
    """The record with its driver term measured again (``--driver-only``): every
    other value, and the identity, as the record holds them."""
    from hierret.publish.site_build import load_results, write_results

    before = os.getloadavg()[0]
    earlier = load_results(RESULTS).get("cost_model")
    if earlier is None:
        raise SystemExit("--driver-only needs a cost_model record: run without it first")
    driver = measure_driver(args.data)
    values = dict(earlier["values"])
    if (driver["documents"], driver["passages"]) != (
        values["scifact_documents"],
        values["scifact_passages"],
    ):
        raise SystemExit(
            "SciFact's documents or passages differ from the record's: measure everything "
            "again (without --driver-only)"
        )
    values |= driver_values(driver, {c: int(values[f"{c}_texts"]) for c in SIZES})
    identity = {k: v for k, v in earlier["identity"].items() if k != "machine"}
    identity["driver_measured"] = {
        "hierret_version": _version(),
        "load_average": [before, os.getloadavg()[0]],
    }
    path = write_results(
        args.results / "cost-model.json", "cost_model", values, identity, facts=values
    )
    print(f"[cost model] {path} (driver term measured again)")
    return 0


def _version() -> str:
    import hierret

    return hierret.__version__


#: The corpora the record predicts for.
SIZES = ("msmarco", "beir", "beir_public")


if __name__ == "__main__":
    sys.exit(main())
