"""Benchmark hierret's metrics against pytrec_eval (trec_eval) on the same run.

A seeded random run (``--queries`` queries of ``--depth`` results, graded
qrels over a shared pool) is scored by :func:`hierret.evaluation.evaluate`
and by ``pytrec_eval.RelevanceEvaluator`` with the matching trec_eval
measures. The script prints, for each side, the best of ``--repeat`` wall
times, the speed ratio hierret / pytrec_eval (below 1 means hierret is
faster), and the largest per-query difference over every measure, which
must be below 1e-9.

Usage::

    python tests/benchmarks/bench_metrics.py [--queries 1000] [--depth 100] [--repeat 5]

This file is a script, not a test: its name does not match ``test_*.py``, so
pytest does not collect it. Timings depend on the machine; only the ratio
and the agreement are meant to be compared.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable

import pytrec_eval

from hierret.evaluation import Qrels, Run, evaluate

#: hierret's metric name -> trec_eval's measure.
MEASURES = {"ndcg@10": "ndcg_cut_10", "recall@10": "recall_10", "mrr": "recip_rank",
            "hit@1": "success_1", "p@10": "P_10", "map": "map", "rprec": "Rprec"}


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


def best_time(fn: Callable[[], object], repeat: int) -> float:
    """The smallest wall time of ``repeat`` calls, in seconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    run, qrels = random_case(args.queries, args.depth)
    as_dicts = {qid: dict(ranking) for qid, ranking in run.items()}
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(MEASURES.values()))
    ours = evaluate(run, qrels, list(MEASURES))
    theirs = evaluator.evaluate(as_dicts)
    worst = max(abs(ours[name][qid] - theirs[qid][trec])
                for name, trec in MEASURES.items() for qid in qrels)
    t_ours = best_time(lambda: evaluate(run, qrels, list(MEASURES)), args.repeat)
    t_theirs = best_time(lambda: evaluator.evaluate(as_dicts), args.repeat)
    print(f"{args.queries} queries x {args.depth} results, {len(MEASURES)} measures")
    print(f"hierret     {t_ours * 1000:9.1f} ms")
    print(f"pytrec_eval {t_theirs * 1000:9.1f} ms")
    print(f"ratio hierret / pytrec_eval: {t_ours / t_theirs:.2f}")
    print(f"largest per-query difference: {worst:.2e}")
    if worst > 1e-9:
        raise SystemExit("hierret and trec_eval disagree")


if __name__ == "__main__":
    main()
