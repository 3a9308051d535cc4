"""Whether a claim that holds survives the analyses declared as its alternatives.

A claims row *holds* on one analysis: the paired test the record chose
(randomisation on the mean, or McNemar's on hits), Holm-adjusted within the
family the record declared (one corpus, one kind of comparison). Two other
analyses were as defensible, and a verdict that needs the chosen one is
*fragile*. For every row that holds, :func:`of` computes, from the record's
evidence (``data/results/evidence/``, no rerun):

* **a rank test** — the Wilcoxon signed-rank test on the same per-question
  differences (:func:`rank_test`: zero differences dropped, as Wilcoxon did and
  as the sign-flip test in effect does, for a zero's sign changes nothing; the
  exact distribution when at most 50 differences remain and none tie, else the
  normal approximation with the tie correction; no resampling, so no
  Monte-Carlo error), Holm-adjusted over the same family. On hits (0/1 outcomes)
  the differences are −1, 0 or +1, and the signed-rank test on them *is* the
  sign test on the discordant questions, which is McNemar's exact test: the
  published p is already distribution-free, and the rank test repeats it.
* **the family across corpora** — the row's declared family pooled with the
  same family on every other corpus of the record (the family whose name is
  the same but for its corpus: ``study, python-reference 900`` with ``study,
  scifact-sections 900`` and ``study, qasper 900``), Holm-adjusted as one
  family on the published p-values. Adding tests to a Holm family can only
  raise its adjusted p-values, so a row that survives this also survives the
  narrower family of the same comparison alone on every corpus. A family with
  no corpus in its name, or with no sibling, is its own.

A row holds *robustly* when both adjusted p-values stay below 0.05 (the rank
test's effect in the claimed direction); otherwise it is *fragile*, and its
verdict cell says so (:func:`mark`): ``holds (fragile: Wilcoxon 0.066; across
3 corpora 0.11)``. A p-value at its resampling floor
(:func:`hierret.publish.claims._at_floor`) is a bound, not a value: the pooled
adjusted p is computed with it as given (an upper bound, since Holm's adjusted
values never fall when a p rises) and with it at 0 (a lower bound), and prints
as "≤" when the two differ.

The rule was declared on 2026-12-06, after the records were published (issue
39's audit found the two fragile rows it marks); it is applied to every row
alike.

Examples
--------
>>> import pandas as pd
>>> tests = pd.DataFrame({
...     "test": ["T1", "T2", "T3"], "key": ["a_x", "b_x", "a_y"],
...     "kind": ["mean"] * 3, "n": [8] * 3, "p": [0.01, 0.2, 0.04],
...     "family": ["F1", "F1", "F2"], "n_resamples": [10_000] * 3,
...     "family_name": ["study, pyref", "study, pyref", "study, scifact"]})
>>> across(tests, "T1")
(['T1', 'T2', 'T3'], 2)
>>> corpus_free("fusion, scifact-sections 1800"), corpus_free("ndcg")
('fusion, {corpus} 1800', 'ndcg')
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
from scipy.stats import rankdata, wilcoxon

import hierret.evaluation.stats.montecarlo as montecarlo
from hierret.evaluation.stats.resampling import paired_randomization

__all__ = [
    "ALPHA",
    "CORPUS",
    "MAX_RESAMPLES",
    "REDRAW_FACTOR",
    "Robustness",
    "across",
    "at_floor",
    "base",
    "bounds",
    "corpus_free",
    "label",
    "mark",
    "near_alpha",
    "of",
    "rank_test",
    "settle",
]

#: The level of every verdict.
ALPHA = 0.05
#: How many times the resamples a pooled p near :data:`ALPHA` is drawn again with.
REDRAW_FACTOR = 10
#: The most resamples a p is drawn again with for the pooled family (then it stays).
MAX_RESAMPLES = 100_000
#: The corpus names a family's name may carry (longest first, so that
#: ``scifact-sections`` is not read as ``scifact``).
CORPUS = re.compile(r"(?<![a-z])(python-reference|scifact-sections|pyref|scifact|qasper)(?![a-z])")


def corpus_free(name: str) -> str:
    """A family's name with its corpus replaced by ``{corpus}``."""
    return CORPUS.sub("{corpus}", name)


def across(tests: pd.DataFrame, test: str) -> tuple[list[str], int]:
    """The tests of ``test``'s family pooled across corpora, and how many corpora.

    Parameters
    ----------
    tests : pandas.DataFrame
        A record's tests table (``{name}-tests.tsv``).
    test : str
        A test id, ``"T3"``.
    """
    row = tests[tests["test"] == test].iloc[0]
    name = str(row["family_name"])
    if not CORPUS.search(name):
        members = tests[tests["family"] == row["family"]]
        return list(members["test"]), 1
    pattern = corpus_free(name)
    same = tests[[corpus_free(str(n)) == pattern for n in tests["family_name"]]]
    corpora = {m[0] for n in same["family_name"] for m in CORPUS.finditer(str(n))}
    return list(same["test"]), len(corpora)


def at_floor(row: Mapping[str, Any]) -> bool:
    """Whether a tests-table row's p is the smallest its resamples can give."""
    if row.get("kind") != "mean" or int(row["n_resamples"]) >= 2 ** int(row["n"]):
        return False
    return bool(float(row["p"]) <= 2.0 / (int(row["n_resamples"]) + 1))


def bounds(p: Mapping[str, float], floor: set[str]) -> tuple[dict[str, float], dict[str, float]]:
    """Holm over ``p`` with the tests in ``floor`` at their bound (upper) and at 0 (lower).

    Examples
    --------
    >>> high, low = bounds({"a": 0.0002, "b": 0.04}, {"a"})
    >>> round(high["a"], 6), low["a"], high["b"] == low["b"]
    (0.0004, 0.0, True)
    """
    low = {k: (0.0 if k in floor else v) for k, v in p.items()}
    return _holm(p), _holm(low)


def _holm(p: Mapping[str, float]) -> dict[str, float]:
    """:func:`hierret.evaluation.stats.holm`'s values by statsmodels' own arithmetic (sorted p times
    ``m, m−1, …``, running maximum, capped at 1), without the ``gc.collect()`` its
    ``multipletests`` runs on every call (a fifth of a second in a process holding the
    records, hundreds of times per check); ``tests/publish/test_robustness.py`` holds them equal.
    """
    names = list(p)
    values = np.asarray([float(p[k]) for k in names], dtype=float)
    order = np.argsort(values)
    raw = values[order] * np.arange(len(values), 0, -1)
    adjusted = np.minimum(np.maximum.accumulate(raw), 1.0)
    out = np.empty_like(adjusted)
    out[order] = adjusted
    return {k: float(v) for k, v in zip(names, out, strict=True)}


def rank_test(a: npt.ArrayLike, b: npt.ArrayLike) -> tuple[float, int]:
    """The Wilcoxon signed-rank test of ``a − b``: its two-sided p and the sign of its effect.

    Zero differences are dropped (``zero_method="wilcox"``); the exact null
    distribution is used when at most 50 differences remain and no two share
    an absolute value, else the normal approximation with scipy's tie
    correction and no continuity correction. The sign is that of the sum of
    signed ranks (0 with no nonzero difference, whose p is 1).

    Examples
    --------
    >>> p, sign = rank_test([3.0, 4.0, 5.0, 6.0, 7.0, 8.0], [0.0] * 6)
    >>> round(p, 4), sign
    (0.0312, 1)
    >>> rank_test([1.0, 2.0], [1.0, 2.0])
    (1.0, 0)
    """
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    d = d[d != 0]
    if d.size == 0:
        return 1.0, 0
    ranks = rankdata(np.abs(d))
    signed = float(np.sum(np.sign(d) * ranks))
    exact = d.size <= 50 and np.unique(np.abs(d)).size == d.size
    res = wilcoxon(d, zero_method="wilcox", correction=False,
                   method="exact" if exact else "asymptotic")  # fmt: skip
    return float(res.pvalue), int(np.sign(signed))


