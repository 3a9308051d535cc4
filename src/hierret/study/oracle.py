"""The oracle arm: every query answered by whichever arm did best on it.

Not a method but a bound: the oracle scores each query with its best arm,
which no system can do without knowing the answer. Its mean bounds what
choosing the right arm (level, vector strategy, fusion...) per question could
reach, and the bound is optimistic: the maximum of several noisy per-question
scores exceeds each of them even when the arms do not differ at all, so the gap
between the oracle and the best single arm is not evidence that a router could
gain anything. It is reported, never tested against the arms.

:func:`oracle` takes per-query scores (queries as rows, arms as columns, as
:meth:`hierret.study.experiment.Result.per_query` returns them);
:func:`oracle_table` gathers the arms of one or more
:class:`~hierret.study.experiment.Result` judged at one target (a study split into
several runs because its arms rank different levels) and returns every arm's
mean with its interval and the oracle's, as :func:`~hierret.study.experiment.compare`
computes them (no tests: the oracle is chosen after seeing the scores, so
testing it against the arms it picks from would mean nothing).

Examples
--------
>>> import pandas as pd
>>> per_query = pd.DataFrame({"passages": [1.0, 0.0, 0.5], "sections": [0.0, 1.0, 0.25]},
...                          index=["q1", "q2", "q3"])
>>> oracle(per_query).tolist()
[1.0, 1.0, 0.5]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, cast

import numpy as np
import pandas as pd

from hierret.evaluation.stats.comparison import compare_metric
from hierret.publish.figures import interval_panels
from hierret.study.experiment import Result

if TYPE_CHECKING:
    from hierret.publish.figures import Figure

__all__ = ["LABEL", "RELABEL", "Oracle", "oracle", "oracle_table"]

#: How a table of arms shows the oracle's row: what it is, not an arm. It chooses
#: among the arms it was given only (``over``), so an arm outside them can exceed it.
LABEL = "oracle over its arms (optimistic bound, untested)"
#: ``frame.rename(index=RELABEL)``: the default row name as :data:`LABEL`.
RELABEL = {"oracle": LABEL}


def oracle(per_query: pd.DataFrame) -> pd.Series:
    """Each query's best score over the arms (columns): the per-query oracle.

    Parameters
    ----------
    per_query : DataFrame
        Queries as rows, arms as columns, every cell a score.

    Returns
    -------
    Series
        The row-wise maximum, by query.

    Raises
    ------
    ValueError
        No arm, or an arm that does not score every query.
    """
    if per_query.shape[1] == 0:
        raise ValueError("no arms: the oracle picks the best of at least one arm")
    missing = per_query.columns[per_query.isna().any()].tolist()
    if missing:
        raise ValueError(
            f"arms {missing} do not score every query: the oracle compares arms on the same queries"
        )
    return per_query.max(axis=1)


def oracle_table(
    results: Sequence[Result],
    target: str,
    metric: str,
    *,
    name: str = "oracle",
    over: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Every arm of ``results`` judged at ``target``, and the oracle over them.

    Parameters
    ----------
    results : sequence of Result
        Runs on the same queries; those without ``target`` are skipped. An
        arm in several results (a shared baseline) must score the same there.
    target : str
        The level judged, e.g. ``"documents"``.
    metric : str
        One of the results' metrics. For ``hit@k`` the oracle hits when any
        arm does, and the table is :func:`~hierret.study.experiment.compare_hits`'s.
    name : str, default "oracle"
        The oracle's row.
    over : sequence of str, optional
        The arms the oracle chooses among (default: every arm), so that an
        oracle keeps its meaning when arms are added to a study; those not
        judged at ``target`` are left out.

    Returns
    -------
    DataFrame
        One row per arm, in the order of the results and of their arms, then
        the oracle: ``n``, ``mean`` (``rate`` for hit@k), ``low``, ``high``,
        with the first result's baseline, confidence, resamples and seed; no
        paired tests.

    Raises
    ------
    ValueError
        No result judged at ``target``, results judging different queries, an
        arm scoring differently in two results, ``name`` already an arm, or an
        arm of ``over`` that is not in the results.

    Examples
    --------
    >>> from hierret.study.experiment import Result
    >>> scores = {"sections": {"mrr": {"a": {"q1": 1.0, "q2": 0.0},
    ...                                "b": {"q1": 0.5, "q2": 1.0}}}}
    >>> from hierret.evaluation.stats import StatsSettings
    >>> r = Result({}, scores, "a", [], ["sections"], ["mrr"], StatsSettings(n_resamples=100))
    >>> oracle_table([r], "sections", "mrr")["mean"].to_dict()
    {'a': 0.5, 'b': 0.75, 'oracle': 1.0}
    >>> oracle_table([r], "sections", "mrr", over=["b"])["mean"].to_dict()
    {'a': 0.5, 'b': 0.75, 'oracle': 0.75}
    """
    chosen = [r for r in results if target in r.targets]
    if not chosen:
        raise ValueError(f"no result is judged at the {target!r} target")
    frame = pd.DataFrame()
    for result in chosen:
        part = result.per_query(target, metric)
        if len(frame) and set(part.index) != set(frame.index):
            raise ValueError(f"the results judge different queries at the {target!r} target")
        for arm in part.columns:
            if arm in frame.columns:
                if not np.array_equal(frame[arm].to_numpy(), part[arm].reindex(frame.index)):
                    raise ValueError(f"arm {arm!r} scores differently in two results")
            else:
                frame[arm] = part[arm] if frame.empty else part[arm].reindex(frame.index)
    if name in frame.columns:
        raise ValueError(f"{name!r} is already an arm: give the oracle another name")
    everywhere = {
        a
        for r in results
        for by_metric in r.scores.values()
        for arms in by_metric.values()
        for a in arms
    }
    unknown = [a for a in over or () if a not in everywhere]
    if unknown:
        raise ValueError(f"oracle over {unknown}: not arms of the results ({sorted(everywhere)})")
    among = list(frame.columns) if over is None else [a for a in over if a in frame.columns]
    frame[name] = oracle(frame[among])
    first = chosen[0]
    scores = {str(a): {str(q): float(v) for q, v in frame[a].items()} for a in frame.columns}
    return compare_metric(scores, metric, first.baseline, [], first.stats)


