"""The shared primitives, comparison tables side by side, and a pair's per-question differences."""

from __future__ import annotations

import matplotlib
import pandas as pd

from hierret.datasets import load
from hierret.encoders import HashEncoder
from hierret.evaluation.stats import StatsSettings
from hierret.publish.figures import (
    WIDTH,
    difference_figure,
    interval_panels,
    interval_plot,
    paired_difference_plot,
    readable_span,
)
from hierret.search.profile import Profile
from hierret.search.searcher import Searcher
from hierret.structure.hierarchy import build_hierarchy
from hierret.study import experiment

matplotlib.use("Agg")


def test_interval_panels_one_per_table_with_its_title() -> None:
    hits = pd.DataFrame(
        {"rate": [0.6, 0.4], "low": [0.5, 0.3], "high": [0.7, 0.5]}, index=["passages", "whole"]
    )
    means = hits.rename(columns={"rate": "mean"})
    fig = interval_panels(
        {"SECTION target": hits, "DOCUMENT target": means}, xlabel="hit@1", baseline="whole"
    )
    assert [ax.get_title() for ax in fig.axes] == ["SECTION target", "DOCUMENT target"]
    assert [ax.get_xlabel() for ax in fig.axes] == ["", "hit@1"]  # under the bottom panel
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["passages", "whole"]
    assert len(fig.axes[0].lines) >= 1  # the baseline's dotted line


def test_interval_plot_draws_a_row_per_arm_and_the_baseline_in_black() -> None:
    table = pd.DataFrame(
        {"mean": [0.7, 0.8], "low": [0.6, 0.7], "high": [0.8, 0.9]}, index=["dense", "bm25"]
    )
    ax = interval_plot(table, xlabel="nDCG@10", baseline="dense")
    assert ax.figure.get_size_inches()[0] == WIDTH
    assert [t.get_text() for t in ax.get_yticklabels()] == ["dense", "bm25"]
    assert [line.get_xdata()[0] for line in ax.lines if line.get_linestyle() == ":"] == [0.7]


def test_paired_differences_are_sorted_and_counted() -> None:
    ax = paired_difference_plot(
        {"q1": 1.0, "q2": 0.0, "q3": 0.5}, {"q1": 0.5, "q2": 0.5, "q3": 0.5}
    )
    assert [p.get_height() for p in ax.patches] == [-0.5, 0.0, 0.5]
    assert ax.get_xlabel() == "queries, sorted (1 better, 1 worse, 1 tied)"
    assert readable_span(ax, 10.0, bounds=(-5.0, 5.0)).get_ylim() == (-5.0, 5.0)


def test_difference_figure_is_drawn_from_a_table_and_two_score_series() -> None:
    table = pd.DataFrame(
        {"rate": [0.5, 0.6], "low": [0.4, 0.5], "high": [0.6, 0.7]}, index=["dense", "bm25"]
    )
    a = pd.Series({"q1": 1.0, "q2": 0.0, "q3": 1.0}, name="bm25")
    b = pd.Series({"q1": 0.0, "q2": 0.0, "q3": 1.0}, name="dense")
    fig = difference_figure(
        table, a, b, metric="hit@1", target="sections", level="90% Wilson", baseline="dense"
    )
    top, bottom = fig.axes
    assert top.get_xlabel() == "hit@1, sections target (90% Wilson interval)"
    assert bottom.get_ylabel() == "bm25 − dense"
    assert bottom.get_title() == "per-question hit@1 difference"
    assert sorted(p.get_height() for p in bottom.patches) == [0.0, 0.0, 1.0]


def test_a_results_difference_figure_shows_the_pair_question_by_question() -> None:
    bundle = load("python-reference", max_queries=12, max_docs=15)
    s = Searcher(build_hierarchy(bundle.corpus), HashEncoder(dimension=16))
    result = experiment.run(
        {"dense": Profile(), "bm25": Profile(ranker="bm25")},
        bundle.queries,
        searcher=s,
        baseline="dense",
        family=[("bm25", "dense")],
        stats=StatsSettings(n_resamples=50),
    )
    fig = result.difference_figure("passages", "ndcg@10", ("bm25", "dense"))
    left, right = fig.axes
    assert left.get_xlabel() == "ndcg@10, passages target (95% bootstrap interval)"
    assert right.get_ylabel() == "bm25 − dense"
    assert len(right.patches) == len(bundle.queries)  # one bar per question
