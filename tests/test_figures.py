"""Comparison figures: tables side by side, and a pair's per-question differences."""

from __future__ import annotations

import matplotlib
import pandas as pd

from hierret import experiment
from hierret.datasets import load
from hierret.encoders import HashEncoder
from hierret.figures import difference_figure, interval_panels
from hierret.hierarchy import build_hierarchy
from hierret.profile import Profile
from hierret.search import Searcher

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


def test_difference_figure_shows_the_pair_question_by_question() -> None:
    bundle = load("python-reference", max_queries=12, max_docs=15)
    s = Searcher(build_hierarchy(bundle.corpus), HashEncoder(dimension=16))
    result = experiment.run(
        {"dense": Profile(), "bm25": Profile(ranker="bm25")},
        bundle.queries,
        searcher=s,
        baseline="dense",
        family=[("bm25", "dense")],
        n_resamples=50,
    )
    fig = difference_figure(result, "passages", "ndcg@10", ("bm25", "dense"))
    left, right = fig.axes
    assert left.get_xlabel() == "ndcg@10, passages target (95% bootstrap interval)"
    assert right.get_ylabel() == "bm25 − dense"
    assert len(right.patches) == len(bundle.queries)  # one bar per question