@dataclass(frozen=True)
class Robustness:
    """A holding row's two alternative analyses (:func:`of`).

    Attributes
    ----------
    rank_p : float or None
        The rank test's p, Holm-adjusted over the row's family; ``None`` for
        hits, where the rank test is McNemar's exact test itself.
    rank_sign : int
        The sign of the rank test's effect (the claimed one for hits).
    across_p : float
        The row's p Holm-adjusted over its family pooled across corpora (an
        upper bound when a p at its floor decides it: ``across_low`` differs).
    across_low : float
        The same with every p at its floor set to 0.
    corpora : int
        How many corpora the pooled family spans (1: the family is its own).
    size : int
        How many tests it holds.
    sign : int
        The claimed direction, +1 or −1.
    resamples : int
        When the pooled adjusted p lay within Monte-Carlo error of 0.05
        (:func:`near_alpha`), the resamples the row's own p was drawn again
        with for the pooled family (:func:`settle`); 0 when it was not.
    unsettled : bool
        Whether the pooled adjusted p is within Monte-Carlo error of 0.05 even
        at :data:`MAX_RESAMPLES`: the row is then fragile, whichever side it lies.
    """

    rank_p: float | None
    rank_sign: int
    across_p: float
    across_low: float
    corpora: int
    size: int
    sign: int
    resamples: int = 0
    unsettled: bool = False

    @property
    def fragile(self) -> bool:
        """Whether either alternative fails to hold the claim at :data:`ALPHA`."""
        rank = self.rank_p is not None and (self.rank_p >= ALPHA or self.rank_sign != self.sign)
        return rank or self.across_p >= ALPHA or self.unsettled


def _p(value: float, bound: bool = False) -> str:
    """Two significant digits; below 0.0001 (an analytic rank p) as ``< 0.0001``."""
    if value < 1e-4 and not bound:
        return "< 0.0001"
    return ("≤ " if bound else "") + f"{value:.2g}"


def label(r: Robustness) -> str:
    """``robust: …`` or ``fragile: …`` with both alternatives' adjusted p.

    Examples
    --------
    >>> label(Robustness(0.066, -1, 0.113, 0.113, 3, 12, -1))
    'fragile: Wilcoxon 0.066; across 3 corpora 0.11'
    >>> label(Robustness(None, 1, 0.0021, 0.0021, 1, 1, 1))
    'robust: Wilcoxon = McNemar; one corpus'
    """
    if r.rank_p is None:
        rank = "Wilcoxon = McNemar"
    else:
        rank = f"Wilcoxon {_p(r.rank_p)}" + ("" if r.rank_sign == r.sign else " the other way")
    where = (
        f"across {r.corpora} corpora {_p(r.across_p, r.across_p != r.across_low)}"
        if r.corpora > 1
        else "one corpus"
    )
    if r.resamples:
        where += f" at {r.resamples:,} resamples"
    if r.unsettled:
        where += f", within Monte-Carlo error of {ALPHA}"
    return f"{'fragile' if r.fragile else 'robust'}: {rank}; {where}"


def base(verdict: str) -> str:
    """A verdict without the robustness :func:`mark` adds (what the row's numbers alone give).

    Examples
    --------
    >>> base("holds (fragile: Wilcoxon 0.066; across 3 corpora 0.11)"), base("holds")
    ('holds', 'holds')
    """
    return re.sub(r" \((?:robust|fragile): [^()]*\)$", "", verdict)


def mark(verdict: str, r: Robustness | None) -> str:
    """A verdict with its robustness: only ``"holds"`` gains one.

    Examples
    --------
    >>> mark("holds", Robustness(0.3, 1, 0.01, 0.01, 2, 8, 1))
    'holds (fragile: Wilcoxon 0.3; across 2 corpora 0.01)'
    >>> mark("not established (could detect ≥ 0.07)", None)
    'not established (could detect ≥ 0.07)'
    """
    return f"{verdict} ({label(r)})" if verdict == "holds" and r is not None else verdict


def _questions(questions: pd.DataFrame) -> dict[str, tuple[npt.NDArray[Any], npt.NDArray[Any]]]:
    """Each test's per-question scores ``(a, b)``, by test."""
    return {str(t): (g["a"].to_numpy(float), g["b"].to_numpy(float))
            for t, g in questions.groupby("test", sort=False)}  # fmt: skip


