"""Benchmark hierret's BM25 against rank_bm25.BM25Okapi on SciFact.

Both indexes get the same token lists (each text analyzed once), so the
comparison is of index build and query time alone. For each analyzer the
script prints build time, queries per second (score every document, then take
the top 10 with :func:`hierret.search.rankers.top_k`, the same for both), the speed
ratio hierret / rank_bm25, the largest score difference, and how often the two
top-10 lists agree; recall@10 against the test qrels is a sanity check that
the analyzer behaves.

Usage::

    python tests/benchmarks/bench_bm25.py [--data DIR] [--analyzers english whitespace]
        [--k 10] [--max-queries N] [--json results.json]

``--data`` defaults to ``$HIERRET_DATA``, else ``../shared/datasets`` beside the
repository; SciFact is read from ``DATA/scifact`` (BEIR layout: ``corpus.jsonl``,
``queries.jsonl``, ``qrels/test.tsv``). This file is a script, not a test: its
name does not match ``test_*.py``, so pytest does not collect it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import rank_bm25

from hierret.search.rankers import BM25, get_analyzer, top_k

REPO_ROOT = Path(__file__).resolve().parents[2]


def default_data_dir() -> Path:
    env = os.environ.get("HIERRET_DATA")
    return Path(env) if env else REPO_ROOT.parent / "shared" / "datasets"


def load_scifact(root: Path) -> tuple[list[str], list[str], list[str], dict[str, set[str]]]:
    """Doc ids, texts (title + " " + text), test query texts, and their relevant doc ids."""
    doc_ids: list[str] = []
    texts: list[str] = []
    with open(root / "corpus.jsonl", encoding="utf-8") as f:
        for line in f:
            doc = json.loads(line)
            doc_ids.append(str(doc["_id"]))
            texts.append(f"{doc['title']} {doc['text']}")
    qrels: dict[str, set[str]] = {}
    with open(root / "qrels" / "test.tsv", encoding="utf-8") as f:
        next(f)  # header
        for line in f:
            qid, did, score = line.rstrip("\n").split("\t")
            if int(score) > 0:
                qrels.setdefault(qid, set()).add(did)
    queries: list[str] = []
    query_ids: list[str] = []
    with open(root / "queries.jsonl", encoding="utf-8") as f:
        for line in f:
            q = json.loads(line)
            if str(q["_id"]) in qrels:
                query_ids.append(str(q["_id"]))
                queries.append(q["text"])
    # qrels in the order of the query list, so list(qrels.values()) lines up with it
    return doc_ids, texts, queries, {qid: qrels[qid] for qid in query_ids}


def bench_analyzer(
    name: str, texts: list[str], queries: list[str], k: int
) -> tuple[dict[str, Any], list[list[int]]]:
    analyzer = get_analyzer(name)
    t0 = time.perf_counter()
    corpus = [analyzer(t) for t in texts]
    query_tokens = [analyzer(q) for q in queries]
    analyze_s = time.perf_counter() - t0

    t0 = time.perf_counter()
    ours = BM25(corpus)
    build_ours = time.perf_counter() - t0
    t0 = time.perf_counter()
    ref = rank_bm25.BM25Okapi(corpus)
    build_ref = time.perf_counter() - t0

    ours.search_many(query_tokens[:5], k)  # warm-up
    t0 = time.perf_counter()
    hits_ours = ours.search_many(query_tokens, k)
    query_ours = time.perf_counter() - t0

    t0 = time.perf_counter()
    ref_scores = [ref.get_scores(q) for q in query_tokens]
    hits_ref = [top_k(s, k) for s in ref_scores]
    query_ref = time.perf_counter() - t0

    max_diff = max(
        float(np.max(np.abs(ours.score(q) - s)))
        for q, s in zip(query_tokens, ref_scores, strict=True)
    )
    ids_ours = [[i for i, _ in h] for h in hits_ours]
    ids_ref = [[i for i, _ in h] for h in hits_ref]
    same_list = sum(a == b for a, b in zip(ids_ours, ids_ref, strict=True)) / len(queries)
    overlap = float(
        np.mean(
            [len(set(a) & set(b)) / max(len(a), 1) for a, b in zip(ids_ours, ids_ref, strict=True)]
        )
    )
    n = len(queries)
    row: dict[str, Any] = {
        "analyzer": name,
        "n_docs": len(texts),
        "n_terms": len(ours.vocabulary),
        "n_queries": n,
        "analyze_s": analyze_s,
        "build_s_hierret": build_ours,
        "build_s_rank_bm25": build_ref,
        "qps_hierret": n / query_ours,
        "qps_rank_bm25": n / query_ref,
        "speedup": (n / query_ours) / (n / query_ref),
        "max_abs_score_diff": max_diff,
        f"top{k}_identical_lists": same_list,
        f"top{k}_mean_overlap": overlap,
    }
    return row, ids_ours


def recall_at_k(hits: list[list[int]], doc_ids: list[str], qrels: list[set[str]]) -> float:
    return float(
        np.mean(
            [
                len({doc_ids[i] for i in h} & rel) / len(rel)
                for h, rel in zip(hits, qrels, strict=True)
            ]
        )
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--data", type=Path, default=default_data_dir())
    parser.add_argument("--analyzers", nargs="+", default=["english", "whitespace"])
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--max-queries", type=int, default=None)
    parser.add_argument("--json", type=Path, default=None, help="also write results here")
    args = parser.parse_args(argv)

    root = args.data / "scifact"
    if not (root / "corpus.jsonl").exists():
        print(f"SciFact not found under {root} (set HIERRET_DATA or --data)", file=sys.stderr)
        return 2
    doc_ids, texts, queries, qrels = load_scifact(root)
    rel = list(qrels.values())
    if args.max_queries is not None:
        queries, rel = queries[: args.max_queries], rel[: args.max_queries]

    rows = []
    for name in args.analyzers:
        row, hits = bench_analyzer(name, texts, queries, args.k)
        row[f"recall@{args.k}"] = recall_at_k(hits, doc_ids, rel)
        rows.append(row)

    k = args.k
    header = (
        f"{'analyzer':<11} {'docs':>5} {'terms':>6} {'queries':>7} "
        f"{'build hierret':>13} {'build rank_bm25':>15} {'q/s hierret':>11} "
        f"{'q/s rank_bm25':>13} {'ratio':>7} {'max|diff|':>9} {f'top{k} same':>9} "
        f"{f'R@{k}':>6}"
    )
    print(f"SciFact ({root}), analyze once, score all docs + top-{k} per query")
    print(header)
    print("-" * len(header))
    for r in rows:
        print(
            f"{r['analyzer']:<11} {r['n_docs']:>5} {r['n_terms']:>6} {r['n_queries']:>7} "
            f"{r['build_s_hierret']:>12.3f}s {r['build_s_rank_bm25']:>14.3f}s "
            f"{r['qps_hierret']:>11.0f} {r['qps_rank_bm25']:>13.1f} {r['speedup']:>6.0f}x "
            f"{r['max_abs_score_diff']:>9.1e} {r[f'top{k}_identical_lists']:>9.1%} "
            f"{r[f'recall@{k}']:>6.3f}"
        )
    if args.json is not None:
        meta = {
            "python": platform.python_version(),
            "machine": platform.machine(),
            "processor": platform.processor(),
            "cpu_count": os.cpu_count(),
            "numpy": np.__version__,
            "data": str(root),
            "k": k,
        }
        args.json.write_text(json.dumps({"meta": meta, "results": rows}, indent=2) + "\n")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
