"""hierret.study.thresholds: a threshold read on its own reranker's scale."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest

from hierret.encoders import HashEncoder
from hierret.evaluation.stats import StatsSettings
from hierret.search.rerank import EncoderReranker, Selection
from hierret.study import thresholds
from hierret.study.sets import selection_sweep, set_scores

RUN = {"q1": [("a", 0.9), ("b", 0.6), ("x", 0.2)], "q2": [("c", 0.8), ("y", 0.7)]}
QRELS = {"q1": {"a": 1, "b": 1}, "q2": {"c": 1}}
CASES = {("toy", "rr"): (RUN, QRELS), ("toy", "other"): (RUN, QRELS)}


def test_marks_are_the_selection_at_each_named_threshold() -> None:
    table = thresholds.marks(
        CASES, {"ceiling only": -np.inf, "study": 0.5}, {"rr": 0.75}, min_keep=1, top_k=2
    )
    assert list(table.selection) == [
        "ceiling only",
        "study",
        thresholds.OWN,
        "ceiling only",
        "study",
    ]  # "other" has no threshold
    row = table[(table.reranker == "rr") & (table.selection == thresholds.OWN)].iloc[0]
    final = {q: Selection(0.75, 1, 2).select(r) for q, r in RUN.items()}
    expect = {k: float(np.mean(list(v.values()))) for k, v in set_scores(final, QRELS).items()}
    assert (row.precision, row.recall, row.kept) == (
        expect["precision"],
        expect["recall"],
        expect["kept"],
    )
    values = thresholds.mark_values(
        table, {"ceiling only": "top", "study": "s", thresholds.OWN: "own"}, {"toy": "t"}
    )
    assert values["t_rr_sel_own_kept"] == row.kept
    assert len(values) == 15


def test_sweep_spans_the_scores_and_the_included_values() -> None:
    sweep = thresholds.sweep(CASES[("toy", "rr")], include=(1.5,), n=5)
    assert sweep.min_score.tolist() == pytest.approx([0.2, 0.525, 0.85, 1.175, 1.5])
    assert sweep.equals(selection_sweep(RUN, QRELS, sweep.min_score.tolist()))


def test_summary_and_figures() -> None:
    summary = thresholds.score_summary(CASES)
    assert summary.loc["toy · rr", "relevant median"] == pytest.approx(0.8)
    assert summary.loc["toy · rr", "not relevant median"] == pytest.approx(0.45)
    fig = thresholds.plot_scores(CASES, {"rr": 0.75})
    assert "(0.5" not in fig.axes[0].get_title()  # 0.5 lies on this scale
    marks = thresholds.marks(CASES, {"study": 0.5}, {"rr": 0.75})
    assert len(thresholds.plot_sweeps(CASES, marks, top_k=3).axes) == 4  # two twin axes


def test_own_threshold_by_name_then_by_kind() -> None:
    rr = {
        "e": EncoderReranker(HashEncoder(dimension=8)),
        "f": EncoderReranker(HashEncoder(dimension=8)),
    }
    assert thresholds.own({"e": 0.8, "encoder": 0.6}, rr) == {"e": 0.8, "f": 0.6}


def _case(n: int = 30, seed: int = 0) -> tuple[dict, dict]:
    rng = np.random.default_rng(seed)
    run, qrels = {}, {}
    for i in range(n):
        scores = np.sort(rng.random(12))[::-1]
        run[f"q{i:02d}"] = [(f"u{j}", float(s)) for j, s in enumerate(scores)]
        qrels[f"q{i:02d}"] = {f"u{j}": 1 for j in range(12) if rng.random() < scores[j] ** 3}
    return run, qrels


def test_out_of_fold_measures_each_set_at_a_threshold_chosen_without_it() -> None:
    from hierret.evaluation.stats import cross_validate

    run, qrels = _case()
    t = thresholds.out_of_fold(
        {("c", "r"): (run, qrels)},
        {"r": 0.5},
        min_keep=1,
        top_k=8,
        folds=5,
        n=21,
        stats=StatsSettings(n_resamples=200, seed=2),
    )
    row = t.iloc[0]
    scores = [s for ranking in run.values() for _, s in ranking]
    grid = np.linspace(min(scores), max(scores), 21)
    # the same F1 computed independently, from the package's selection and set measures
    judged = sorted(qrels)
    f1 = np.zeros((len(judged), len(grid)))
    for j, g in enumerate(grid):
        final = {q: Selection(float(g), 1, 8).select(run[q]) for q in judged}
        sc = set_scores(final, qrels)
        for i, q in enumerate(judged):
            p, r = sc["precision"][q], sc["recall"][q]
            f1[i, j] = 2 * p * r / (p + r) if p + r else 0.0
    held, chosen, _ = cross_validate(f1, 5, 2)
    assert row["f1"] == pytest.approx(held.mean())
    assert row["chosen"] == pytest.approx([grid[c] for c in chosen], abs=1e-4)
    assert row["in_sample_f1"] == pytest.approx(f1.mean(axis=0).max())
    assert row["in_sample_f1"] >= row["f1"] - 1e-12  # tuned in sample is never worse
    assert 1 <= row["kept"] <= 8
    values = thresholds.oof_values(t, {"c": "corpus"})
    assert values["corpus_r_oof_f1"] == row["f1"]
    assert "corpus_r_oof_chosen" not in values


def test_the_study_object_is_the_functions_of_its_cases() -> None:
    """``Thresholds`` holds the cases, the own thresholds and the selection once."""
    own = {"rr": 0.75, "other": None}
    study = thresholds.Thresholds(CASES, own, min_keep=1, top_k=2)
    assert study.table().equals(thresholds.score_summary(CASES))
    points = {"ceiling only": -np.inf, "study": 0.5}
    marked = study.marks(points)
    assert marked.equals(thresholds.marks(CASES, points, own, min_keep=1, top_k=2))
    stats = StatsSettings(n_resamples=20)
    tuned = study.out_of_fold(folds=2, stats=stats)
    expect = thresholds.out_of_fold(CASES, own, min_keep=1, top_k=2, folds=2, stats=stats)
    assert tuned.drop(columns="chosen").equals(expect.drop(columns="chosen"))
    labels = {"ceiling only": "top", "study": "s", thresholds.OWN: "own"}
    values = study.values(marked, labels, tuned, {"toy": "t"})
    assert values == thresholds.mark_values(marked, labels, {"toy": "t"}) | (
        thresholds.oof_values(tuned, {"toy": "t"})
    )
    assert list(values)[: len(thresholds.mark_values(marked, labels))] == list(
        thresholds.mark_values(marked, labels, {"toy": "t"})
    )  # the record's order: the marks first, then out of fold
    assert study.values(marked, labels) == thresholds.mark_values(marked, labels)
    assert len(study.plot().axes) >= 2
    assert study.plot_sweeps(marked).axes
