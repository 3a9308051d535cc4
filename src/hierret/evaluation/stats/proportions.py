"""Hit rates of two arms on the same queries: Wilson, Newcombe and McNemar."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy.typing as npt
from scipy.stats import binomtest
from statsmodels.stats.proportion import (
    proportion_confint,
)

from hierret.evaluation.stats._common import (
    Interval,
    as_outcomes,
    check_confidence,
    check_count,
    check_same_length,
)
from hierret.evaluation.stats.settings import DEFAULT_STATS

__all__ = [
    "PairedProportions",
    "mcnemar_exact",
    "newcombe_paired_interval",
    "paired_proportions",
    "wilson_interval",
]


@dataclass(frozen=True)
class PairedProportions:
    """Two arms' per-query hits compared on the same queries.

    Attributes
    ----------
    n : int
        Number of queries.
    both, only_a, only_b, neither : int
        The paired 2x2 counts: queries hit by both arms, by ``a`` only,
        by ``b`` only, and by neither.
    difference : Interval
        ``p_a - p_b`` with Newcombe's (1998) method-10 interval.
    mcnemar_p : float
        Exact two-sided McNemar p-value (binomial test on the discordant pairs).
    arm_a, arm_b : Interval
        Each arm's hit rate with its Wilson interval.
    """

    n: int
    both: int
    only_a: int
    only_b: int
    neither: int
    difference: Interval
    mcnemar_p: float
    arm_a: Interval
    arm_b: Interval


def wilson_interval(
    successes: int, n: int, confidence: float = DEFAULT_STATS.confidence
) -> Interval:
    """Wilson score interval for one binomial proportion.

    Parameters
    ----------
    successes : int
        Number of successes, ``0 <= successes <= n``.
    n : int
        Number of trials, ``n >= 1``.
    confidence : float, default 0.95
        Confidence level in (0, 1).

    Returns
    -------
    Interval
        ``successes / n`` with its Wilson score limits.

    Examples
    --------
    >>> ci = wilson_interval(36, 40)
    >>> round(ci.estimate, 3), round(ci.low, 3), round(ci.high, 3)
    (0.9, 0.769, 0.96)
    """
    level = check_confidence(confidence)
    successes = check_count("successes", successes)
    n = check_count("n", n)
    if n == 0:
        raise ValueError("n=0: a proportion needs at least one trial; pass n >= 1.")
    if successes > n:
        raise ValueError(f"successes={successes} exceeds n={n}; successes must be between 0 and n.")
    low, high = proportion_confint(successes, n, alpha=1.0 - level, method="wilson")
    # The Wilson limits are exactly 0 at successes == 0 and 1 at successes == n;
    # pin them so float rounding never puts the estimate outside its interval.
    return Interval(
        estimate=successes / n,
        low=0.0 if successes == 0 else float(low),
        high=1.0 if successes == n else float(high),
        confidence=level,
    )


def newcombe_paired_interval(
    both: int, only_a: int, only_b: int, neither: int, confidence: float = DEFAULT_STATS.confidence
) -> Interval:
    """Newcombe's method-10 interval for a difference of paired proportions.

    The score-based interval of Newcombe (1998), *Statistics in Medicine*
    17:2635-2650, method 10: the Wilson limits of the two marginal
    proportions combined with the (continuity-adjusted) phi correlation
    of the paired 2x2 table.

    Parameters
    ----------
    both, only_a, only_b, neither : int
        Paired counts: queries hit by both arms, by ``a`` only, by ``b`` only,
        and by neither. Their total must be at least one.
    confidence : float, default 0.95
        Confidence level in (0, 1).

    Returns
    -------
    Interval
        ``p_a - p_b = (only_a - only_b) / n`` with its method-10 limits.

    Notes
    -----
    The numerator ``ad - bc`` of phi is reduced by ``n/2`` when it exceeds
    ``n/2`` and set to 0 when it lies in ``[0, n/2]`` (Newcombe's adjustment);
    this reproduces the worked example of Fagerland, Lydersen & Laake (2014),
    *Statistical Analysis of Contingency Tables*, ch. 8.

    Examples
    --------
    >>> ci = newcombe_paired_interval(24, 12, 2, 2)
    >>> round(ci.estimate, 3), round(ci.low, 3), round(ci.high, 3)
    (0.25, 0.068, 0.415)
    """
    # Method 10 is not in scipy or statsmodels, so it is written out here from
    # Newcombe (1998), with his notation a, b, c, d for the four cells.
    level = check_confidence(confidence)
    a = check_count("both", both)
    b = check_count("only_a", only_a)
    c = check_count("only_b", only_b)
    d = check_count("neither", neither)
    n = a + b + c + d
    if n == 0:
        raise ValueError("all four counts are 0 (n=0); pass the counts of at least one query.")
    p1, p2 = (a + b) / n, (a + c) / n
    arm1 = wilson_interval(a + b, n, level)
    arm2 = wilson_interval(a + c, n, level)
    # phi: correlation of the paired table, 0 if any margin is empty; its numerator
    # ad - bc is shrunk by n/2 towards 0 when positive (and set to 0 when within n/2).
    margins = (a + b) * (c + d) * (a + c) * (b + d)
    numerator = float(a * d - b * c)
    if numerator > n / 2:
        numerator -= n / 2
    elif numerator > 0:
        numerator = 0.0
    phi = numerator / math.sqrt(margins) if margins > 0 else 0.0
    dl1, du1 = p1 - arm1.low, arm1.high - p1
    dl2, du2 = p2 - arm2.low, arm2.high - p2
    delta = math.sqrt(max(0.0, dl1**2 - 2.0 * phi * dl1 * du2 + du2**2))
    epsilon = math.sqrt(max(0.0, du1**2 - 2.0 * phi * du1 * dl2 + dl2**2))
    theta = p1 - p2
    return Interval(
        estimate=theta,
        low=max(-1.0, theta - delta),
        high=min(1.0, theta + epsilon),
        confidence=level,
    )


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """Exact two-sided McNemar test on the discordant pairs.

    Parameters
    ----------
    only_a, only_b : int
        Queries hit by arm ``a`` only and by arm ``b`` only.

    Returns
    -------
    float
        Two-sided p-value of a binomial test of ``only_a`` successes in
        ``only_a + only_b`` trials at p = 0.5; 1.0 when there are no
        discordant pairs.

    Examples
    --------
    >>> round(mcnemar_exact(12, 2), 4)
    0.0129
    """
    only_a = check_count("only_a", only_a)
    only_b = check_count("only_b", only_b)
    if only_a + only_b == 0:
        return 1.0
    return float(binomtest(only_a, only_a + only_b, p=0.5, alternative="two-sided").pvalue)


def paired_proportions(
    a: npt.ArrayLike, b: npt.ArrayLike, confidence: float = DEFAULT_STATS.confidence
) -> PairedProportions:
    """Compare two arms' per-query hits (e.g. hit@10) on the same queries.

    Parameters
    ----------
    a, b : array_like of bool
        One outcome per query for each arm (``True``/``1`` for a hit), in
        the same query order and of the same non-zero length.
    confidence : float, default 0.95
        Confidence level in (0, 1) for all three intervals.

    Returns
    -------
    PairedProportions
        The 2x2 counts, ``p_a - p_b`` with Newcombe's method-10 interval,
        the exact McNemar p-value, and each arm's Wilson interval.

    Examples
    --------
    >>> r = paired_proportions([1, 1, 1, 0, 1], [1, 0, 1, 0, 0])
    >>> r.both, r.only_a, r.only_b, r.neither
    (2, 2, 0, 1)
    >>> round(r.difference.estimate, 2), r.mcnemar_p
    (0.4, 0.5)
    """
    level = check_confidence(confidence)
    hits_a = as_outcomes("a", a)
    hits_b = as_outcomes("b", b)
    check_same_length(hits_a, hits_b)
    both = int((hits_a & hits_b).sum())
    only_a = int((hits_a & ~hits_b).sum())
    only_b = int((~hits_a & hits_b).sum())
    neither = int((~hits_a & ~hits_b).sum())
    n = hits_a.size
    return PairedProportions(
        n=n,
        both=both,
        only_a=only_a,
        only_b=only_b,
        neither=neither,
        difference=newcombe_paired_interval(both, only_a, only_b, neither, level),
        mcnemar_p=mcnemar_exact(only_a, only_b),
        arm_a=wilson_interval(both + only_a, n, level),
        arm_b=wilson_interval(both + only_b, n, level),
    )