class Oracle:
    """A grid of runs, each arm's score beside the oracle over the arms, as one object.

    Each run of the grid (e.g. a corpus at a passage size) is judged at each
    target by :func:`oracle_table`; :attr:`tables` holds them all, indexed
    ``(corpus, chars, target, arm)``.

    Parameters
    ----------
    results : mapping of (str, int) to Result or sequence of Result
        Each run of the grid: one result, or several on the same queries.
    targets : sequence of str
        The levels judged.
    metric : str
        The metric compared.
    over : sequence of str, optional
        The arms the oracle chooses among (default: every arm).

    Examples
    --------
    >>> from hierret.study.experiment import Result
    >>> from hierret.evaluation.stats import StatsSettings
    >>> scores = {"sections": {"mrr": {"a": {"q1": 1.0, "q2": 0.0},
    ...                                "b": {"q1": 0.5, "q2": 1.0}}}}
    >>> r = Result({}, scores, "a", [], ["sections"], ["mrr"], StatsSettings(n_resamples=100))
    >>> grid = Oracle({("toy", 900): r}, ["sections"], "mrr")
    >>> grid.table("sections")[("toy", 900)].to_dict()  # doctest: +NORMALIZE_WHITESPACE
    {'a': 0.5, 'b': 0.75, 'oracle over its arms (optimistic bound, untested)': 1.0}
    >>> grid.arms("sections")[0].tolist()
    ['a', 'b']
    >>> grid.panel("toy", 900, "sections", with_oracle=False)["mean"].to_dict()
    {'a': 0.5, 'b': 0.75}
    >>> ax = grid.plot(900, label="MRR").axes[0]
    >>> ax.get_title(), ax.get_xlabel()
    ('toy · sections', 'MRR (mean, 95% interval)')
    """

    #: How a table shows the oracle's row.
    LABEL = LABEL

    def __init__(
        self,
        results: Mapping[tuple[str, int], Result | Sequence[Result]],
        targets: Sequence[str],
        metric: str,
        *,
        over: Sequence[str] | None = None,
    ) -> None:
        first = next(iter(results.values()), None)
        first = first if first is None or isinstance(first, Result) else first[0]
        self.targets, self.metric = list(targets), metric
        self.corpora = list(dict.fromkeys(n for n, _ in results))
        self.baseline = None if first is None else first.baseline
        self.confidence = 0.95 if first is None else first.confidence
        self.tables = pd.concat(
            {
                (n, c, t): oracle_table(
                    [rs] if isinstance(rs, Result) else rs, t, metric, over=over
                )
                for (n, c), rs in results.items()
                for t in targets
            },
            names=["corpus", "chars", "target", "arm"],
        )

    def table(self, target: str) -> pd.DataFrame:
        """Each arm's mean at ``target``, a column per run of the grid, the oracle's row
        labelled :data:`LABEL`."""
        wide = self.tables["mean"].unstack(["corpus", "chars"]).rename(index=RELABEL)
        return cast(pd.DataFrame, wide.loc[target])

    def arms(self, target: str) -> tuple[pd.Index, slice]:
        """The rows of :meth:`table` that are arms, the oracle aside: where a column's
        best is marked (``styled(..., highlight_max=...)``)."""
        return self.table(target).index.drop(LABEL), slice(None)

    def panel(
        self, corpus: str, chars: int, target: str, *, with_oracle: bool = True
    ) -> pd.DataFrame:
        """One run's table at ``target`` (:func:`oracle_table`): with the oracle's row
        labelled :data:`LABEL`, or without it (``with_oracle=False``)."""
        part = cast(pd.DataFrame, self.tables.loc[(corpus, chars, target)])  # type: ignore[index]
        return part.rename(RELABEL) if with_oracle else part.drop(index="oracle")

    def plot(self, chars: int, *, label: str = "", with_oracle: bool = True) -> Figure:
        """Each corpus at passage size ``chars``, a panel per corpus and target: each
        arm's mean with its interval (:func:`hierret.publish.figures.interval_panels`,
        two panels a row), the baseline dotted; ``label`` names the metric on the axis
        (default: :attr:`metric`)."""
        panels = {
            f"{n} · {t}": self.panel(n, chars, t, with_oracle=with_oracle)
            for n in self.corpora
            for t in self.targets
        }
        return interval_panels(
            panels,
            ncols=2,
            sharex=False,
            baseline=self.baseline,
            xlabel=f"{label or self.metric} (mean, {self.confidence:.0%} interval)",
        )
