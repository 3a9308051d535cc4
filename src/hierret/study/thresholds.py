"""A score threshold read on its own reranker's scale: distributions, sweeps, marks.

A :class:`~hierret.search.rerank.Selection` threshold only means something on the
scale of the reranker that made the scores: a cross-encoder's probability, a
MaxSim average of token cosines and a bi-encoder cosine are not comparable.
These functions look at one or more *cases*, each a reranked run (every
candidate with the reranker's score, ``ProfileRun.reranked``) and its
judgements, keyed ``(row, column)`` — e.g. ``(corpus, reranker)`` — and laid
out on that grid in the figures:

* :func:`score_summary` and :func:`plot_scores` — the scores of relevant and
  non-relevant candidates: where they overlap, no threshold separates them;
* :func:`sweep` and :func:`plot_sweeps` — the returned set's precision,
  recall and size as the threshold moves over the scores' range (floor and
  ceiling fixed; :func:`~hierret.study.sets.selection_sweep`);
* :func:`marks` — the same at named thresholds (e.g. a study's 0.5 and each
  reranker's own ``min_score``);
* :func:`out_of_fold` — the threshold tuned honestly: chosen on some
  questions by the returned set's F1, scored on the others (seeded k-fold,
  :func:`hierret.evaluation.stats.cross_validate`).

Examples
--------
>>> run = {"q1": [("a", 0.9), ("b", 0.6), ("x", 0.2)], "q2": [("c", 0.8), ("y", 0.7)]}
>>> cases = {("toy", "rr"): (run, {"q1": {"a": 1, "b": 1}, "q2": {"c": 1}})}
>>> score_summary(cases).round(2).values.tolist()
[[0.8, 0.45, 0.2, 0.9]]
>>> marks(cases, {"study": 0.5}, own={"rr": 0.75}, min_keep=1)[
...     ["selection", "precision", "kept"]].values.tolist()
[['study', 0.75, 2.0], ['own min_score', 1.0, 1.0]]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from numpy.typing import NDArray

import hierret.publish.charts as charts
from hierret.evaluation.stats import DEFAULT_STATS, StatsSettings, cross_validate, mean_interval
from hierret.publish.record import key
from hierret.search.rerank import Reranker, Selection
from hierret.search.runs import Qrels, Run
from hierret.study.sets import selection_sweep, set_scores

if TYPE_CHECKING:
    from hierret.publish.figures import Figure

__all__ = [
    "OWN",
    "Cases",
    "Thresholds",
    "mark_values",
    "marks",
    "oof_values",
    "out_of_fold",
    "own",
    "plot_scores",
    "plot_sweeps",
    "score_summary",
    "scores_by_relevance",
    "sweep",
]

#: ``(row, column)`` to a reranked run and its judgements.
Cases = Mapping[tuple[str, str], tuple[Run, Qrels]]
#: The label :func:`marks` gives each column's own threshold.
OWN = "own min_score"


def own(
    min_score: Mapping[str, float], rerankers: Mapping[str, Reranker]
) -> dict[str, float | None]:
    """Each reranker's own threshold: its entry by name, else its kind's (``"cross-encoder"``).

    Examples
    --------
    >>> from hierret.encoders import HashEncoder
    >>> from hierret.search.rerank import EncoderReranker
    >>> rr = {"e5": EncoderReranker(HashEncoder(dimension=8)),
    ...       "other": EncoderReranker(HashEncoder(dimension=8))}
    >>> own({"e5": 0.85, "cross-encoder": 0.5}, rr)
    {'e5': 0.85, 'other': None}
    """
    return {
        name: min_score.get(name, min_score.get(r.identity.kind)) for name, r in rerankers.items()
    }


def _split(case: tuple[Run, Qrels]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    return scores_by_relevance(*case)


def score_summary(cases: Cases) -> pd.DataFrame:
    """Per case (``"row · column"``): median score of relevant and non-relevant, min, max.

    Cases with no relevant or no non-relevant candidate are left out.
    """
    rows = {}
    for (row, col), case in cases.items():
        rel, non = _split(case)
        if len(rel) and len(non):
            rows[f"{row} · {col}"] = {
                "relevant median": float(np.median(rel)),
                "not relevant median": float(np.median(non)),
                "min": float(min(rel.min(), non.min())),
                "max": float(max(rel.max(), non.max())),
            }
    return pd.DataFrame.from_dict(rows, orient="index")


def plot_scores(
    cases: Cases,
    own: Mapping[str, float | None] | None = None,
    reference: float | None = 0.5,
    bins: int = 30,
) -> Figure:
    """Histograms (densities) of relevant and non-relevant candidates' scores, per case.

    A solid line marks the column's own threshold (``own[column]``), a dashed
    one ``reference`` when it lies on the case's scale (the title says when it
    does not).

    Drawn by :func:`hierret.publish.charts.threshold_scores_figure`, one
    panel per case on the grid of their keys.
    """
    scores = {rc: _split(case) for rc, case in cases.items()}
    return charts.threshold_scores_figure(scores, own, reference, bins)


def sweep(
    case: tuple[Run, Qrels],
    *,
    include: tuple[float, ...] = (0.5,),
    n: int = 41,
    min_keep: int = 0,
    top_k: int | None = None,
) -> pd.DataFrame:
    """:func:`~hierret.study.sets.selection_sweep` over ``n`` thresholds spanning the scores.

    The grid runs evenly from the lowest to the highest score of the case,
    widened to hold every value of ``include``.
    """
    grid = _threshold_grid(case, include, n)
    return selection_sweep(case[0], case[1], grid.tolist(), min_keep=min_keep, top_k=top_k)


def _threshold_grid(
    case: tuple[Run, Qrels], include: tuple[float, ...], n: int
) -> NDArray[np.float64]:
    """``n`` thresholds evenly over the case's scores, widened to hold ``include``."""
    rel, non = _split(case)
    both = np.concatenate([rel, non, np.asarray(include, dtype=np.float64)])
    if not len(both):
        raise ValueError("the case has no reranked score to choose a threshold from")
    return np.linspace(both.min(), both.max(), n)


