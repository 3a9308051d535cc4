"""The evidence behind every paired test, kept as it is computed.

A decision record publishes summaries (a difference, its interval, a p-value);
a reader who wants to re-analyse a claim needs what they were computed from:
each question's pair of scores, the settings of the resampling, and the family
whose Holm adjustment the p-value went through. A study keeps every paired test
it computes in its :class:`Ledger` (:meth:`Ledger.keep`) with exactly that, and
adjusts every family there (:meth:`Ledger.adjust`, over :func:`adjust`, which
returns new tests and changes none), so that
:func:`hierret.publish.record.publish`, handed the ledger, can write the evidence
of every number it publishes beside the record. This module keeps no state: a
ledger is an object its study holds.

Two rules of reading live here too:

* **Resolution.** A randomisation p-value has Monte-Carlo error. When a
  family's adjusted p-value lies within :data:`RESOLUTION_SE` standard errors
  of :data:`ALPHA`, the member's test is drawn again with
  :data:`REFINE_FACTOR` times the resamples before the family is adjusted, so
  that no published verdict turns on resampling noise. The standard error is
  :func:`hierret.evaluation.stats.montecarlo.standard_error` with :data:`REDRAW_VARIANCE`
  (``p(2-p)``: the p is two-sided). A p-value at the
  smallest value its resamples can give (:func:`floor`) prints as "≤".
* **What a test could have detected.** :func:`detectable` gives the smallest
  difference the test had 80 % power to find at the family's level (Bonferroni's
  ``ALPHA / m``, a conservative stand-in for Holm's step), so that "not
  established" can say how large an effect the data could have shown; and
  :func:`margin_interval` gives the ``1 - 2 ALPHA`` interval that decides a
  non-inferiority or equivalence claim against a declared margin (two one-sided
  tests at ``ALPHA``).

A test's scores were computed from two runs judged by qrels; a study that has
them attaches them to the test (:meth:`Ledger.attach`, a :class:`Judged` per arm:
the run at the level the metric was computed on, its qrels, the metric), so that
the runs can be published beside the scores as TREC files
(:mod:`hierret.publish.runfiles`) for trec_eval, ranx or ir_measures to read.

Examples
--------
>>> t = PairedTest("mean", "a", "b", ("q1", "q2", "q3"), (0.9, 0.8, 0.7),
...                (0.5, 0.6, 0.7), 0.2, 0.0, 0.4, 0.25, 0.95, 999, 0)
>>> tests, adjusted, redrawn = adjust([t, replace(t, a="c", p=1.0)])
>>> adjusted, redrawn, tests[0] is t
([0.5, 1.0], [], True)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

import numpy as np
from scipy.stats import norm

import hierret.evaluation.stats.montecarlo as montecarlo
from hierret.evaluation.stats.multiplicity import holm
from hierret.evaluation.stats.proportions import newcombe_paired_interval
from hierret.evaluation.stats.resampling import paired_bootstrap, paired_randomization
from hierret.search.runs import Qrels, Run

__all__ = [
    "ALPHA",
    "POWER",
    "REDRAW_VARIANCE",
    "REFINE_FACTOR",
    "RESOLUTION_SE",
    "TEST_COLUMN",
    "Family",
    "Judged",
    "Ledger",
    "PairedTest",
    "Tested",
    "adjust",
    "attach",
    "detectable",
    "floor",
    "margin_interval",
]

#: Significance level of every verdict; the margin tests run at it on each side.
ALPHA = 0.05
#: The power at which :func:`detectable` states the smallest detectable difference.
POWER = 0.80
#: How many Monte-Carlo standard errors from ``ALPHA`` an adjusted p-value must lie.
RESOLUTION_SE = 3.0
#: How many times the resamples a test near ``ALPHA`` is drawn again with.
REFINE_FACTOR = 10
#: The variance of a resampled p in the re-draw rule
#: (:func:`hierret.evaluation.stats.montecarlo.standard_error`): ``"p(2-p)"``, the two-sided p
#: being twice a one-tail count. Records before issue 39's revision used ``"p(1-p)"``,
#: which understates that error by up to 1.4×; the one published test it moved is
#: DR-001's ``scifact_bm25_abstracts`` (adjusted 0.065, within 3 corrected standard
#: errors of 0.05, now drawn again; its record says so).
REDRAW_VARIANCE: montecarlo.Variance = "p(2-p)"

Kind = Literal["mean", "hits"]


@dataclass(frozen=True)
class PairedTest:
    """One paired comparison ``a − b`` on the same questions, as computed.

    Parameters
    ----------
    kind : {"mean", "hits"}
        ``"mean"``: per-question scores (e.g. nDCG@10), percentile bootstrap
        interval of the mean difference and a two-sided paired randomisation
        test; ``"hits"``: 0/1 outcomes (e.g. hit@1), Newcombe's paired interval
        and McNemar's exact test.
    a, b : str
        The arms' names as the study gave them.
    queries : tuple of str
        The questions, in the order of ``x`` and ``y``.
    x, y : tuple of float
        Each question's score under ``a`` and under ``b``.
    diff, low, high : float
        ``mean(x) − mean(y)`` and its interval, as published.
    p : float
        The unadjusted two-sided p-value.
    confidence : float
        The interval's level.
    n_resamples : int
        Resamples of the randomisation test's p-value (the interval's are
        ``interval_resamples``); 0 for McNemar's exact test.
    seed : int
        Seed of both resamplings (:func:`numpy.random.default_rng`).
    interval_resamples : int, optional
        Resamples of the bootstrap interval; default ``n_resamples``.
    """

    kind: Kind
    a: str
    b: str
    queries: tuple[str, ...]
    x: tuple[float, ...]
    y: tuple[float, ...]
    diff: float
    low: float
    high: float
    p: float
    confidence: float
    n_resamples: int
    seed: int
    interval_resamples: int = -1

    def __post_init__(self) -> None:
        if self.interval_resamples < 0:
            object.__setattr__(self, "interval_resamples", self.n_resamples)

    @property
    def n(self) -> int:
        """The number of questions."""
        return len(self.queries)

    def __repr__(self) -> str:
        """Short, for a table's ``test`` column: the kind, the arms, the questions and the
        difference (the scores themselves are in :attr:`x` and :attr:`y`)."""
        return f"PairedTest({self.kind}: {self.a} − {self.b}, n={self.n}, diff={self.diff:+.4g})"

    def __deepcopy__(self, memo: dict[int, object]) -> PairedTest:
        """The test itself: it is immutable (pandas deep-copies a table's ``attrs``, which
        hold its tests, on every operation)."""
        return self


#: The column of a comparison's table that holds each row's test
#: (:func:`hierret.evaluation.stats.comparison.compare`): a column, not ``attrs``, so that it stays
#: with its row when the table is renamed, reset, concatenated or filtered.
TEST_COLUMN = "test"


class Tested(float):
    """A difference as published, carrying the paired test that computed it.

    A :class:`float` in every use (arithmetic, comparison, formatting, JSON); its
    ``test`` is the ledger's :class:`PairedTest`, so that a record finds the
    evidence of each difference it publishes by the test itself (the same
    object its ledger holds), never by matching numbers. Tables of comparisons
    hold each row's test in their :data:`TEST_COLUMN`;
    :func:`hierret.publish.record.table_values` hands each ``diff`` on as a
    ``Tested``.

    Examples
    --------
    >>> t = PairedTest("mean", "a", "b", ("q1", "q2"), (1.0, 0.5), (0.5, 0.5),
    ...                0.25, 0.0, 0.5, 0.5, 0.95, 99, 0)
    >>> d = Tested(0.25, t)
    >>> d + 0.25, f"{d:+.2f}", d.test is t
    (0.5, '+0.25', True)
    """

    test: PairedTest
    __test__ = False  # not a test class for pytest, whose name rule it meets

    def __new__(cls, value: float, test: PairedTest) -> Tested:
        self = super().__new__(cls, value)
        self.test = test
        return self

    def __reduce__(self) -> tuple[type[Tested], tuple[float, PairedTest]]:
        return Tested, (float(self), self.test)


@dataclass
class Family:
    """Tests adjusted together (Holm), in the order they were declared."""

    members: list[int]
    adjusted: list[float]
    name: str = ""
    refined: list[int] = field(default_factory=list)


@dataclass(frozen=True, eq=False)
class Judged:
    """What one arm's per-question scores of a test were computed from.

    Parameters
    ----------
    run : Run
        The arm's rankings at the level the metric was computed on (after
        lifting to the target), on at least the test's questions.
    qrels : Qrels
        The judgements the arm was scored with there.
    metric : str
        The metric (:func:`hierret.evaluation.evaluate`'s name, e.g. ``"ndcg@10"``).
    """

    run: Run
    qrels: Qrels
    metric: str


def attach(test: PairedTest, a: Judged, b: Judged) -> tuple[Judged, Judged]:
    """The runs and qrels ``test``'s arms were scored from, checked against the test.

    Parameters
    ----------
    test : PairedTest
        The test the runs are for.
    a, b : Judged
        Arm ``a``'s and arm ``b``'s run, qrels and metric.

    Returns
    -------
    tuple of Judged
        ``(a, b)``, for :meth:`Ledger.attach`.

    Raises
    ------
    ValueError
        The two arms scored with different metrics, or qrels that lack one of
        the test's questions.
    """
    if a.metric != b.metric:
        raise ValueError(
            f"the two arms of test {test.a} vs {test.b} name different metrics ({a.metric!r}, "
            f"{b.metric!r}): a paired test compares one metric"
        )
    for side, judged in (("a", a), ("b", b)):
        unjudged = [q for q in test.queries if q not in judged.qrels]
        if unjudged:
            raise ValueError(
                f"arm {side} of test {test.a} vs {test.b} has no qrels for questions "
                f"{unjudged[:3]}: attach the qrels the arm was scored with"
            )
    return a, b


def floor(test: PairedTest) -> float:
    """The smallest two-sided p-value ``test``'s resamples can give (0 for exact tests).

    Examples
    --------
    >>> q = tuple(f"q{i}" for i in range(20))
    >>> t = PairedTest("mean", "a", "b", q, (1.0,) * 20, (0.0,) * 20, 1.0, 1.0, 1.0,
    ...                0.0002, 0.95, 9_999, 0)
    >>> floor(t)
    0.0002
    """
    if test.kind != "mean" or test.n_resamples >= 2**test.n:
        return 0.0
    return 2.0 / (test.n_resamples + 1)


def _mc_se(p: float, n_resamples: int) -> float:
    return montecarlo.standard_error(p, n_resamples, REDRAW_VARIANCE)


def _near_alpha(test: PairedTest, adjusted_p: float) -> bool:
    if test.kind != "mean" or test.n_resamples >= 2**test.n or test.p <= 0:
        return False
    factor = adjusted_p / test.p  # Holm's multiplier for this member
    return abs(adjusted_p - ALPHA) < RESOLUTION_SE * factor * _mc_se(test.p, test.n_resamples)


def _redraw(test: PairedTest) -> PairedTest:
    n_resamples = test.n_resamples * REFINE_FACTOR
    p = paired_randomization(test.x, test.y, n_resamples=n_resamples, seed=test.seed)
    return replace(test, p=p, n_resamples=n_resamples, interval_resamples=test.interval_resamples)


def adjust(tests: Sequence[PairedTest]) -> tuple[list[PairedTest], list[float], list[int]]:
    """Holm-adjust ``tests`` as one family: the tests as published, their adjusted p-values,
    and the positions of those drawn again.

    A member whose adjusted p-value lies within :data:`RESOLUTION_SE` Monte-Carlo
    standard errors of :data:`ALPHA` is drawn again with :data:`REFINE_FACTOR`
    times the resamples (a new test, with its new ``p``), and the family is
    adjusted again. The tests given are not changed.

    Examples
    --------
    >>> t = PairedTest("mean", "a", "b", ("q1", "q2", "q3"), (0.9, 0.8, 0.7),
    ...                (0.5, 0.6, 0.7), 0.2, 0.0, 0.4, 0.25, 0.95, 999, 0)
    >>> u = replace(t, a="c", p=1.0)
    >>> adjust([t, u])[1:]
    ([0.5, 1.0], [])
    """
    out = list(tests)
    if not out:
        return [], [], []
    refined: list[int] = []
    for _ in range(2):
        pvalues = {str(i): t.p for i, t in enumerate(out)}
        result = holm(pvalues) if len(out) > 1 else {"0": out[0].p}
        near = [i for i, t in enumerate(out) if i not in refined and _near_alpha(t, result[str(i)])]
        if not near:
            break
        for i in near:
            out[i] = _redraw(out[i])
        refined += near
    return out, [result[str(i)] for i in range(len(out))], refined


@dataclass
class Ledger:
    """The tests one study computed, in order, with their families and runs.

    A study keeps every paired test it computes here (:meth:`keep`), adjusts
    each declared family here (:meth:`adjust`), and hands the ledger to
    :func:`hierret.publish.record.publish`, which writes the evidence of every
    number it publishes from it. A ledger is an object the study holds; this
    module keeps none.

    Examples
    --------
    >>> book = Ledger()
    >>> i = book.keep(PairedTest("mean", "a", "b", ("q1", "q2", "q3"), (0.9, 0.8, 0.7),
    ...                          (0.5, 0.6, 0.7), 0.2, 0.0, 0.4, 0.25, 0.95, 999, 0))
    >>> j = book.keep(PairedTest("mean", "c", "b", ("q1", "q2", "q3"), (0.5, 0.6, 0.8),
    ...                          (0.5, 0.6, 0.7), 0.033, 0.0, 0.1, 1.0, 0.95, 999, 0))
    >>> book.adjust([i, j])
    [0.5, 1.0]
    >>> book.family_of(i) == book.family_of(j), len(book.kept())
    (True, 2)
    """

    tests: list[PairedTest] = field(default_factory=list)
    families_: list[Family] = field(default_factory=list)
    family_at: dict[int, int] = field(default_factory=dict)
    sourced: dict[int, tuple[Judged, Judged]] = field(default_factory=dict)

    def clear(self) -> None:
        """Forget every kept test and family (a new study with the same ledger)."""
        self.tests, self.families_, self.family_at, self.sourced = [], [], {}, {}

    def keep(self, test: PairedTest) -> int:
        """Keep ``test``; returns its number, which :meth:`adjust` takes."""
        self.tests.append(test)
        return len(self.tests) - 1

    def kept(self) -> list[PairedTest]:
        """Every test kept, in the order computed (a test drawn again replaces its entry)."""
        return list(self.tests)

    def attach(self, test: int, a: Judged, b: Judged) -> None:
        """Attach to kept test number ``test`` the runs and qrels its arms were scored from.

        Raises
        ------
        ValueError
            No such test, or arms that do not fit it (:func:`attach`).

        Examples
        --------
        >>> book = Ledger()
        >>> i = book.keep(PairedTest("mean", "a", "b", ("q1",), (1.0,), (0.0,), 1.0, 1.0,
        ...                          1.0, 1.0, 0.95, 9, 0))
        >>> book.attach(i, Judged({"q1": [("d1", 0.9)]}, {"q1": {"d1": 1}}, "hit@1"),
        ...             Judged({"q1": [("d2", 0.8)]}, {"q1": {"d1": 1}}, "hit@1"))
        >>> book.sources(i)[0].run
        {'q1': [('d1', 0.9)]}
        """
        if not 0 <= test < len(self.tests):
            raise ValueError(f"no kept test number {test}: keep() returns the numbers to attach to")
        self.sourced[test] = attach(self.tests[test], a, b)

    def sources(self, test: int) -> tuple[Judged, Judged] | None:
        """The runs and qrels attached to test number ``test``, or ``None``."""
        return self.sourced.get(test)

    def families(self) -> list[Family]:
        """Every family adjusted, in order."""
        return list(self.families_)

    def family_of(self, test: int) -> Family | None:
        """The family test number ``test`` was adjusted in (the last one), or ``None``."""
        f = self.family_at.get(test)
        return None if f is None else self.families_[f]

    def family_index(self, test: int) -> int | None:
        """The position in :meth:`families` of the family test ``test`` was adjusted in."""
        return self.family_at.get(test)

    def adjusted(self, test: int) -> float:
        """The adjusted p-value of test number ``test`` (its own p if never adjusted)."""
        fam = self.family_of(test)
        if fam is None:
            return self.tests[test].p
        return fam.adjusted[fam.members.index(test)]

    def adjust(self, members: Sequence[int], name: str = "") -> list[float]:
        """Holm-adjust the kept tests ``members`` as one family (:func:`adjust`); returns
        their adjusted p-values. A member drawn again replaces its kept entry.

        Parameters
        ----------
        members : sequence of int
            Numbers returned by :meth:`keep`, the whole family at once.
        name : str, optional
            The family's name as the study declared it.
        """
        ids = list(members)
        if not ids:
            return []
        tests, out, refined = adjust([self.tests[i] for i in ids])
        for i, t in zip(ids, tests, strict=True):
            self.tests[i] = t
        self.families_.append(Family(ids, out, name, [ids[k] for k in refined]))
        for i in ids:
            self.family_at[i] = len(self.families_) - 1
        return out


def detectable(test: PairedTest, family_size: int = 1, power: float = POWER) -> float:
    """The smallest difference ``test`` had ``power`` to detect at level ``ALPHA / family_size``.

    The normal approximation to the paired test: ``(z(1 − α/2m) + z(power)) · se``,
    with ``se`` the standard error of the mean difference (for hits, of the
    difference of paired proportions, at least one discordant question).

    Examples
    --------
    >>> t = PairedTest("mean", "a", "b", tuple("abcd"), (0.1, 0.3, 0.5, 0.7),
    ...                (0.2, 0.2, 0.4, 0.6), 0.05, -0.05, 0.15, 0.5, 0.95, 999, 0)
    >>> round(detectable(t), 3)
    0.14
    """
    x, y = np.asarray(test.x, dtype=float), np.asarray(test.y, dtype=float)
    n = len(x)
    if n < 2:
        return math.inf
    if test.kind == "hits":
        only_a = float(np.sum((x > 0) & (y <= 0)))
        only_b = float(np.sum((x <= 0) & (y > 0)))
        discordant = max(only_a + only_b, 1.0) / n
        se = math.sqrt(max(discordant - ((only_a - only_b) / n) ** 2, 1.0 / n**2) / n)
    else:
        se = float(np.std(x - y, ddof=1)) / math.sqrt(n)
    z = norm.ppf(1 - ALPHA / (2 * max(family_size, 1))) + norm.ppf(power)
    return float(z * se)


def margin_interval(test: PairedTest) -> tuple[float, float]:
    """The ``1 − 2·ALPHA`` interval of ``test``'s difference, for a margin test.

    Two one-sided tests at ``ALPHA`` against a margin ``δ`` reject "a loss of
    ``δ`` or more" exactly when this interval's lower limit is above ``−δ``
    (non-inferiority), and "a gain of ``δ`` or more" when its upper limit is
    below ``δ``. Computed as the test's own interval was (percentile
    bootstrap with the same seed and resamples, or Newcombe's for hits).
    """
    level = 1.0 - 2.0 * ALPHA
    if test.kind == "hits":
        x, y = np.asarray(test.x) > 0, np.asarray(test.y) > 0
        both, only_a = int(np.sum(x & y)), int(np.sum(x & ~y))
        only_b, neither = int(np.sum(~x & y)), int(np.sum(~x & ~y))
        ci = newcombe_paired_interval(both, only_a, only_b, neither, level)
    else:
        ci = paired_bootstrap(
            test.x,
            test.y,
            n_resamples=test.interval_resamples,
            confidence=level,
            seed=test.seed,
            method="percentile",
        )
    return ci.low, ci.high
