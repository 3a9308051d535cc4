"""Settings of a profile swept over values: the mean metric, with intervals, at each target.

A sweep is a comparison whose arms differ in some fields of a
:class:`~hierret.profile.Profile` (``section_weight``, ``vectors``, ``pool``,
``rrf_k``, ``candidates``...), over every combination of the values given.
:func:`run` runs it with :func:`hierret.experiment.run` (so each setting is
searched exactly as that profile searches) and keeps every per-query score
(:class:`Swept`); :meth:`Swept.table` gives one row per setting and target:
the mean (the hit rate for ``hit@k``) with its interval, and
:meth:`Swept.out_of_fold` reports a tuned setting honestly: chosen on some
questions, scored on the others, by seeded k-fold cross-validation.
:func:`plot_sweep` draws it: one panel per target, the mean against one field,
one line per value of another, the interval as a band.

Examples
--------
>>> from hierret.encoders import HashEncoder
>>> from hierret.hierarchy import build_hierarchy
>>> from hierret.search import Searcher
>>> from hierret.units import Corpus, Document, Query
>>> text = "Cats\\n====\\n\\nCats purr.\\n\\nDogs\\n====\\n\\nDogs bark.\\n"
>>> s = Searcher(build_hierarchy(Corpus("pets", [Document("d", "Pets", text)])),
...              HashEncoder(dimension=16))
>>> q = [Query("q1", "why do dogs bark", (("d", 28, 38),))]
>>> table = run(Profile(level="fused"), {"vectors": ["rawspan", "centroid"],
...                                       "section_weight": [0.0, 1.0]},
...             q, searcher=s, targets=["sections"], n_resamples=10).table()
>>> table[["vectors", "section_weight", "target", "n"]].values.tolist()
[['rawspan', 0.0, 'sections', 1], ['rawspan', 1.0, 'sections', 1], \
['centroid', 0.0, 'sections', 1], ['centroid', 1.0, 'sections', 1]]
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from hierret import experiment
from hierret.experiment import Result
from hierret.profile import Profile
from hierret.runs import Qrels
from hierret.search import Searcher
from hierret.stats import mean_interval
from hierret.units import Level, Query

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["Swept", "cross_validate", "fold_parts", "held_out", "plot_sweep", "run"]


def fold_parts(n: int, folds: int, seed: int = 0) -> list[npt.NDArray[np.intp]]:
    """Seeded k-fold split of ``n`` questions (rows in sorted-id order): the held-out rows.

    The rows are shuffled with ``seed`` and cut into ``folds`` nearly equal
    parts; every row is held out exactly once. :func:`cross_validate` (so
    :meth:`Swept.out_of_fold`, :func:`held_out`,
    :func:`hierret.thresholds.out_of_fold`) and :func:`hierret.router.route`
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
        raise ValueError(f"folds must be between 2 and the {n} questions, got {folds}")
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
        Questions as rows (sorted by id, as :meth:`Result.per_query` gives
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


def run(
    profile: Profile,
    grid: Mapping[str, Sequence[Any]],
    queries: Sequence[Query],
    *,
    searcher: Searcher,
    targets: Sequence[Level] = ("passages",),
    metric: str = "ndcg@10",
    k: int = 100,
    qrels: Mapping[str, Qrels] | None = None,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> Swept:
    """Run ``profile`` with its fields set to every combination in ``grid``, keeping every score.

    Parameters
    ----------
    profile : Profile
        Every other setting.
    grid : mapping of str to sequence
        Fields of :class:`~hierret.profile.Profile` and the values each takes,
        in order; every combination is run (the first field varies slowest).
    queries, searcher, targets, metric, k, qrels, confidence, n_resamples, seed
        As :func:`hierret.experiment.run` takes them.

    Returns
    -------
    Swept
        The settings and the :class:`~hierret.experiment.Result` of their
        arms (named ``"field=value, ..."``). :meth:`Swept.table` gives one
        row per setting and target (targets outer, settings inner): a column
        per field of ``grid``, then ``target``, ``n`` (queries judged),
        ``mean`` (the hit rate for hit@k), ``low`` and ``high`` (its
        interval, as :meth:`~hierret.experiment.Result.table` computes it);
        :meth:`Swept.out_of_fold` tunes one field honestly.

    Raises
    ------
    ValueError
        A key of ``grid`` that is not a profile field (or is ``name``), a field
        with no values or with a value repeated; a value the profile refuses
        raises what :class:`~hierret.profile.Profile` raises.
    """
    known = [f.name for f in fields(Profile) if f.name != "name"]
    unknown = [name for name in grid if name not in known]
    if not grid or unknown:
        raise ValueError(f"unknown profile fields {unknown}: sweep some of {known}")
    for name, values in grid.items():
        if not values or len({repr(v) for v in values}) != len(values):
            raise ValueError(f"give {name} values to sweep, each once; got {list(values)}")
    settings: list[dict[str, Any]] = [
        dict(zip(grid, combo, strict=True)) for combo in itertools.product(*grid.values())
    ]
    arms = {_arm(setting): replace(profile, **setting) for setting in settings}
    result = experiment.run(
        arms,
        queries,
        searcher=searcher,
        targets=targets,
        metrics=[metric],
        qrels=qrels,
        k=k,
        confidence=confidence,
        n_resamples=n_resamples,
        seed=seed,
    )
    return Swept(settings, result)


def _arm(setting: Mapping[str, Any]) -> str:
    return ", ".join(f"{f}={v!r}" for f, v in setting.items())


@dataclass(frozen=True)
class Swept:
    """A sweep's settings and the result of their arms (see :func:`run`).

    Attributes
    ----------
    settings : list of dict
        Each combination of the grid, in grid order (the first field slowest).
    result : Result
        One arm per setting, named ``"field=value, ..."``, every per-query score kept.
    """

    settings: list[dict[str, Any]]
    result: Result

    def table(self) -> pd.DataFrame:
        """One row per setting and target: the mean with its interval (see :func:`run`)."""
        metric = self.result.metrics[0]
        value = "rate" if metric.startswith("hit@") else "mean"
        rows = []
        for target in self.result.targets:
            table = self.result.table(target, metric)
            arms = [_arm(s) for s in self.settings]
            numbers = table.loc[arms, ["n", value, "low", "high"]].to_numpy(dtype=float)
            for setting, (n, mean, low, high) in zip(self.settings, numbers, strict=True):
                rows.append(
                    {
                        **setting,
                        "target": target,
                        "n": int(n),
                        "mean": float(mean),
                        "low": float(low),
                        "high": float(high),
                    }
                )
        return pd.DataFrame(rows)

    def out_of_fold(self, field: str, folds: int = 5, seed: int = 0) -> pd.DataFrame:
        """``field`` tuned by seeded k-fold cross-validation over the questions.

        The questions (sorted by id) are shuffled with ``seed`` and cut into
        ``folds`` nearly equal folds. For each fold, the value of ``field``
        with the best mean on the other folds is chosen (ties: the first in
        the grid) and scored on the held-out fold. Every question is thus
        scored by a value chosen without it, and the mean of those scores is
        an honest estimate of what tuning buys; the in-sample best, chosen and
        scored on the same questions, is optimistic. The other fields of the
        grid (e.g. ``vectors``) are tuned separately, as are the targets.

        Parameters
        ----------
        field : str
            A field of the grid.
        folds : int, default 5
            At least 2, at most the number of questions.
        seed : int, default 0
            Seed of the shuffle.

        Returns
        -------
        DataFrame
            One row per group of the other fields and target: the group's
            fields, ``target``, ``n``, ``folds``, ``mean`` (out of fold) with
            ``low``/``high`` (bootstrap interval, the result's settings),
            ``chosen`` (the value chosen per fold), ``chosen_min``,
            ``chosen_max``, ``in_sample`` (the value best on all questions) and
            ``in_sample_mean``.

        Raises
        ------
        ValueError
            ``field`` not in the grid, or ``folds`` out of range.

        Examples
        --------
        >>> scores = {"sections": {"mrr": {"w=0": {"q1": 1.0, "q2": 0.0, "q3": 1.0},
        ...                                "w=1": {"q1": 0.0, "q2": 1.0, "q3": 0.5}}}}
        >>> r = Result({}, scores, "w=0", [], ["sections"], ["mrr"], n_resamples=50)
        >>> swept = Swept([{"w": 0}, {"w": 1}], r)
        >>> t = swept.out_of_fold("w", folds=3)  # each question held out once
        >>> t.loc[0, ["mean", "in_sample_mean"]].tolist(), t.loc[0, "chosen"]
        ([0.3333333333333333, 0.6666666666666666], [0, 1, 0])
        """
        if not self.settings or field not in self.settings[0]:
            raise ValueError(
                f"{field!r} is not a field of the sweep: "
                f"{list(self.settings[0]) if self.settings else []}"
            )
        r, metric = self.result, self.result.metrics[0]
        others = [f for f in self.settings[0] if f != field]
        groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
        for s in self.settings:
            groups.setdefault(tuple(s[f] for f in others), []).append(s)
        rows = []
        for target in r.targets:
            frame = r.per_query(target, metric)
            if not 2 <= folds <= len(frame):
                raise ValueError(
                    f"folds must be between 2 and the {len(frame)} questions "
                    f"judged at {target!r}, got {folds}"
                )
            for group, members in groups.items():
                scores = frame[[_arm(s) for s in members]].to_numpy(dtype=float)
                held, picks, _ = cross_validate(scores, folds, seed)
                chosen = [members[i][field] for i in picks]
                ci = mean_interval(held, r.n_resamples, r.confidence, r.seed)
                best_all = int(np.argmax(scores.mean(axis=0)))
                rows.append(
                    {
                        **dict(zip(others, group, strict=True)),
                        "target": target,
                        "n": len(frame),
                        "folds": folds,
                        "mean": ci.estimate,
                        "low": ci.low,
                        "high": ci.high,
                        "chosen": chosen,
                        "chosen_min": min(chosen),
                        "chosen_max": max(chosen),
                        "in_sample": members[best_all][field],
                        "in_sample_mean": float(scores[:, best_all].mean()),
                    }
                )
        return pd.DataFrame(rows)


def plot_sweep(
    table: pd.DataFrame,
    field: str,
    *,
    by: str | None = None,
    ylabel: str = "",
    marks: Sequence[float] = (),
    title: str = "",
) -> Figure:
    """One panel per target: the mean against ``field``, one line per ``by`` group.

    Parameters
    ----------
    table : DataFrame
        :func:`sweep`'s rows, with a column ``by`` when several sweeps are
        drawn together (e.g. ``pd.concat`` of sweeps with a ``vectors`` column).
    field : str
        The swept field (the x axis).
    by : str, optional
        Column whose groups are drawn as separate lines.
    ylabel : str
        The metric, for the y axis.
    marks : sequence of float
        x values to mark with a dotted line (e.g. the default).
    title : str
        The figure's title, above the panels.

    Returns
    -------
    Figure
        Shared y axis; each line's interval drawn as a band.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> rows = pd.DataFrame({"w": [0, 1, 0, 1], "target": ["sections"] * 2 + ["documents"] * 2,
    ...                      "mean": [.5, .6, .7, .6], "low": [.4, .5, .6, .5],
    ...                      "high": [.6, .7, .8, .7]})
    >>> [ax.get_title() for ax in plot_sweep(rows, "w", ylabel="nDCG@10").axes]
    ['sections target', 'documents target']
    """
    import matplotlib.pyplot as plt

    targets = list(dict.fromkeys(table["target"]))
    fig, axes = plt.subplots(
        1, len(targets), figsize=(4.0 * len(targets), 3.4), sharey=True, squeeze=False
    )
    for ax, target in zip(axes[0], targets, strict=True):
        rows = table[table["target"] == target]
        groups = rows.groupby(by, sort=False) if by else [("", rows)]
        for group, g in groups:
            (line,) = ax.plot(g[field], g["mean"], "-o", markersize=4, label=str(group) or None)
            ax.fill_between(g[field], g["low"], g["high"], color=line.get_color(), alpha=0.15)
        for x in marks:
            ax.axvline(x, color="grey", linestyle=":")
        ax.set_title(f"{target} target")
        ax.set_xlabel(field)
        ax.grid(alpha=0.3)
        if by:
            ax.legend(title=by, fontsize=9, title_fontsize=9)
    axes[0][0].set_ylabel(ylabel)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig
