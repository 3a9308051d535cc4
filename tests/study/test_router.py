"""The router (hierret.study.router): folds never see their own questions."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from hierret.evaluation.stats.folds import fold_parts, held_out
from hierret.structure.units import Query
from hierret.study import router


def _random(n: int = 60, seed: int = 1) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    ids = [f"q{i:03d}" for i in range(n)]
    wins = rng.integers(0, 2, n)
    scores = pd.DataFrame({"a": wins.astype(float), "b": 1.0 - wins}, index=ids)
    identity = pd.DataFrame(np.eye(n), index=ids, columns=[f"is_{q}" for q in ids])
    return identity, scores


def test_folds_never_see_their_own_questions() -> None:
    feats, scores = _random()
    routed = router.route(feats, scores, folds=5, seed=3)
    held = routed.frame.groupby("fold").groups
    assert sorted(q for g in held.values() for q in g) == sorted(scores.index)
    for fold, train in enumerate(routed.train):
        assert not set(train) & set(held[fold])
        assert set(train) | set(held[fold]) == set(scores.index)
    parts = fold_parts(len(scores), 5, 3)  # the one split, shared with stats.held_out
    assert [sorted(scores.index[p]) for p in parts] == [sorted(held[f]) for f in range(5)]


def test_a_router_cannot_memorise_the_held_out_questions() -> None:
    """Features that only name the question: honest folds route at chance, a leak would not."""
    feats, scores = _random()
    routed = router.route(feats, scores, folds=5)
    x, y = feats.to_numpy(), scores.to_numpy()
    leaked = router._fit_predict(x, y.argmax(1), np.ones(len(y)), x, 0, 0)  # sees them all
    assert (leaked == y.argmax(1)).mean() > 0.95  # what a leak would score
    assert routed.frame["router"].mean() < 0.75
    assert routed.frame["oracle"].mean() == 1.0


def test_fixed_arm_is_chosen_out_of_fold_like_held_out() -> None:
    feats, scores = _random(seed=4)
    routed = router.route(feats, scores, folds=4, seed=2)
    expected, _ = held_out(scores, folds=4, seed=2)
    assert np.allclose(routed.frame["fixed"], expected.loc[routed.frame.index])


def test_features_and_errors() -> None:
    qs = [Query("q1", "how do cats purr", ()), Query("q2", "dogs", ())]
    passages = {"q1": [("p1", 0.9), ("p2", 0.8)], "q2": [("p2", 0.5)]}
    sections = {"q1": [("S", 0.7), ("T", 0.2)], "q2": [("S", 0.4)]}
    f = router.features(qs, passages, sections, {"p1": "S", "p2": "T"})
    assert list(f.columns) == list(router.FEATURES)
    assert f.loc["q1", "p_margin"] == pytest.approx(0.1)
    assert f.loc["q1", "agree_top"] == 1.0
    assert f.loc["q2", "agree_top"] == 0.0
    assert f.loc["q1", "words"] == 4.0
    with pytest.raises(ValueError, match="same questions"):
        router.route(f, pd.DataFrame({"a": [1.0], "b": [0.0]}, index=["q1"]))
    with pytest.raises(ValueError, match="at least two arms"):
        router.route(f, pd.DataFrame({"a": [1.0, 0.0]}, index=["q1", "q2"]))
