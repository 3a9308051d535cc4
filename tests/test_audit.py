"""The relevance-pool audit lists exactly the unlabeled units near the top of each arm."""

from __future__ import annotations

import pytest

from hierret.audit import unlabeled_top
from hierret.datasets import load
from hierret.encoders import HashEncoder
from hierret.evaluation import qrels_from_evidence
from hierret.hierarchy import build_hierarchy
from hierret.profile import Profile
from hierret.search import Searcher


def _setup():  # type: ignore[no-untyped-def]
    bundle = load("python-reference", max_queries=10, max_docs=15)
    h = build_hierarchy(bundle.corpus, heading_styles=bundle.heading_styles)
    s = Searcher(h, HashEncoder(dimension=16))
    runs = {"dense passages": s.run(bundle.queries, Profile(), k=20),
            "bm25 passages": s.run(bundle.queries, Profile(ranker="bm25"), k=20),
            "whole sections": s.run(bundle.queries, Profile(level="sections"), k=20)}
    return bundle, h, runs


def test_equals_the_notebooks_own_loop() -> None:
    bundle, h, runs = _setup()
    qrels = {t: qrels_from_evidence(bundle.queries, h.units(t)) for t in ("passages", "sections")}
    to_section = h.parents("passages", "sections")
    expected = []
    for arm, run in runs.items():  # DR-001's audit cell before the engine
        target = "sections" if arm == "whole sections" else "passages"
        for qid, ranking in run.items():
            for rank, (uid, _) in enumerate(ranking[:3], 1):
                if qrels[target].get(qid, {}).get(uid, 0) <= 0:
                    expected.append((qid, arm, rank, uid, to_section.get(uid, uid)))
    table = unlabeled_top(runs, h, qrels, bundle.queries)
    got = list(table[["question", "arm", "rank", "unit", "section"]].itertuples(index=False,
                                                                               name=None))
    assert got == expected
    assert set(table["level"]) == {"passages", "sections"}
    asked = {q.id: q.text for q in bundle.queries}
    assert all(table["asked"] == table["question"].map(asked))


def test_depth_snippet_and_given_judgments() -> None:
    bundle, h, runs = _setup()
    qrels = {t: bundle.qrels(h, t) for t in ("passages", "sections")}
    one = unlabeled_top(runs, h, qrels, bundle.queries, depth=1, snippet=20)
    assert set(one["rank"]) <= {1}
    assert all(len(t) <= 21 for t in one["text"])
    everything = {q.id: {p.id: 1 for p in h.passages} for q in bundle.queries}
    table = unlabeled_top(runs, h, qrels | {"passages": everything})
    assert set(table["level"]) == {"sections"}  # no passage is unlabeled any more
    assert set(table["asked"]) == {""}  # no questions given, no text shown


def test_an_empty_audit_has_the_columns_and_a_foreign_unit_is_refused() -> None:
    bundle, h, runs = _setup()
    empty = unlabeled_top({}, h, {})
    assert empty.empty
    assert list(empty.columns) == ["question", "arm", "rank", "unit", "level", "section", "text",
                                   "asked"]
    with pytest.raises(KeyError, match="not a unit"):
        unlabeled_top({"x": {"q": [("nowhere#p0", 1.0)]}}, h, {})
    with pytest.raises(KeyError, match="does not judge"):
        unlabeled_top(runs, h, {"passages": bundle.qrels(h, "passages")})
