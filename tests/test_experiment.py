"""Experiment tables: the study's published figures come out of compare_hits."""

from __future__ import annotations

import numpy as np
import pytest

from hierret.experiment import compare, compare_hits, paired_tests


def _arms() -> dict[str, dict[str, bool]]:
    # the study's paired counts: both 24, only passages 12, only whole 2, neither 2
    passages = [True] * 24 + [True] * 12 + [False] * 2 + [False] * 2
    whole = [True] * 24 + [False] * 12 + [True] * 2 + [False] * 2
    return {"passages": {f"q{i}": v for i, v in enumerate(passages)},
            "whole": {f"q{i}": v for i, v in enumerate(whole)}}


def test_compare_hits_reproduces_the_study() -> None:
    t = compare_hits(_arms(), baseline="whole").round(4)
    assert (t.loc["passages", "hits"], t.loc["whole", "hits"]) == (36, 26)
    assert (t.loc["passages", "low"], t.loc["passages", "high"]) == (0.7695, 0.9604)
    assert (t.loc["whole", "low"], t.loc["whole", "high"]) == (0.4951, 0.7787)
    assert t.loc["passages", "diff"] == 0.25
    assert (round(t.loc["passages", "diff_low"], 3), round(t.loc["passages", "diff_high"], 3)) == (
        0.068, 0.415)
    assert t.loc["passages", "p"] == pytest.approx(0.0129, abs=1e-4)


def test_compare_declares_the_family_and_adjusts() -> None:
    rng = np.random.default_rng(1)
    base = rng.uniform(size=60)
    scores = {"base": dict(enumerate(base)), "same": dict(enumerate(base)),
              "better": dict(enumerate(np.clip(base + 0.2, 0, 1)))}
    scores = {a: {f"q{k}": float(v) for k, v in s.items()} for a, s in scores.items()}
    t = compare(scores, baseline="base", n_resamples=2000)
    assert t.loc["same", "p"] == 1.0
    assert t.loc["same", "diff"] == 0.0
    assert t.loc["better", "p_holm"] < 0.01
    assert t.loc["better", "p_holm"] >= t.loc["better", "p"]
    assert t.attrs["family"] == ["same", "better"]
    only = compare(scores, baseline="base", family=["better"], n_resamples=2000)
    assert np.isnan(only.loc["same", "p_holm"])
    with pytest.raises(ValueError, match="not an arm"):
        compare(scores, baseline="nope")


def test_unpaired_input_is_refused() -> None:
    with pytest.raises(ValueError, match="same queries"):
        compare({"a": {"q1": 1.0}, "b": {"q2": 1.0}}, baseline="a")


def test_paired_tests_holm_over_pairs() -> None:
    scores = {"a": {f"q{i}": 1.0 for i in range(20)}, "b": {f"q{i}": 0.0 for i in range(20)},
              "c": {f"q{i}": float(i % 2) for i in range(20)}}
    t = paired_tests(scores, [("a", "b"), ("c", "b")], n_resamples=2000)
    assert t.loc["a vs b", "diff"] == 1.0
    assert t.loc["c vs b", "diff"] == 0.5
    assert (t["p_holm"] >= t["p"]).all()
    with pytest.raises(ValueError, match="unknown arms"):
        paired_tests(scores, [("a", "z")])
