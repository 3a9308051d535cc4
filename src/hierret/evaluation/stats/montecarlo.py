"""The Monte-Carlo error of a resampled p-value, and the rule that keeps it out of verdicts.

A paired randomisation test (:func:`hierret.evaluation.stats.paired_randomization`)
draws ``B`` random sign flips and publishes the two-sided p-value
``p = 2 · min(k_below, k_above) / (B + 1)`` (scipy's convention), twice a
one-tail count. The count ``k`` is binomial with success probability about
``p / 2``, so ``p`` has variance ``4 · (p/2)(1 − p/2) / B = p (2 − p) / B``
(:func:`standard_error`), not the ``p (1 − p) / B`` of a proportion: the
smaller formula understates the error by up to ``√2`` (``1.4×`` at small
``p``), so "three standard errors" of it are about 2.1 true ones.

The rule of :func:`hierret.evaluation.stats.evidence.adjust` draws a test again with ten
times the resamples when its Holm-adjusted p lies within three standard errors
of 0.05 (:func:`near`). Which variance it uses is
:data:`hierret.evaluation.stats.evidence.REDRAW_VARIANCE`: ``"p(2-p)"``, the right one;
records before issue 39's revision were computed with ``"p(1-p)"``, and the one
published test the correction re-draws (see :func:`near`) is named in its
record.

Examples
--------
>>> round(standard_error(0.02, 10_000), 5), round(standard_error(0.02, 10_000, "p(1-p)"), 5)
(0.00199, 0.0014)
>>> near(0.0654, 0.0218, 10_000, factor=3.0), near(0.0654, 0.0218, 10_000, factor=3.0,
...                                                 variance="p(1-p)")
(True, False)
"""

from __future__ import annotations

import math
from typing import Literal

__all__ = ["SE_WIDTH", "Variance", "near", "standard_error"]

#: How the variance of a resampled two-sided p is computed: ``"p(2-p)"`` (right for
#: twice a one-tail count) or ``"p(1-p)"`` (the rule of records before issue 39's revision).
Variance = Literal["p(2-p)", "p(1-p)"]
#: How many standard errors from 0.05 an adjusted p must lie to be published as drawn.
SE_WIDTH = 3.0


def standard_error(p: float, n_resamples: int, variance: Variance = "p(2-p)") -> float:
    """The Monte-Carlo standard error of a two-sided p from ``n_resamples`` sign flips.

    Parameters
    ----------
    p : float
        The p-value, in [0, 1].
    n_resamples : int
        How many resamples gave it (at least 1).
    variance : {"p(2-p)", "p(1-p)"}, default "p(2-p)"
        ``"p(2-p)"``: the variance of twice a one-tail count, the p this
        project publishes; ``"p(1-p)"``: a proportion's, which understates it.

    Raises
    ------
    ValueError
        ``p`` outside [0, 1], fewer than one resample, or an unknown ``variance``.

    Examples
    --------
    >>> round(standard_error(0.05, 10_000), 5)
    0.00312
    """
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p={p!r} is not a probability in [0, 1]")
    if n_resamples < 1:
        raise ValueError(f"n_resamples={n_resamples!r}: a p-value needs at least 1 resample")
    if variance == "p(2-p)":
        v = p * (2.0 - p)
    elif variance == "p(1-p)":
        v = p * (1.0 - p)
    else:
        raise ValueError(f"variance={variance!r} is not one of 'p(2-p)', 'p(1-p)'")
    return math.sqrt(max(v, 1e-12) / n_resamples)


def near(
    adjusted_p: float,
    p: float,
    n_resamples: int,
    *,
    factor: float | None = None,
    alpha: float = 0.05,
    width: float = SE_WIDTH,
    variance: Variance = "p(2-p)",
) -> bool:
    """Whether an adjusted p lies within ``width`` Monte-Carlo standard errors of ``alpha``.

    Parameters
    ----------
    adjusted_p, p : float
        The test's Holm-adjusted and unadjusted p.
    n_resamples : int
        The resamples that gave ``p``.
    factor : float, optional
        Holm's multiplier for this member (``adjusted_p / p`` by default): the
        adjusted p's error is the unadjusted one's times it.
    alpha, width : float
        The level and the number of standard errors (0.05, :data:`SE_WIDTH`).
    variance : {"p(2-p)", "p(1-p)"}
        :func:`standard_error`'s formula.

    Examples
    --------
    >>> near(0.0431, 0.00718, 100_000, factor=6.0)
    False
    """
    if p <= 0:
        return False
    factor = adjusted_p / p if factor is None else factor
    return abs(adjusted_p - alpha) < width * factor * standard_error(p, n_resamples, variance)
