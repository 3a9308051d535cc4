"""Benchmark hierret's metrics against pytrec_eval (trec_eval) and ranx on the same run.

A seeded random run (``--queries`` queries of ``--depth`` results, graded
qrels over a shared pool) is scored by :func:`hierret.evaluation.evaluate`,
by ``pytrec_eval.RelevanceEvaluator`` with the matching trec_eval measures
and, when it is installed, by ``ranx.evaluate`` with its names for them. The
script prints, for each side, the min and median of ``--repeat`` wall times
(after one warm-up call, which also compiles ranx's numba code), the speed
ratios hierret / peer (below 1 means hierret is faster), and the largest
per-query difference over every measure, which must be below 1e-9.

Usage::

    python tests/benchmarks/bench_metrics.py [--queries 1000] [--depth 100] [--repeat 5]
        [--json out.json]

This file is a script, not a test: its name does not match ``test_*.py``, so
pytest does not collect it. Timings depend on the machine; only the ratio
and the agreement are meant to be compared.
"""

from __future__ import annotations

import argparse
import json
import random
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytrec_eval
from bench_speed import timed

from hierret.evaluation import Qrels, Run, evaluate

#: hierret's metric name -> trec_eval's measure.
MEASURES = {
    "ndcg@10": "ndcg_cut_10",
    "recall@10": "recall_10",
    "mrr": "recip_rank",
    "hit@1": "success_1",
    "p@10": "P_10",
    "map": "map",
    "rprec": "Rprec",
}
#: hierret's metric name -> ranx's.
RANX = {
    "ndcg@10": "ndcg@10",
    "recall@10": "recall@10",
    "mrr": "mrr",
    "hit@1": "hit_rate@1",
    "p@10": "precision@10",
    "map": "map",
    "rprec": "r-precision",
}


def random_case(n_queries: int, depth: int, seed: int = 0) -> tuple[Run, Qrels]:
    """A run with distinct descending scores per query and graded qrels."""
    rng = random.Random(seed)
    run: Run = {}
    qrels: Qrels = {}
    for q in range(n_queries):
        pool = [f"u{i}" for i in range(5 * depth)]
        qrels[f"q{q}"] = {u: rng.choice((0, 1, 1, 2)) for u in rng.sample(pool, 20)}
        retrieved = rng.sample(pool, depth)
        run[f"q{q}"] = [(u, float(depth - i)) for i, u in enumerate(retrieved)]
    return run, qrels


def bench_ranx(
    run: Run, qrels: Qrels, ours: dict[str, dict[str, float]], repeat: int
) -> dict[str, Any] | None:
    """ranx's time and its largest per-query difference from hierret (None without ranx)."""
    try:
        import ranx
    except ImportError:
        return None
    warnings.filterwarnings("ignore", module="ranx")  # numba's cast warnings
    r_qrels = ranx.Qrels.from_dict(qrels)
    r_run = ranx.Run.from_dict({qid: dict(ranking) for qid, ranking in run.items()})

    def score() -> Any:
        return ranx.evaluate(r_qrels, r_run, list(RANX.values()), return_mean=False)

    theirs = score()
    order = list(r_qrels.keys())  # ranx's per-query arrays follow its own query order
    worst = max(
        float(np.max(np.abs(np.array([ours[name][q] for q in order]) - theirs[rx])))
        for name, rx in RANX.items()
    )
    return {"time": timed(score, repeat), "max_abs_diff": worst}


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    run, qrels = random_case(args.queries, args.depth)
    as_dicts = {qid: dict(ranking) for qid, ranking in run.items()}
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(MEASURES.values()))
    ours = evaluate(run, qrels, list(MEASURES))
    theirs = evaluator.evaluate(as_dicts)
    worst = max(
        abs(ours[name][qid] - theirs[qid][trec]) for name, trec in MEASURES.items() for qid in qrels
    )
    result: dict[str, Any] = {
        "queries": args.queries,
        "depth": args.depth,
        "measures": len(MEASURES),
        "hierret": timed(lambda: evaluate(run, qrels, list(MEASURES)), args.repeat),
        "pytrec_eval": timed(lambda: evaluator.evaluate(as_dicts), args.repeat),
        "max_abs_diff_vs_pytrec_eval": worst,
    }
    result["ratio_vs_pytrec_eval"] = result["hierret"]["min_s"] / result["pytrec_eval"]["min_s"]
    print(f"{args.queries} queries x {args.depth} results, {len(MEASURES)} measures")
    print(f"hierret     {result['hierret']['min_s'] * 1000:9.1f} ms")
    print(f"pytrec_eval {result['pytrec_eval']['min_s'] * 1000:9.1f} ms")
    print(f"ratio hierret / pytrec_eval: {result['ratio_vs_pytrec_eval']:.2f}")
    print(f"largest per-query difference: {worst:.2e}")
    peer = bench_ranx(run, qrels, ours, args.repeat)
    if peer is not None:
        result["ranx"] = peer["time"]
        result["max_abs_diff_vs_ranx"] = peer["max_abs_diff"]
        result["ratio_vs_ranx"] = result["hierret"]["min_s"] / peer["time"]["min_s"]
        print(f"ranx        {peer['time']['min_s'] * 1000:9.1f} ms")
        print(f"ratio hierret / ranx: {result['ratio_vs_ranx']:.2f}")
        print(f"largest per-query difference from ranx: {peer['max_abs_diff']:.2e}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1), encoding="utf-8")
    if max(worst, result.get("max_abs_diff_vs_ranx", 0.0)) > 1e-9:
        raise SystemExit("hierret disagrees with trec_eval or ranx")


if __name__ == "__main__":
    main()
