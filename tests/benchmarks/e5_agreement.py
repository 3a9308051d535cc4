"""The fast e5-small path (``e5-small-torch``) against the exact C engine (``e5-small``).

On DR-002's corpora as its reference run builds them (900-character passages
with 180 of overlap; the Python reference's passages and every question;
SciFact's 1,000-abstract sample, every judged abstract and a seeded sample of
the others, with all 300 questions), both encoders embed every unit and every
question (through the vector cache at ``$HIERRET_CACHE``, so the engine's
vectors of a reference run are reused), and the script prints:

* the cosine between the two engines' vectors of each unit and each question:
  smallest and mean;
* each question's dense top 10 (cosine over the corpus's units) with each
  engine's own index and query vector: how many questions' top 10 differ in
  order, and how many in membership;
* the time each encoder took for the units it had to embed (cache misses).

Compare the cosines with DR-002's ``variation_e5_small_cpu_mincos`` (the
engine's wheel binary against the exact build: what a CPU model changes).

With ``--results DIR`` the numbers become the record ``e5_agreement``
(``DIR/e5-agreement.json``, every value a machine fact: the engines' float
arithmetic is the CPU's), which the site's benchmark page shows beside DR-002's
measured run-to-run variation (``nox -s bench`` does not run this script; run it
after a bench and pass ``--results data/results`` to keep its numbers).

Usage::

    python tests/benchmarks/e5_agreement.py [--corpora python-reference scifact-1000]
        [--max-queries N] [--json out.json] [--results DIR]

A script, not a test (pytest does not collect it); it takes minutes on two
cores when the engine's vectors are not cached.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

import numpy as np

from hierret import VectorCache, cached_encoder
from hierret.publish.record import key
from hierret.publish.report import write_results
from hierret.study import Testbed

#: DR-002's corpora as its notebook loads them: (name, source, max_docs).
CORPORA = {"python-reference": ("python-reference", None), "scifact-1000": ("scifact", 1000)}


def top10(queries: np.ndarray, units: np.ndarray) -> np.ndarray:
    """Each question's 10 best units by cosine (ties by unit order)."""
    scores = queries @ units.T
    return np.argsort(-scores, axis=1, kind="stable")[:, :10]


def compare(name: str, exact: Any, fast: Any, max_queries: int | None) -> dict[str, Any]:
    source, max_docs = CORPORA[name]
    bed = Testbed.load(source, 900, 180, max_queries=max_queries, max_docs=max_docs, seed=0)
    texts = bed.texts()
    questions = [q.text for q in bed.queries]
    out: dict[str, Any] = {"units": len(texts), "questions": len(questions), "level": bed.level}
    vectors = {}
    for label, enc in (("exact", exact), ("fast", fast)):
        misses = enc.stats.misses
        start = time.perf_counter()
        vectors[label] = (enc.encode_passages(texts), enc.encode_queries(questions))
        out[f"{label}_seconds"] = time.perf_counter() - start
        out[f"{label}_embedded"] = enc.stats.misses - misses
    (ue, qe), (uf, qf) = vectors["exact"], vectors["fast"]
    for kind, a, b in (("units", ue, uf), ("questions", qe, qf)):
        cos = (a * b).sum(1)
        out[f"{kind}_cos_min"] = float(cos.min())
        out[f"{kind}_cos_mean"] = float(cos.mean())
        out[f"{kind}_maxabs"] = float(np.abs(a - b).max())
    te, tf = top10(qe, ue), top10(qf, uf)
    out["top10_order_differs"] = int((te != tf).any(axis=1).sum())
    out["top10_set_differs"] = int(sum(set(x) != set(y) for x, y in zip(te, tf, strict=True)))
    return out


def record_values(corpora: dict[str, dict[str, Any]]) -> dict[str, int | float]:
    """The record's values: every number of each corpus's comparison, keyed by corpus.

    Examples
    --------
    >>> record_values({"scifact-1000": {"units": 3, "level": "passage", "units_cos_min": 0.5}})
    {'scifact_1000_units': 3, 'scifact_1000_units_cos_min': 0.5}
    """
    return {
        key(corpus, name): value
        for corpus, row in corpora.items()
        for name, value in row.items()
        if isinstance(value, int | float) and not isinstance(value, bool)
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora", nargs="+", default=list(CORPORA), choices=list(CORPORA))
    parser.add_argument("--max-queries", type=int)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--results", type=Path, help="write the record e5-agreement.json here")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    cache = VectorCache()
    exact = cached_encoder("e5-small", cache, show_progress=False)
    fast = cached_encoder("e5-small-torch", cache, show_progress=False)
    result: dict[str, Any] = {
        "exact": exact.identity.describe(),
        "fast": fast.identity.describe(),
        "corpora": {c: compare(c, exact, fast, args.max_queries) for c in args.corpora},
    }
    print(json.dumps(result, indent=1))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1), encoding="utf-8")
    if args.results:
        identity = {
            "exact": result["exact"],
            "fast": result["fast"],
            "corpora": list(args.corpora),
            "max_queries": args.max_queries,
            "load_1min_at_start": load,
        }
        values = record_values(result["corpora"])
        path = args.results / "e5-agreement.json"
        print(f"wrote {write_results(path, 'e5_agreement', values, identity, facts=values)}")


if __name__ == "__main__":
    main()