def marks(
    cases: Cases,
    points: Mapping[str, float],
    own: Mapping[str, float | None] | None = None,
    *,
    min_keep: int = 0,
    top_k: int | None = None,
) -> pd.DataFrame:
    """The returned set at named thresholds, per case.

    Parameters
    ----------
    cases : Cases
    points : mapping of str to float
        Thresholds by label, the same for every case (``-inf``: the ceiling
        alone decides).
    own : mapping of str to float, optional
        Each column's own threshold, added as :data:`OWN` where not ``None``.
    min_keep, top_k
        The floor and the ceiling.

    Returns
    -------
    pandas.DataFrame
        One row per case and threshold: ``corpus`` (the row), ``reranker``
        (the column), ``selection``, ``min_score``, ``precision``, ``recall``,
        ``kept``, ``floored`` (as :func:`~hierret.study.sets.selection_sweep`).
    """
    frames = []
    for (row, col), case in cases.items():
        named = dict(points)
        if (own or {}).get(col) is not None:
            named[OWN] = float((own or {})[col] or 0.0)
        at = selection_sweep(case[0], case[1], list(named.values()), min_keep=min_keep, top_k=top_k)
        frames.append(at.assign(corpus=row, reranker=col, selection=list(named)))
    columns = [
        "corpus",
        "reranker",
        "selection",
        "min_score",
        "precision",
        "recall",
        "kept",
        "floored",
    ]
    return (
        pd.concat(frames, ignore_index=True)[columns] if frames else pd.DataFrame(columns=columns)
    )


def plot_sweeps(
    cases: Cases,
    marked: pd.DataFrame | None = None,
    *,
    include: tuple[float, ...] = (0.5,),
    min_keep: int = 0,
    top_k: int | None = None,
    filled: str = OWN,
) -> Figure:
    """Set precision and recall (left axis) and size (right axis) against the threshold.

    ``marked`` (from :func:`marks`) adds its points on the curves: filled for
    the ``filled`` selection, open for the others with a finite threshold.

    Drawn by :func:`hierret.publish.charts.threshold_sweeps_figure`, one
    panel per case on the grid of their keys, from :func:`sweep` of each case.
    """
    sweeps = {
        rc: sweep(case, include=include, min_keep=min_keep, top_k=top_k)
        for rc, case in cases.items()
    }
    return charts.threshold_sweeps_figure(sweeps, marked, top_k=top_k, filled=filled)


