"""hierret.publish.charts: each study's figures, drawn from small frames and arrays alone."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pandas as pd
import pytest

from hierret.publish import charts
from hierret.publish.figures import WIDTH

TABLE = pd.DataFrame(
    {"mean": [0.6, 0.4, 0.5], "low": [0.5, 0.3, 0.4], "high": [0.7, 0.45, 0.6]},
    index=["minilm", "wordllama", "e5"],
)


def test_arms_figure_has_a_panel_per_table_as_tall_as_its_rows() -> None:
    fig = charts.arms_figure(
        {"sections target": TABLE, "documents target": TABLE}, xlabel="mrr", baseline="e5"
    )
    assert [ax.get_title() for ax in fig.axes] == ["sections target", "documents target"]
    assert [ax.get_xlabel() for ax in fig.axes] == ["mrr", "mrr"]
    assert fig.get_size_inches().tolist() == pytest.approx([WIDTH, 2 * (0.38 * 3 + 1.3)])


def test_sweep_figure_has_a_panel_per_target_and_a_line_per_group() -> None:
    rows = pd.DataFrame(
        {
            "w": [0.0, 1.0] * 4,
            "v": ["a"] * 4 + ["b"] * 4,
            "target": ["sections", "sections", "documents", "documents"] * 2,
            "mean": [0.5, 0.6, 0.7, 0.6, 0.4, 0.5, 0.6, 0.7],
            "low": [0.4, 0.5, 0.6, 0.5, 0.3, 0.4, 0.5, 0.6],
            "high": [0.6, 0.7, 0.8, 0.7, 0.5, 0.6, 0.7, 0.8],
        }
    )
    fig = charts.sweep_figure(rows, "w", by="v", ylabel="nDCG@10", marks=[0.5], title="pyref")
    assert [ax.get_title() for ax in fig.axes] == ["sections target", "documents target"]
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == ["a", "b"]
    assert fig.get_suptitle() == "pyref"


def test_chunk_sizes_axes_draws_a_line_per_name_over_the_sizes() -> None:
    table = pd.DataFrame(
        {"rate": [0.5, 0.6, 0.55, 0.65], "low": [0.4, 0.5, 0.45, 0.55]}
        | {"high": [0.6, 0.7, 0.65, 0.75]},
        index=["dense-300", "dense-600", "bm25-300", "bm25-600"],
    )
    table.attrs["confidence"] = 0.9
    ax = charts.chunk_sizes_axes(table, ["dense", "bm25"], [300, 600], ylabel="hit@1")
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["dense", "bm25"]
    assert ax.get_ylabel() == "hit@1 (90% intervals)"
    low, high = ax.get_ylim()
    assert high - low >= 0.1 - 1e-9  # a readable span


def test_threshold_figures_lay_the_cases_out_on_their_grid() -> None:
    scores = {
        ("toy", "rr"): (np.array([0.9, 0.6, 0.8]), np.array([0.2, 0.7])),
        ("big", "other"): (np.array([2.5, 3.0]), np.array([1.0])),
    }
    fig = charts.threshold_scores_figure(scores, {"rr": 0.75}, reference=2.0, bins=5)
    titles = [ax.get_title() for ax in fig.axes if ax.axison]
    assert titles == ["toy: rr (2.0 is off this scale)", "big: other"]  # scales start at 0
    sweep = pd.DataFrame(
        {"min_score": [0.0, 0.5, 1.0], "precision": [0.5, 0.8, 1.0]}
        | {"recall": [1.0, 0.7, 0.1], "kept": [4.0, 2.0, 0.5]}
    )
    marked = pd.DataFrame(
        {
            "corpus": ["toy", "toy"],
            "reranker": ["rr", "rr"],
            "selection": ["own", "top_k only"],
            "min_score": [0.5, -np.inf],
            "precision": [0.8, 0.5],
            "recall": [0.7, 1.0],
        }
    )
    fig = charts.threshold_sweeps_figure(
        {("toy", "rr"): sweep, ("big", "other"): sweep}, marked, top_k=3, filled="own"
    )
    first = fig.axes[0]
    marks = [line for line in first.lines if line.get_marker() == "o"]
    assert [m.get_markerfacecolor() != "none" for m in marks] == [True, True]  # filled, finite
    assert fig.axes[-1].get_ylim() == (0.0, 4.0)  # the size axis: top_k + 1


def test_joint_matrix_figure_leaves_the_right_panel_blank_without_differences() -> None:
    diff = pd.DataFrame({"diff": [0.1], "diff_low": [0.0], "diff_high": [0.2]}, index=["minilm+rr"])
    fig = charts.joint_matrix_figure(
        {"pets": TABLE, "cats": TABLE},
        {"pets": diff, "cats": diff.iloc[:0]},
        "ndcg@10",
        {"pets": 0.95, "cats": 0.9},
    )
    assert [ax.get_title() for ax in fig.axes if ax.axison] == [
        "pets: every arm",
        "pets: reranked − own first stage",
        "cats: every arm",
    ]
    assert fig.axes[2].get_xlabel() == "ndcg@10 (mean over questions, 90% interval)"


def test_cost_tradeoff_axes_draws_each_arm_with_its_interval_at_its_speed() -> None:
    ax = charts.cost_tradeoff_axes(
        pd.Series({"wordllama": 3000.0, "minilm": 10.0}), TABLE, ylabel="nDCG@10", title="pyref"
    )
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["minilm", "wordllama"]  # e5 has no speed: left out
    assert ax.get_xscale() == "log"
    points = [line.get_xydata().tolist() for line in ax.lines if line.get_marker() == "o"]
    assert points == [[[10.0, 0.6]], [[3000.0, 0.4]]]
    segments = [c.get_segments()[0].tolist() for c in ax.collections if c.get_segments()]
    assert segments == [[[10.0, 0.5], [10.0, 0.7]], [[3000.0, 0.3], [3000.0, 0.45]]]


def test_cost_tradeoff_figure_names_the_arms_once() -> None:
    speed = pd.Series({("a", "minilm"): 10.0, ("a", "e5"): 40.0, ("b", "minilm"): 12.0})
    fig = charts.cost_tradeoff_figure(
        speed, {("a", "dense"): TABLE, ("b", "dense"): TABLE}, ylabel="nDCG@10"
    )
    assert [ax.get_title() for ax in fig.axes] == ["a, dense", "b, dense"]
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["minilm", "e5"]


def test_histograms_label_their_axes() -> None:
    cosines = np.array([0.999, 0.998, 0.95, 0.97])
    fig = charts.cosine_histogram(cosines, cosines < 0.98, names=("fp32", "int8"))
    assert fig.axes[0].get_xlabel() == "cosine(int8, fp32) per unit"
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == [
        "within the window",
        "longer than the window",
    ]
    ax = charts.length_histogram(
        [120, 300, 810], 800, unit="characters", limit_name="max_chars", what="section"
    )
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("section length (characters)", "sections")
    assert ax.get_legend().get_texts()[0].get_text() == "max_chars = 800 characters"
