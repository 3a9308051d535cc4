"""A ranker's non-matches are never candidates of a hybrid or fused ranking.

On the embedded python-reference corpus with a hash encoder: a unit BM25
scores 0 for a query (no query term in it) must take part in the hybrid's
reciprocal rank fusion only through its dense rank, and in fused BM25 search
not at all. The BM25 scores are read from the index's own scorer, the dense
ranks from a dense run: the fusion's bookkeeping is checked from outside.
"""

from __future__ import annotations

import logging
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hierret.datasets import load_python_reference
from hierret.encoders import HashEncoder
from hierret.search.profile import Profile
from hierret.search.rankers.analyzer import ENGLISH_STOP_WORDS, get_analyzer
from hierret.search.searcher import Searcher
from hierret.structure.hierarchy import build_hierarchy
from hierret.structure.units import Level, Query

POOL, RRF_K = 30, 60
WORDS = [*sorted(ENGLISH_STOP_WORDS), "what", "?", "?!", "...", "—", "finally", "loop", "zzqx"]


@pytest.fixture(scope="module")
def searcher() -> Searcher:
    return Searcher(build_hierarchy(load_python_reference()), HashEncoder(dimension=32))


def _bm25(searcher: Searcher, level: Level, text: str) -> dict[str, float]:
    scores = searcher.bm25_index(level).score(get_analyzer("english")(text))
    return {u.id: float(s) for u, s in zip(searcher.units(level), scores, strict=True)}


def _check_hybrid(searcher: Searcher, level: Level, text: str) -> None:
    hybrid = Profile(level=level, ranker="hybrid", pool=POOL, rrf_k=RRF_K)
    fused = searcher.run([Query("q", text, ())], hybrid, k=2 * POOL)["q"]
    dense = searcher.run([Query("q", text, ())], Profile(level=level), k=POOL)["q"]
    dense_rank = {u: r for r, (u, _) in enumerate(dense, start=1)}
    bm25 = _bm25(searcher, level, text)
    for unit, score in fused:
        if bm25[unit] <= 0.0:  # no BM25 contribution: the dense rank alone
            assert unit in dense_rank, (text, unit)
            assert score == pytest.approx(1.0 / (RRF_K + dense_rank[unit]), abs=1e-12)


queries = st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=queries, level=st.sampled_from(["passages", "sections", "documents"]))
def test_hybrid_has_no_bm25_contribution_from_a_zero_score(
    searcher: Searcher, text: str, level: Level
) -> None:
    _check_hybrid(searcher, level, text)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=queries)
def test_fused_bm25_holds_only_sections_bm25_matched(searcher: Searcher, text: str) -> None:
    fused = searcher.run([Query("q", text, ())], Profile(level="fused", ranker="bm25"), k=200)
    sections, passages = _bm25(searcher, "sections", text), _bm25(searcher, "passages", text)
    overlapped = searcher.hierarchy.overlapped_sections()  # fused search lifts to these
    matched = {s for s, v in sections.items() if v > 0} | {
        s for p, v in passages.items() if v > 0 for s in overlapped[p]
    }
    assert {u for u, _ in fused["q"]} <= matched


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=queries)
def test_fused_hybrid_holds_only_units_of_its_hybrid_legs(searcher: Searcher, text: str) -> None:
    profile = Profile(level="fused", ranker="hybrid", pool=POOL)
    fused = searcher.run([Query("q", text, ())], profile, k=200)["q"]
    overlapped = searcher.hierarchy.overlapped_sections()  # fused search lifts to these
    query = [Query("q", text, ())]
    sections = searcher.run(query, replace(profile, level="sections"), k=2 * POOL)["q"]
    passages = searcher.run(query, replace(profile, level="passages"), k=2 * POOL)["q"]
    legs = {u for u, _ in sections} | {s for u, _ in passages for s in overlapped[u]}
    assert {u for u, _ in fused} <= legs
    _check_hybrid(searcher, "sections", text)
    _check_hybrid(searcher, "passages", text)


@pytest.mark.parametrize("text", ["the of and is it", "is it?", "?!"])
def test_a_query_bm25_matches_nowhere_gets_the_dense_ranking(searcher: Searcher, text: str) -> None:
    query = [Query("q", text, ())]
    assert not any(v > 0 for v in _bm25(searcher, "passages", text).values())
    hybrid = searcher.run(query, Profile(ranker="hybrid", pool=POOL), k=POOL)["q"]
    dense = searcher.run(query, k=POOL)["q"]
    assert [u for u, _ in hybrid] == [u for u, _ in dense]
    assert searcher.run(query, Profile(level="fused", ranker="bm25"), k=10)["q"] == []


def test_a_k_past_the_pool_says_so(searcher: Searcher, caplog: pytest.LogCaptureFixture) -> None:
    query = [Query("q", "finally clause", ())]
    with caplog.at_level(logging.WARNING, logger="hierret.search.searcher"):
        run = searcher.run(query, Profile(level="fused", pool=POOL), k=10**9)
    n_sections = len(searcher.units("sections"))
    assert POOL <= len(run["q"]) < n_sections
    [record] = [r for r in caplog.records if "k=1000000000" in r.getMessage()]
    message = record.getMessage()
    assert f"pool={POOL}" in message
    assert "--pool" in message
    assert f"at most {len(run['q'])} of the {n_sections} sections" in message


def test_a_k_within_reach_says_nothing(
    searcher: Searcher, caplog: pytest.LogCaptureFixture
) -> None:
    query = [Query("q", "finally clause", ())]
    with caplog.at_level(logging.WARNING, logger="hierret.search.searcher"):
        searcher.run(query, Profile(ranker="hybrid", pool=POOL), k=POOL)
        searcher.run(query, Profile(ranker="dense"), k=10**6)  # the level itself is the cap
    assert not [r for r in caplog.records if "asks for more" in r.getMessage()]