def mark_values(
    table: pd.DataFrame, labels: Mapping[str, str], prefixes: Mapping[str, str] | None = None
) -> dict[str, float]:
    """Record values of :func:`marks`: ``{corpus}_{reranker}_sel_{label}_{measure}``.

    ``labels`` gives each selection's short name in keys (e.g. ``"own"`` for
    :data:`OWN`), ``prefixes`` each corpus's (default: its name); keys follow
    :func:`hierret.publish.record.key`; the measures are precision, recall and kept.

    Examples
    --------
    >>> t = pd.DataFrame([{"corpus": "c", "reranker": "r", "selection": OWN,
    ...                    "precision": 0.5, "recall": 1.0, "kept": 2.0}])
    >>> mark_values(t, {OWN: "own"})["c_r_sel_own_kept"]
    2.0
    """
    names = prefixes or {}
    return {
        key(
            names.get(x["corpus"], x["corpus"]), x["reranker"], "sel", labels[x["selection"]], col
        ): float(x[col])
        for x in table.to_dict("records")
        for col in ("precision", "recall", "kept")
    }


def _per_question(
    case: tuple[Run, Qrels], grid: NDArray[np.float64], min_keep: int, top_k: int | None
) -> dict[str, NDArray[np.float64]]:
    """Set precision, recall, size and F1 per judged question (rows) and threshold."""
    run, qrels = case
    judged = sorted(q for q in run if q in qrels)
    out = {m: np.empty((len(judged), len(grid))) for m in ("precision", "recall", "kept")}
    for j, t in enumerate(grid):
        sel = Selection(min_score=float(t), min_keep=min_keep, top_k=top_k)
        scores = set_scores({q: sel.select(run[q]) for q in judged}, qrels)
        for m in out:
            out[m][:, j] = [scores[m][q] for q in judged]
    p, r = out["precision"], out["recall"]
    out["f1"] = np.divide(2 * p * r, p + r, out=np.zeros_like(p), where=(p + r) > 0)
    return out


