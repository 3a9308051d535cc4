"""The chunking sweep: one searcher per passage size, compared where the sizes meet."""

from __future__ import annotations

import matplotlib
import pytest

from hierret.datasets import load
from hierret.encoders import HashEncoder, truncation_report
from hierret.evaluation import evaluate, lift, qrels_from_evidence
from hierret.evaluation.stats import StatsSettings
from hierret.search.profile import Profile
from hierret.search.searcher import Searcher
from hierret.structure.hierarchy import build_hierarchy
from hierret.study import experiment
from hierret.study.sweep import chunking_sweep

matplotlib.use("Agg")


def _bundle():  # type: ignore[no-untyped-def]
    return load("python-reference", max_queries=8, max_docs=12)


def test_each_size_has_its_own_chunking_and_the_shared_encoder() -> None:
    bundle, enc = _bundle(), HashEncoder(dimension=16, window=64)
    sweep = chunking_sweep(bundle.corpus, enc, [(600, 120), (900, 180)], bundle.heading_styles)
    assert sweep.sizes == [600, 900]
    for size, overlap in ((600, 120), (900, 180)):
        h = sweep.searchers[size].hierarchy
        assert (h.params["max_chars"], h.params["overlap_chars"]) == (size, overlap)
        assert sweep.searchers[size].encoder is enc
        expected = build_hierarchy(bundle.corpus, max_chars=size, overlap_chars=overlap)
        assert [p.id for p in h.passages] == [p.id for p in expected.passages]


def test_table_counts_passages_and_those_over_the_window() -> None:
    bundle, enc = _bundle(), HashEncoder(dimension=16, window=64)
    sweep = chunking_sweep(bundle.corpus, enc, [(300, 60), (1200, 240)])
    table = sweep.table()
    assert list(table.index) == [300, 1200]
    for size in (300, 1200):
        report = truncation_report(enc, sweep.searchers[size].texts("passages"))
        assert table.loc[size, "passages"] == report.n_texts
        assert table.loc[size, "over_window"] == report.n_over_window
        assert table.loc[size, "over_window_share"] == pytest.approx(report.share)
    assert table.loc[1200, "over_window_share"] > table.loc[300, "over_window_share"]


def test_arms_are_profile_by_size_and_run_as_each_searcher_runs() -> None:
    bundle, enc = _bundle(), HashEncoder(dimension=16)
    sweep = chunking_sweep(bundle.corpus, enc, [(600, 120), (900, 180)])
    profiles = {"dense": Profile(), "bm25": Profile(ranker="bm25")}
    arms = sweep.arms(profiles)
    assert list(arms) == ["dense-600", "dense-900", "bm25-600", "bm25-900"]
    result = experiment.run(
        arms,
        bundle.queries,
        targets=["sections"],
        metrics=["ndcg@10"],
        baseline="dense-900",
        family=sweep.family("dense", 900),
        stats=StatsSettings(n_resamples=50),
    )
    for name, arm in arms.items():  # the old loop: run each searcher, lift, evaluate
        s = arm.searcher
        assert isinstance(s, Searcher)
        run = lift(
            s.run(bundle.queries, arm.profile, k=100), s.hierarchy.parents("passages", "sections")
        )
        qrels = qrels_from_evidence(bundle.queries, s.hierarchy.units("sections"))
        assert (
            result.scores["sections"]["ndcg@10"][name]
            == evaluate(run, qrels, ["ndcg@10"])["ndcg@10"]
        )
    table = result.table("sections", "ndcg@10")
    assert table["diff"].notna().tolist() == [True, False, False, False]


def test_family_and_settings_are_checked() -> None:
    bundle, enc = _bundle(), HashEncoder(dimension=8)
    sweep = chunking_sweep(bundle.corpus, enc, [(600, 120), (900, 180), (1200, 240)])
    assert sweep.family("dense", 900) == [("dense-600", "dense-900"), ("dense-1200", "dense-900")]
    with pytest.raises(ValueError, match="not swept"):
        sweep.family("dense", 800)
    with pytest.raises(ValueError, match="each max_chars once"):
        chunking_sweep(bundle.corpus, enc, [(600, 120), (600, 0)])
    with pytest.raises(ValueError, match="no settings"):
        chunking_sweep(bundle.corpus, enc, [])


def test_plot_draws_one_line_per_profile_over_the_sizes() -> None:
    bundle, enc = _bundle(), HashEncoder(dimension=16)
    sweep = chunking_sweep(bundle.corpus, enc, [(600, 120), (900, 180)])
    result = experiment.run(
        sweep.arms({"dense": Profile(), "bm25": Profile(ranker="bm25")}),
        bundle.queries,
        targets=["sections"],
        metrics=["ndcg@10", "hit@1"],
        baseline="dense-900",
        stats=StatsSettings(n_resamples=50),
    )
    ax = sweep.plot(result.table("sections", "ndcg@10"), ["dense", "bm25"], ylabel="nDCG@10")
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["dense", "bm25"]
    assert "95% intervals" in ax.get_ylabel()
    assert [int(x) for x in ax.get_xticks()] == [600, 900]
    sweep.plot(result.table("sections", "hit@1"), ["dense"])  # hit rates plot too
