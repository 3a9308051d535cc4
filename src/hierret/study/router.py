"""Choosing the level per question: a router over query-time features, cross-validated.

DR-004's oracle (each question's best arm) is above every fixed arm, an
optimistic bound (:mod:`hierret.study.oracle`). A router tries to choose the arm
per question from what is known when the question arrives, before any judgement:

:func:`features`
    Per question, from the passage ranking and the section ranking (the two
    legs of fused search): each leg's top score, its margin (first minus
    second) and its spread (first minus tenth); whether the best passage's
    section is the best section; how many of the passages' first five
    sections are among the sections' first five; and the question's length
    in words.
:func:`route`
    Seeded k-fold cross-validation over questions (the split of
    :func:`hierret.evaluation.stats.fold_parts`): on each fold's training questions a
    multinomial logistic regression (standardised features) learns which
    arm scores best, each question weighted by what choosing wrong costs
    there (its best minus its worst arm; questions where every arm scores
    the same teach nothing); the held-out fold is routed by it. The best
    fixed arm is chosen on the same training folds, so router and fixed
    arm are compared on the same footing, and the oracle is reported beside
    them.

Examples
--------
>>> import pandas as pd
>>> ids = [f"q{i}" for i in range(8)]  # arm a wins where x > 0, arm b elsewhere
>>> scores = pd.DataFrame({"a": [1.0, 0.0] * 4, "b": [0.0, 1.0] * 4}, index=ids)
>>> feats = pd.DataFrame({"x": [1.0, -1.0] * 4}, index=ids)
>>> routed = route(feats, scores, folds=2)
>>> routed.frame[["router", "fixed", "oracle"]].mean().tolist()
[1.0, 0.25, 1.0]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from hierret.evaluation.stats.folds import fold_parts
from hierret.search.lifting import lift
from hierret.search.runs import Ranking, Run
from hierret.structure.hierarchy import Hierarchy
from hierret.structure.units import Query
from hierret.study.experiment import Result

__all__ = ["FEATURES", "Routed", "add_routed", "features", "route"]

#: The query-time features, in column order.
FEATURES = (
    "p_top",
    "p_margin",
    "p_spread",
    "s_top",
    "s_margin",
    "s_spread",
    "agree_top",
    "overlap5",
    "words",
)


def _leg(ranking: Ranking) -> tuple[float, float, float]:
    scores = [s for _, s in ranking] or [0.0]
    second = scores[1] if len(scores) > 1 else scores[0]
    return scores[0], scores[0] - second, scores[0] - scores[min(9, len(scores) - 1)]


def features(
    queries: Sequence[Query], passages: Run, sections: Run, parent: Mapping[str, str]
) -> pd.DataFrame:
    """The query-time features of every question (:data:`FEATURES`).

    Parameters
    ----------
    queries : sequence of Query
    passages, sections : Run
        The passage and the section rankings (scores as the searcher gave them).
    parent : mapping
        Passage id to section id.

    Returns
    -------
    DataFrame
        One row per question (index: ids, sorted), the columns of :data:`FEATURES`.

    Examples
    --------
    >>> q = [Query("q", "what do cats do", ())]
    >>> f = features(q, {"q": [("a", 0.9), ("b", 0.5)]}, {"q": [("S", 0.7)]},
    ...              {"a": "S", "b": "T"})
    >>> f.loc["q", ["p_margin", "agree_top", "overlap5", "words"]].round(2).tolist()
    [0.4, 1.0, 0.2, 4.0]
    """
    lifted = lift({q.id: passages[q.id] for q in queries}, parent)
    rows = {}
    for q in queries:
        p, s, up = passages[q.id], sections[q.id], lifted[q.id]
        top_p = {u for u, _ in up[:5]}
        rows[q.id] = (
            *_leg(p),
            *_leg(s),
            float(bool(up) and bool(s) and up[0][0] == s[0][0]),
            len(top_p & {u for u, _ in s[:5]}) / 5.0,
            float(len(q.text.split())),
        )
    return pd.DataFrame.from_dict(rows, orient="index", columns=list(FEATURES)).sort_index()


@dataclass(frozen=True)
class Routed:
    """What :func:`route` found.

    Attributes
    ----------
    frame : DataFrame
        Per question (index: ids): ``fold``, ``choice`` (the router's arm),
        ``router`` (its score), ``fixed_arm`` and ``fixed`` (the best fixed
        arm of the training folds, and its score), ``oracle``.
    train : list of list of str
        The training questions of each fold (never its held-out ones).
    """

    frame: pd.DataFrame
    train: list[list[str]]

    def choices(self) -> pd.DataFrame:
        """How often the router chose each arm, and how often each arm was best."""
        counts = {c: self.frame[c].value_counts() for c in ("choice", "best")}
        return pd.DataFrame(counts).fillna(0).astype(int).rename_axis("arm")


def _fit_predict(
    x: np.ndarray,
    labels: np.ndarray,
    weights: np.ndarray,
    test: np.ndarray,
    fallback: int,
    seed: int,
) -> np.ndarray:
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    taught = weights > 0
    classes = np.unique(labels[taught])
    if len(classes) < 2:  # nothing to tell apart: the one class, or the fixed arm
        return np.full(len(test), classes[0] if len(classes) else fallback)
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000, random_state=seed))
    model.fit(x[taught], labels[taught], logisticregression__sample_weight=weights[taught])
    return np.asarray(model.predict(test))


def route(features: pd.DataFrame, scores: pd.DataFrame, folds: int = 5, seed: int = 0) -> Routed:
    """Route each held-out question to an arm; compare with the best fixed arm and the oracle.

    Parameters
    ----------
    features : DataFrame
        Questions as rows (:func:`features`).
    scores : DataFrame
        The same questions as rows, one column per arm the router may choose
        (e.g. :meth:`hierret.study.experiment.Result.per_query` of those arms).
    folds, seed
        The split (:func:`hierret.evaluation.stats.fold_parts` over the questions sorted by id).

    Returns
    -------
    Routed

    Raises
    ------
    ValueError
        Features and scores that do not cover the same questions; fewer than
        two arms.
    """
    if set(features.index) != set(scores.index):
        raise ValueError("features and scores must cover the same questions")
    if scores.shape[1] < 2:
        raise ValueError("a router needs at least two arms to choose from")
    scores = scores.sort_index()
    x = features.loc[scores.index].to_numpy(dtype=float)
    y = scores.to_numpy(dtype=float)
    labels, weights = y.argmax(axis=1), y.max(axis=1) - y.min(axis=1)
    n = len(scores)
    fold, choice, fixed = np.empty(n, int), np.empty(n, int), np.empty(n, int)
    train_ids = []
    for i, part in enumerate(fold_parts(n, folds, seed)):
        train = np.setdiff1d(np.arange(n), part)
        train_ids.append(scores.index[train].tolist())
        fixed[part] = int(np.argmax(y[train].mean(axis=0)))
        choice[part] = _fit_predict(
            x[train], labels[train], weights[train], x[part], int(fixed[part][0]), seed
        )
        fold[part] = i
    rows = np.arange(n)
    arms = np.asarray(scores.columns)
    frame = pd.DataFrame(
        {
            "fold": fold,
            "choice": arms[choice],
            "router": y[rows, choice],
            "fixed_arm": arms[fixed],
            "fixed": y[rows, fixed],
            "oracle": y.max(axis=1),
            "best": np.where(weights > 0, arms[labels], "tie"),
        },
        index=scores.index,
    )
    return Routed(frame, train_ids)


def add_routed(
    result: Result,
    queries: Sequence[Query],
    hierarchy: Hierarchy,
    arms: Sequence[str],
    *,
    passages: str = "chunk",
    sections: str = "rawspan-section",
    folds: int = 5,
    seed: int = 0,
) -> dict[str, Routed]:
    """Route every question among ``arms`` at each target; add ``router`` and ``fixed``.

    The features come from ``result``'s ``passages`` and ``sections`` runs
    (:func:`features`); at each target a router is fitted and scored out of
    fold on ``arms`` (:func:`route`, its first metric), and its scores and
    the best fixed arm's (chosen on the same training folds) join ``result``
    as the arms ``"router"`` and ``"fixed"``, each question with the run and
    qrels of the arm it was routed to (:meth:`~hierret.study.experiment.Result.add`).

    Returns
    -------
    dict
        Target to its :class:`Routed`.
    """
    metric = result.metrics[0]
    runs = result.runs
    feats = features(
        queries, runs[passages], runs[sections], hierarchy.parents("passages", "sections")
    )
    routed = {}
    for target in result.targets:
        scores = result.per_query(target, metric)[list(arms)]
        routed[target] = route(feats.loc[scores.index], scores, folds, seed)
    for arm, chosen in (("router", "choice"), ("fixed", "fixed_arm")):
        rankings = {  # each question's run and qrels: those of the arm it was routed to
            t: ({str(q): result.rankings[t][a].get(str(q), []) for q, a in r.frame[chosen].items()},
                {str(q): result.judgements[t][a][str(q)] for q, a in r.frame[chosen].items()})
            for t, r in routed.items() if t in result.rankings
        }  # fmt: skip
        result.add(
            arm,
            {t: {str(q): float(v) for q, v in r.frame[arm].items()} for t, r in routed.items()},
            metric,
            rankings,
        )
    return routed
