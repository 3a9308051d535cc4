"""The oracle arm: each query's best arm, over one or several results, with its interval."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from pandas import testing as pd_testing

import hierret.study.oracle as oracle_
from hierret.evaluation.stats import StatsSettings
from hierret.study.experiment import Result, compare, compare_hits
from hierret.study.oracle import oracle, oracle_table

QUERIES = [f"q{i}" for i in range(12)]
RNG = np.random.default_rng(3)
A, B, C = (dict(zip(QUERIES, RNG.uniform(size=12).round(3), strict=True)) for _ in range(3))


def _result(by_target: dict[str, dict[str, dict[str, float]]], baseline: str) -> Result:
    scores = {t: {"ndcg@10": arms} for t, arms in by_target.items()}
    return Result(
        {}, scores, baseline, [], list(by_target), ["ndcg@10"], stats=StatsSettings(n_resamples=300)
    )


def test_oracle_is_the_best_arm_of_each_query() -> None:
    frame = pd.DataFrame({"a": A, "b": B, "c": C})
    best = oracle(frame)
    for q in QUERIES:
        assert best[q] == max(A[q], B[q], C[q])
    with pytest.raises(ValueError, match="do not score every query"):
        oracle(pd.DataFrame({"a": {"q1": 1.0}, "b": {"q2": 1.0}}))
    with pytest.raises(ValueError, match="no arms"):
        oracle(pd.DataFrame(index=["q1"]))


def test_table_over_two_results_equals_compare_with_the_oracle_by_hand() -> None:
    first = _result({"documents": {"a": A, "b": B}, "sections": {"a": A, "b": B}}, "a")
    second = _result({"documents": {"a": A, "c": C}}, "a")  # shares the baseline
    table = oracle_table([first, second], "documents", "ndcg@10")
    best = {q: max(A[q], B[q], C[q]) for q in QUERIES}
    expected = compare(
        {"a": A, "b": B, "c": C, "oracle": best}, "a", [], stats=StatsSettings(n_resamples=300)
    )
    pd_testing.assert_frame_equal(table, expected)
    assert list(table.index) == ["a", "b", "c", "oracle"]
    assert table[["diff", "p", "p_holm"]].isna().all().all()  # no tests: chosen after the fact
    # a result without the target is skipped
    sections = oracle_table([first, second], "sections", "ndcg@10")
    assert list(sections.index) == ["a", "b", "oracle"]


def test_hit_rates_use_the_hit_table() -> None:
    hits_a = {q: float(i % 2) for i, q in enumerate(QUERIES)}
    hits_b = {q: float(i % 3 == 0) for i, q in enumerate(QUERIES)}
    scores = {"sections": {"hit@1": {"a": hits_a, "b": hits_b}}}
    r = Result({}, scores, "a", [], ["sections"], ["hit@1"])
    table = oracle_table([r], "sections", "hit@1")
    any_hit = {q: hits_a[q] > 0 or hits_b[q] > 0 for q in QUERIES}
    expected = compare_hits(
        {
            "a": {q: v > 0 for q, v in hits_a.items()},
            "b": {q: v > 0 for q, v in hits_b.items()},
            "oracle": any_hit,
        },
        "a",
        [],
    )
    pd_testing.assert_frame_equal(table, expected)


def test_mismatched_results_are_refused() -> None:
    first = _result({"documents": {"a": A, "b": B}}, "a")
    with pytest.raises(ValueError, match="no result is judged at the 'sections'"):
        oracle_table([first], "sections", "ndcg@10")
    other_queries = _result({"documents": {"a": {"x": 1.0}}}, "a")
    with pytest.raises(ValueError, match="different queries"):
        oracle_table([first, other_queries], "documents", "ndcg@10")
    other_scores = _result({"documents": {"a": B}}, "a")
    with pytest.raises(ValueError, match="'a' scores differently"):
        oracle_table([first, other_scores], "documents", "ndcg@10")
    with pytest.raises(ValueError, match="already an arm"):
        oracle_table([first], "documents", "ndcg@10", name="b")


def test_an_oracle_over_some_arms_keeps_its_meaning_when_arms_are_added() -> None:
    r = _result({"documents": {"a": A, "b": B, "c": C}}, "a")
    table = oracle_table([r], "documents", "ndcg@10", over=["a", "b"])
    assert table.loc["oracle", "mean"] == pytest.approx(np.mean([max(A[q], B[q]) for q in QUERIES]))
    assert list(table.index) == ["a", "b", "c", "oracle"]
    with pytest.raises(ValueError, match=r"oracle over \['z'\]"):
        oracle_table([r], "documents", "ndcg@10", over=["z"])


def test_oracle_arms_not_judged_at_the_target_are_left_out() -> None:
    first = _result({"documents": {"a": A, "b": B}, "sections": {"a": A, "b": B}}, "a")
    second = _result({"documents": {"a": A, "c": C}}, "a")
    table = oracle_table([first, second], "sections", "ndcg@10", over=["a", "c"])
    assert table.loc["oracle", "mean"] == pytest.approx(np.mean(list(A.values())))


def test_tables_show_the_oracle_as_an_untested_bound_over_its_arms() -> None:
    frame = pd.DataFrame({"mean": [0.5, 0.9]}, index=["chunk", "oracle"])
    shown = frame.rename(index=oracle_.RELABEL)
    assert shown.index[-1] == oracle_.LABEL
    assert "untested" in oracle_.LABEL
    assert "its arms" in oracle_.LABEL
    root = Path(__file__).resolve().parents[2] / "notebooks"
    for name in ("05_dr004_hierarchy", "06_dr005_beyond"):  # the tables those pages show:
        assert "oracle.table(t" in (root / f"{name}.ipynb").read_text()  # Oracle.table
    # relabels the oracle's row (test_the_oracle_object_holds_every_run_and_target_of_a_grid)


def test_the_oracle_object_holds_every_run_and_target_of_a_grid() -> None:
    """``Oracle`` is :func:`oracle_table` over a grid: its tables, the wide view of a
    target, the rows that are arms and each run's panel with or without the oracle."""
    from hierret.study.oracle import LABEL, Oracle, oracle_table

    stats = StatsSettings(n_resamples=50)
    scores = {"sections": {"mrr": {"a": {"q1": 1.0, "q2": 0.0}, "b": {"q1": 0.5, "q2": 1.0}}}}
    other = {"sections": {"mrr": {"a": {"q1": 0.0, "q2": 0.0}, "b": {"q1": 1.0, "q2": 1.0}}}}
    r1 = Result({}, scores, "a", [], ["sections"], ["mrr"], stats)
    r2 = Result({}, other, "a", [], ["sections"], ["mrr"], stats)
    grid = Oracle({("x", 1): r1, ("x", 2): [r2]}, ["sections"], "mrr", over=["a", "b"])
    assert grid.tables.loc["x", 1, "sections"].equals(oracle_table([r1], "sections", "mrr"))
    wide = grid.table("sections")
    assert wide.loc[LABEL].tolist() == [1.0, 1.0]
    assert wide.loc["b"].tolist() == [0.75, 1.0]
    assert grid.arms("sections")[0].tolist() == ["a", "b"]
    assert "oracle" not in grid.panel("x", 2, "sections", with_oracle=False).index
    assert grid.panel("x", 2, "sections").index[-1] == LABEL
