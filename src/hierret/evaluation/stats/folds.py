"""The seeded k-fold split that every tuned setting uses, and choosing by it.

A setting tuned on the questions it is then scored on reads too well. The
records tune a setting (a sweep's best value, a reranker's threshold, a
router) out of fold: :func:`fold_parts` splits the questions with a seed,
:func:`cross_validate` chooses on the other folds and scores on the held-out
one, :func:`held_out` does the same on a table. One split everywhere, so the
same seed holds out the same questions in every record.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

__all__ = ["cross_validate", "fold_parts", "held_out"]


def fold_parts(n: int, folds: int, seed: int = 0) -> list[npt.NDArray[np.intp]]:
    """Seeded k-fold split of ``n`` questions (rows in sorted-id order): the held-out rows.

    The rows are shuffled with ``seed`` and cut into ``folds`` nearly equal
    parts; every row is held out exactly once. :func:`cross_validate` (so
    :meth:`hierret.study.sweep.Swept.out_of_fold`, :func:`held_out`,
    :func:`hierret.study.thresholds.out_of_fold`) and :func:`hierret.study.router.route`
    use this one split, so the same seed holds out the same questions
    everywhere.

    Raises
    ------
    ValueError
        ``folds`` below 2 or above ``n``.

    Examples
    --------
    >>> [p.tolist() for p in fold_parts(5, 2, seed=0)]
    [[2, 4, 3], [0, 1]]
    """
    if not 2 <= folds <= n:
        raise ValueError(
            f"folds must be between 2 and the {n} questions, got {folds}: set folds "
            f"between 2 and {n} (a notebook's parameter `folds`), or judge more questions"
        )
    order = np.random.default_rng(seed).permutation(n)
    return list(np.array_split(order, folds))


def cross_validate(
    scores: npt.ArrayLike, folds: int = 5, seed: int = 0
) -> tuple[npt.NDArray[np.float64], list[int], npt.NDArray[np.intp]]:
    """Choose one of several settings by seeded k-fold cross-validation over questions.

    The one rule every tuned setting of the records follows: the questions
    (rows, in the order given: sort them first) are split by
    :func:`fold_parts`; for each fold, the setting (column) with the best mean
    on the *other* folds is chosen (ties: the first column) and scored on the
    held-out fold. Every question is thus scored by a setting chosen without
    it.

    Parameters
    ----------
    scores : array-like of float, shape (n_questions, n_settings)
        Each question's score under each setting (higher is better).
    folds : int, default 5
        At least 2, at most the number of questions.
    seed : int, default 0

    Returns
    -------
    held : ndarray of float, shape (n_questions,)
        Each question's score under the setting chosen without it.
    chosen : list of int
        The column chosen for each fold, in fold order.
    fold : ndarray of int, shape (n_questions,)
        Each question's fold (index into ``chosen``).

    Raises
    ------
    ValueError
        ``scores`` not two-dimensional with at least one column, or
        ``folds`` out of range.

    Examples
    --------
    >>> held, chosen, fold = cross_validate([[1.0, 0.0], [0.0, 1.0], [1.0, 0.5]], folds=3)
    >>> held.tolist(), chosen, fold.tolist()
    ([0.0, 0.0, 1.0], [0, 1, 0], [1, 2, 0])
    """
    x = np.asarray(scores, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] == 0:
        raise ValueError(f"scores must be questions × settings, got shape {x.shape}")
    held, chosen, fold = np.empty(len(x)), [], np.empty(len(x), dtype=np.intp)
    for i, part in enumerate(fold_parts(len(x), folds, seed)):
        train = np.setdiff1d(np.arange(len(x)), part)
        best = int(np.argmax(x[train].mean(axis=0)))
        chosen.append(best)
        held[part], fold[part] = x[part, best], i
    return held, chosen, fold


def held_out(frame: pd.DataFrame, folds: int = 5, seed: int = 0) -> tuple[pd.Series, list[Any]]:
    """:func:`cross_validate` on a table: questions as rows, settings as columns.

    Parameters
    ----------
    frame : DataFrame
        Questions as rows (sorted by id, as :meth:`hierret.study.experiment.Result.per_query` gives
        them), one column per setting, per-question scores.
    folds, seed
        The split (:func:`fold_parts`).

    Returns
    -------
    scores : Series
        Per question, the held-out score.
    chosen : list
        The column label chosen for each fold.

    Examples
    --------
    >>> f = pd.DataFrame({"a": [1.0, 0.0, 1.0], "b": [0.0, 1.0, 0.5]}, index=["q1", "q2", "q3"])
    >>> scores, chosen = held_out(f, folds=3)
    >>> scores.tolist(), chosen
    ([0.0, 0.0, 1.0], ['a', 'b', 'a'])
    """
    held, picks, _ = cross_validate(frame.to_numpy(dtype=float), folds, seed)
    return pd.Series(held, index=frame.index), [frame.columns[i] for i in picks]