def out_of_fold(
    cases: Cases,
    own: Mapping[str, float | None] | None = None,
    *,
    min_keep: int = 0,
    top_k: int | None = None,
    folds: int = 5,
    n: int = 41,
    stats: StatsSettings = DEFAULT_STATS,
) -> pd.DataFrame:
    """Each case's ``min_score`` chosen out of fold by the returned set's F1.

    A selection threshold read off a sweep over the same questions it is then
    reported on is optimistic. Here, for each case, the thresholds of
    :func:`sweep`'s grid (``n`` points over the case's scores, floor and
    ceiling fixed) are scored per question by the F1 of the returned set
    (the harmonic mean of its precision and recall, 0 when both are 0: a
    threshold that keeps everything and one that keeps nothing both lose),
    and :func:`hierret.evaluation.stats.cross_validate` chooses one per fold on the
    other folds (questions sorted by id, shuffled with ``seed``). Each
    question's set is then measured at the threshold chosen without it.

    Parameters
    ----------
    cases : Cases
    own : mapping of str to float, optional
        Each column's fixed threshold, scored in sample beside (``own_f1``).
    min_keep, top_k
        The floor and the ceiling.
    folds : int, default 5
        The cross-validation's folds (split with ``stats.seed``).
    n : int, default 41
        Grid points.
    stats : StatsSettings, optional
        The bootstrap interval of the out-of-fold mean F1, and the seed of
        the split.

    Returns
    -------
    pandas.DataFrame
        One row per case: ``corpus``, ``reranker``, ``n`` (questions),
        ``folds``; out of fold: ``f1`` with ``f1_low``/``f1_high``,
        ``precision``, ``recall``, ``kept``; ``chosen`` (the threshold of each
        fold), ``chosen_min``, ``chosen_max``; ``in_sample`` (the threshold
        best on all questions) and ``in_sample_f1``; ``own`` and ``own_f1``
        (NaN without one).

    Examples
    --------
    >>> run = {f"q{i}": [("a", 0.9), ("b", 0.6), ("x", 0.2)] for i in range(6)}
    >>> qrels = {f"q{i}": {"a": 1, "b": 1} for i in range(6)}
    >>> t = out_of_fold({("toy", "rr"): (run, qrels)}, {"rr": 0.1}, folds=3,
    ...                 stats=StatsSettings(n_resamples=100))
    >>> t.loc[0, ["f1", "precision", "recall", "kept", "own_f1"]].round(3).tolist()
    [1.0, 1.0, 1.0, 2.0, 0.8]
    """
    rows = []
    for (row, col), case in cases.items():
        grid = _threshold_grid(case, (), n)
        per_q = _per_question(case, grid, min_keep, top_k)
        held, picks, fold = cross_validate(per_q["f1"], folds, stats.seed)
        column = np.asarray(picks)[fold][:, None]  # each question's chosen threshold
        at = {
            m: float(np.take_along_axis(v, column, 1).mean()) for m, v in per_q.items() if m != "f1"
        }
        ci = mean_interval(held, stats.n_resamples, stats.confidence, stats.seed)
        chosen = [round(float(grid[i]), 4) for i in picks]  # short enough to read
        best = int(np.argmax(per_q["f1"].mean(axis=0)))
        fixed = (own or {}).get(col)
        own_f1 = (
            float(_per_question(case, np.array([fixed]), min_keep, top_k)["f1"].mean())
            if fixed is not None
            else float("nan")
        )
        rows.append(
            {
                "corpus": row,
                "reranker": col,
                "n": len(held),
                "folds": folds,
                "f1": ci.estimate,
                "f1_low": ci.low,
                "f1_high": ci.high,
                **at,
                "chosen": chosen,
                "chosen_min": min(chosen),
                "chosen_max": max(chosen),
                "in_sample": float(grid[best]),
                "in_sample_f1": float(per_q["f1"][:, best].mean()),
                "own": float("nan") if fixed is None else float(fixed),
                "own_f1": own_f1,
            }
        )
    return pd.DataFrame(rows)


def oof_values(
    table: pd.DataFrame, prefixes: Mapping[str, str] | None = None
) -> dict[str, float | int]:
    """Record values of :func:`out_of_fold`: ``{corpus}_{reranker}_oof_{column}``.

    Examples
    --------
    >>> t = pd.DataFrame([{"corpus": "c", "reranker": "r", "f1": 0.5, "chosen": [0.1]}])
    >>> oof_values(t)
    {'c_r_oof_f1': 0.5}
    """
    names = prefixes or {}
    return {
        key(names.get(x["corpus"], x["corpus"]), x["reranker"], "oof", col): int(v)
        if col in ("n", "folds")
        else float(v)
        for x in table.to_dict("records")
        for col, v in x.items()
        if col not in ("corpus", "reranker", "chosen") and not pd.isna(v)
    }