def of(results: Mapping[str, Mapping[str, Any]], key: str, direction: str) -> Robustness | None:
    """The robustness of the test ``record.base`` for a claimed ``direction`` (``>``/``<``).

    ``results`` are the loaded records (:func:`hierret.publish.report.load_results`),
    each with its ``"evidence"`` tests table and ``"questions"``. ``None``
    when the record has no evidence for ``key`` or the direction is a margin's.
    """
    if direction not in "<>":
        return None
    name, _, field = key.partition(".")
    record = results.get(name, {})
    tests, questions = record.get("evidence"), record.get("questions")
    if tests is None or questions is None:
        return None
    rows = tests[tests["key"] == field]
    if rows.empty:
        return None
    row = rows.iloc[0]
    sign = 1 if direction == ">" else -1
    rank_p: float | None = None
    rank_sign = sign
    if row["kind"] == "mean":
        scores = _questions(questions)
        members = tests[tests["family"] == row["family"]]
        ranked = {str(t): rank_test(*scores[str(t)]) for t in members["test"]}
        adjusted = bounds({t: p for t, (p, _) in ranked.items()}, set())[0]
        rank_p, rank_sign = adjusted[str(row["test"])], ranked[str(row["test"])][1]
    pooled, corpora = across(tests, str(row["test"]))
    sub = tests[tests["test"].isin(pooled)]
    p = dict(zip(sub["test"].astype(str), sub["p"].astype(float), strict=True))
    floor = {str(r["test"]) for _, r in sub.iterrows() if at_floor(r)}
    t = str(row["test"])
    high, low, drawn, unsettled = settle(p, floor, t, row, questions)
    return Robustness(rank_p, rank_sign, high[t], low[t], corpora, len(pooled), sign, drawn,
                      unsettled)  # fmt: skip


def settle(
    p: dict[str, float],
    floor: set[str],
    test: str,
    row: Mapping[str, Any],
    questions: pd.DataFrame,
) -> tuple[dict[str, float], dict[str, float], int, bool]:
    """Holm over ``p`` (:func:`bounds`), with ``test``'s p drawn again while its adjusted
    p lies within Monte-Carlo error of :data:`ALPHA` (:func:`near_alpha`).

    The re-draw rule of :func:`hierret.evaluation.stats.evidence.adjust` with the corrected
    standard error, applied to a family the record did not adjust in: ten times
    the resamples (:data:`REDRAW_FACTOR`, the published seed) up to
    :data:`MAX_RESAMPLES`. ``p[test]`` is replaced in place.

    Returns
    -------
    high, low : dict
        :func:`bounds` of the final p-values.
    resamples : int
        The resamples ``test`` was drawn again with (0: not drawn again).
    unsettled : bool
        Whether its adjusted p is still within Monte-Carlo error of ``ALPHA``.
    """
    high, low = bounds(p, floor)
    resamples, drawn = int(row["n_resamples"]), 0
    exact = row["kind"] != "mean" or resamples >= 2 ** int(row["n"]) or test in floor
    scores: tuple[npt.NDArray[Any], npt.NDArray[Any]] | None = None
    while not exact and near_alpha(high[test], p[test], resamples):
        if resamples >= MAX_RESAMPLES:
            return high, low, drawn, True
        resamples *= REDRAW_FACTOR
        if scores is None:
            scores = _questions(questions[questions["test"] == test])[test]
        p[test] = paired_randomization(*scores, n_resamples=resamples, seed=int(row["seed"]))
        high, low = bounds(p, floor)
        drawn = resamples
    return high, low, drawn, False


def near_alpha(adjusted: float, p: float, n_resamples: int) -> bool:
    """Whether a pooled adjusted p is within Monte-Carlo error of :data:`ALPHA`
    (:func:`hierret.evaluation.stats.montecarlo.near`, the corrected ``p(2-p)`` variance).

    Examples
    --------
    >>> near_alpha(0.056, 0.0097, 100_000), near_alpha(0.2, 0.01, 10_000)
    (True, False)
    """
    if n_resamples <= 0 or p <= 0 or not math.isfinite(adjusted):
        return False
    return montecarlo.near(adjusted, p, n_resamples)
