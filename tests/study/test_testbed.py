"""Testbeds: a loaded corpus with its hierarchy, judged at its finest level, compared as run."""

from __future__ import annotations

from pathlib import Path

import pytest
from _toy import write_beir

from hierret.datasets import load
from hierret.encoders import HashEncoder
from hierret.evaluation.stats import StatsSettings
from hierret.search.profile import Profile
from hierret.structure.hierarchy import build_hierarchy
from hierret.study import experiment
from hierret.study.testbed import Testbed


@pytest.fixture(scope="module")
def bed() -> Testbed:
    return Testbed.load("python-reference", 600, 120, max_queries=6, max_docs=8, seed=1)


def test_load_is_the_loader_and_the_hierarchy_with_the_corpus_heading_styles(bed: Testbed) -> None:
    bundle = load("python-reference", max_queries=6, max_docs=8, seed=1)
    h = build_hierarchy(bundle.corpus, 600, 120, heading_styles=bundle.heading_styles)
    assert bed.bundle == bundle
    assert [u.id for u in bed.units()] == [u.id for u in h.units("passages")]
    assert bed.texts() == [h.text(u) for u in h.units("passages")]
    assert bed.queries == bundle.queries
    assert bed.qrels() == bundle.qrels(h, "passages")
    assert bed.qrels("sections") == bundle.qrels(h, "sections")
    assert bed.summary() == {
        "questions": 6,
        "units": len(h.units("passages")),
        "level": "passages",
        "sample": bundle.sampling,
    }


def test_level_is_the_finest_judged(tmp_path: Path) -> None:
    beir = Testbed.load(write_beir(tmp_path / "tiny"))
    assert beir.level == "documents"
    assert beir.qrels() == {"q1": {"d1": 2}, "q2": {"d3": 1, "d1": 1}}
    with pytest.raises(ValueError, match="judged at documents only"):
        beir.qrels("passages")


def test_a_hierarchy_of_another_corpus_is_refused(bed: Testbed) -> None:
    other = load("python-reference", max_queries=2, max_docs=3)
    with pytest.raises(ValueError, match=r"build it from bundle\.corpus"):
        Testbed(bed.bundle, build_hierarchy(other.corpus))


def test_searcher_is_made_once_per_encoder_identity(bed: Testbed) -> None:
    first = bed.searcher(HashEncoder(dimension=16))
    assert bed.searcher(HashEncoder(dimension=16)) is first
    assert bed.searcher(HashEncoder(dimension=32)) is not first
    assert first.hierarchy is bed.hierarchy


def test_compare_is_experiment_run_at_the_testbed_level(bed: Testbed) -> None:
    a, b = bed.searcher(HashEncoder(dimension=16)), bed.searcher(HashEncoder(dimension=64))
    p = Profile(ranker="hybrid")
    got = bed.compare(
        {"a": a, "b": b},
        ["ndcg@10", "recall@5"],
        profile=p,
        baseline="b",
        stats=StatsSettings(n_resamples=200, seed=3),
    )
    want = experiment.run(
        {"a": (a, p), "b": (b, p)},
        bed.queries,
        targets=["passages"],
        metrics=["ndcg@10", "recall@5"],
        baseline="b",
        family=[("a", "b")],
        qrels={"passages": bed.qrels()},
        k=100,
        stats=StatsSettings(n_resamples=200, seed=3),
    )
    assert got.family == [("a", "b")]
    assert got.scores == want.scores
    assert got.values("x") == want.values("x")


def test_compare_takes_every_kind_of_arm_and_needs_a_profile_for_searchers(bed: Testbed) -> None:
    s = bed.searcher(HashEncoder(dimension=16))
    result = bed.compare(
        {
            "bm25": Profile(ranker="bm25"),
            "dense": (s, Profile()),
            "arm": experiment.Arm(Profile(ranker="hybrid"), s),
        },
        searcher=s,
        stats=StatsSettings(n_resamples=100),
    )
    assert result.baseline == "bm25"
    assert result.family == [("dense", "bm25"), ("arm", "bm25")]
    with pytest.raises(ValueError, match="arm 'x' is a Searcher: give the profile"):
        bed.compare({"x": s})