def scores_by_relevance(
    run: Run, qrels: Qrels, rank_limit: int | None = None
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The scores of relevant and of non-relevant candidates, in two arrays.

    Only queries with judgements in ``qrels`` count; a candidate is relevant
    when its grade is above 0, and unjudged candidates count as non-relevant.
    Queries are taken in id order, candidates in rank order.

    Parameters
    ----------
    run : Run
    qrels : Qrels
    rank_limit : int, optional
        Only the first ``rank_limit`` candidates of each query.

    Returns
    -------
    relevant, non_relevant : ndarray of float64

    Examples
    --------
    >>> run = {"q1": [("a", 0.9), ("b", 0.4)], "q2": [("c", 0.7)], "q3": [("d", 0.1)]}
    >>> rel, non = scores_by_relevance(run, {"q1": {"a": 1, "b": 0}, "q2": {"x": 1}})
    >>> rel.tolist(), non.tolist()
    ([0.9], [0.4, 0.7])
    """
    rel: list[float] = []
    non: list[float] = []
    for qid in sorted(run):
        if qid not in qrels:
            continue
        grades = qrels[qid]
        for uid, s in run[qid][:rank_limit]:
            (rel if grades.get(uid, 0) > 0 else non).append(s)
    return np.asarray(rel, dtype=np.float64), np.asarray(non, dtype=np.float64)


class Thresholds:
    """One threshold study: reranked cases read on their own scales, as one object.

    The cases (``(row, column)`` to a reranked run and its judgements), each
    column's own ``min_score`` and the selection's floor and ceiling are given
    once; the views are this module's functions of them.

    Parameters
    ----------
    cases : Cases
        ``(row, column)`` (e.g. ``(corpus, reranker)``) to a reranked run and its
        judgements.
    own : mapping of str to float or None
        Each column's own threshold (:meth:`own_thresholds`).
    min_keep : int, default 0
        The selection's floor.
    top_k : int, optional
        The selection's ceiling.

    Examples
    --------
    >>> run = {"q1": [("a", 0.9), ("b", 0.6), ("x", 0.2)], "q2": [("c", 0.8), ("y", 0.7)]}
    >>> study = Thresholds({("toy", "rr"): (run, {"q1": {"a": 1, "b": 1}, "q2": {"c": 1}})},
    ...                    {"rr": 0.75}, min_keep=1)
    >>> study.table().round(2).values.tolist()
    [[0.8, 0.45, 0.2, 0.9]]
    >>> marked = study.marks({"study": 0.5})
    >>> marked[["selection", "precision", "kept"]].values.tolist()
    [['study', 0.75, 2.0], ['own min_score', 1.0, 1.0]]
    >>> study.values(marked, {"study": "s", Thresholds.OWN: "own"})["toy_rr_sel_own_kept"]
    1.0
    """

    #: The label :meth:`marks` gives each column's own threshold.
    OWN = OWN

    def __init__(
        self,
        cases: Cases,
        own: Mapping[str, float | None],
        *,
        min_keep: int = 0,
        top_k: int | None = None,
    ) -> None:
        self.cases, self.own = cases, own
        self.min_keep, self.top_k = min_keep, top_k

    @staticmethod
    def own_thresholds(
        min_score: Mapping[str, float], rerankers: Mapping[str, Reranker]
    ) -> dict[str, float | None]:
        """Each reranker's own threshold: its entry by name, else its kind's (:func:`own`)."""
        return own(min_score, rerankers)

    def table(self) -> pd.DataFrame:
        """The scores of relevant and non-relevant candidates, per case (:func:`score_summary`)."""
        return score_summary(self.cases)

    def plot(self, reference: float | None = 0.5) -> Figure:
        """Their distributions, each column's own threshold marked (:func:`plot_scores`)."""
        return plot_scores(self.cases, self.own, reference=reference)

    def marks(self, points: Mapping[str, float]) -> pd.DataFrame:
        """The returned set at named thresholds and at each own one (:func:`marks`)."""
        return marks(self.cases, points, self.own, min_keep=self.min_keep, top_k=self.top_k)

    def plot_sweeps(self, marked: pd.DataFrame | None = None) -> Figure:
        """The returned set as the threshold moves, ``marked`` on it (:func:`plot_sweeps`)."""
        return plot_sweeps(self.cases, marked, min_keep=self.min_keep, top_k=self.top_k)

    def out_of_fold(self, folds: int = 5, stats: StatsSettings = DEFAULT_STATS) -> pd.DataFrame:
        """Each case's threshold chosen out of fold by the returned set's F1
        (:func:`out_of_fold`)."""
        return out_of_fold(
            self.cases, self.own, min_keep=self.min_keep, top_k=self.top_k, folds=folds,
            stats=stats,
        )  # fmt: skip

    def values(
        self,
        marked: pd.DataFrame,
        labels: Mapping[str, str],
        tuned: pd.DataFrame | None = None,
        prefixes: Mapping[str, str] | None = None,
    ) -> dict[str, float | int]:
        """The record's values: :meth:`marks` (``labels``: each selection's short name)
        and, given, :meth:`out_of_fold` (:func:`mark_values`, :func:`oof_values`)."""
        out: dict[str, float | int] = dict(mark_values(marked, labels, prefixes))
        return out | (oof_values(tuned, prefixes) if tuned is not None else {})
