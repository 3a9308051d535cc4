"""Per-query mean scores: bootstrap intervals and a paired randomisation test."""

from __future__ import annotations

from typing import Literal

import numpy as np
import numpy.typing as npt
from scipy.stats import bootstrap, permutation_test

import hierret._clock as _clock
from hierret.evaluation.stats._common import (
    Interval,
    as_vector,
    check_confidence,
    check_resamples,
    check_same_length,
)
from hierret.evaluation.stats.settings import DEFAULT_STATS

__all__ = ["BootstrapMethod", "mean_interval", "paired_bootstrap", "paired_randomization"]

#: How :func:`scipy.stats.bootstrap` turns resamples into limits.
BootstrapMethod = Literal["BCa", "percentile"]


def _mean(x: npt.NDArray[np.float64], axis: int = -1) -> npt.NDArray[np.float64]:
    return np.asarray(np.mean(x, axis=axis), dtype=np.float64)


def _bootstrap_mean(
    x: npt.NDArray[np.float64],
    n_resamples: int,
    confidence: float,
    seed: int | None,
    method: BootstrapMethod,
) -> Interval:
    level = check_confidence(confidence)
    n_resamples = check_resamples(n_resamples)
    if method not in ("BCa", "percentile"):
        raise ValueError(f"method={method!r} is not one of 'BCa', 'percentile'.")
    estimate = float(np.mean(x))
    if np.all(x == x[0]):
        # Every resample has the same mean: the interval is the point itself
        # (scipy would warn and return NaN limits for BCa).
        return Interval(estimate, estimate, estimate, level)
    with _clock.stage("statistics"):
        res = bootstrap(
            (x,),
            _mean,
            n_resamples=n_resamples,
            confidence_level=level,
            method=method,
            rng=np.random.default_rng(seed),
        )
    low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
    if not (np.isfinite(low) and np.isfinite(high)):
        raise ValueError(
            f"the {method} bootstrap gave no finite limits for these data; "
            "try method='percentile' or more queries."
        )
    return Interval(estimate, low, high, level)


def mean_interval(
    x: npt.ArrayLike,
    n_resamples: int = DEFAULT_STATS.n_resamples,
    confidence: float = DEFAULT_STATS.confidence,
    seed: int | None = DEFAULT_STATS.seed,
    method: BootstrapMethod = "BCa",
) -> Interval:
    """Bootstrap interval for one arm's mean per-query score (e.g. nDCG@10).

    Parameters
    ----------
    x : array_like of float
        One score per query; non-empty and finite.
    n_resamples : int, default 10_000
        Number of bootstrap resamples of the queries.
    confidence : float, default 0.95
        Confidence level in (0, 1).
    seed : int or None, default 0
        Seed for :func:`numpy.random.default_rng`; a fixed seed makes the
        interval reproducible.
    method : {"BCa", "percentile"}, default "BCa"
        Interval method of :func:`scipy.stats.bootstrap`.

    Returns
    -------
    Interval
        The mean of ``x`` with its bootstrap limits.

    Examples
    --------
    >>> ci = mean_interval([0.2, 0.4, 0.6, 0.8], n_resamples=999)
    >>> ci.estimate
    0.5
    >>> ci.low <= 0.5 <= ci.high
    True
    """
    return _bootstrap_mean(as_vector("x", x), n_resamples, confidence, seed, method)


def paired_bootstrap(
    a: npt.ArrayLike,
    b: npt.ArrayLike,
    n_resamples: int = DEFAULT_STATS.n_resamples,
    confidence: float = DEFAULT_STATS.confidence,
    seed: int | None = DEFAULT_STATS.seed,
    method: BootstrapMethod = "BCa",
) -> Interval:
    """Bootstrap interval for the difference of two arms' mean per-query scores.

    Queries are resampled with each query's pair of scores kept together,
    which is the same as resampling the per-query differences ``a - b``.

    Parameters
    ----------
    a, b : array_like of float
        One score per query for each arm, in the same query order.
    n_resamples : int, default 10_000
        Number of bootstrap resamples of the queries.
    confidence : float, default 0.95
        Confidence level in (0, 1).
    seed : int or None, default 0
        Seed for :func:`numpy.random.default_rng`.
    method : {"BCa", "percentile"}, default "BCa"
        Interval method of :func:`scipy.stats.bootstrap`.

    Returns
    -------
    Interval
        ``mean(a) - mean(b)`` with its bootstrap limits.

    Examples
    --------
    >>> ci = paired_bootstrap([0.5, 0.7, 0.9, 0.6], [0.4, 0.5, 0.8, 0.6], n_resamples=999)
    >>> round(ci.estimate, 3)
    0.1
    >>> ci.low <= ci.estimate <= ci.high
    True
    """
    x = as_vector("a", a)
    y = as_vector("b", b)
    check_same_length(x, y)
    return _bootstrap_mean(x - y, n_resamples, confidence, seed, method)


def paired_randomization(
    a: npt.ArrayLike,
    b: npt.ArrayLike,
    n_resamples: int = DEFAULT_STATS.n_resamples,
    seed: int | None = DEFAULT_STATS.seed,
) -> float:
    """Two-sided paired randomisation test of equal mean per-query scores.

    Under the null hypothesis each query's two scores are exchangeable, so
    the sign of each per-query difference ``a - b`` is flipped at random
    (:func:`scipy.stats.permutation_test` with ``permutation_type="samples"``;
    scipy enumerates all ``2**n`` sign patterns when that is no more than
    ``n_resamples``). With fewer resamples than patterns the same random
    sign-flips are drawn and averaged in one vector operation per query
    rather than by scipy's loop: the same p-value, bit for bit, in a fraction
    of the time.

    Parameters
    ----------
    a, b : array_like of float
        One score per query for each arm, in the same query order.
    n_resamples : int, default 10_000
        Number of random sign-flips (ignored when exact enumeration is used).
    seed : int or None, default 0
        Seed for :func:`numpy.random.default_rng`.

    Returns
    -------
    float
        Two-sided p-value for the mean difference.

    Examples
    --------
    >>> paired_randomization([0.5, 0.7, 0.9], [0.4, 0.5, 0.8])
    0.25
    """
    x = as_vector("a", a)
    y = as_vector("b", b)
    check_same_length(x, y)
    n_resamples = check_resamples(n_resamples)
    d = x - y
    rng = np.random.default_rng(seed)
    with _clock.stage("statistics"):
        if d.size < 2 or n_resamples >= 2**d.size:  # scipy's checks and its exact test
            res = permutation_test(
                (d,),
                _mean,
                permutation_type="samples",
                vectorized=True,
                n_resamples=n_resamples,
                alternative="two-sided",
                rng=rng,
            )
            return min(1.0, float(res.pvalue))
        null = _sign_flip_means(d, n_resamples, rng)
    # scipy.stats.permutation_test's two-sided p-value, its tolerance for ties included
    observed = _mean(d)
    gamma = np.abs(np.finfo(np.float64).eps * 100 * observed)
    below = np.count_nonzero(null <= observed + gamma) + 1
    above = np.count_nonzero(null >= observed - gamma) + 1
    return min(1.0, float(np.clip(min(below, above) / (n_resamples + 1) * 2, 0.0, 1.0)))


def _sign_flip_means(
    d: npt.NDArray[np.float64], n_resamples: int, rng: np.random.Generator
) -> npt.NDArray[np.float64]:
    """The null distribution of :func:`scipy.stats.permutation_test` for ``(d,)``, faster.

    scipy (``permutation_type="samples"``, one sample, random rather than
    exact) draws one ``uint32`` per resample and observation from ``rng``, C
    order, and keeps the observation's sign where the draw's lowest bit is 1;
    its mean sums the signed observations in observation order. This does the
    same with one draw of every bit and one vector addition per observation,
    instead of scipy's loop over observations indexing a batch of per-pair
    permutations, so the means, and the p-value, are bit-identical for the
    same ``rng`` (``tests/core/test_stats.py`` checks them against scipy).

    The resamples are drawn in blocks of at most :data:`_BLOCK` draws: the
    generator's stream is the same whatever the block (numpy keeps a half-used
    64-bit word between calls), so the means are the same, and 10**6 resamples
    of 300 questions need tens of megabytes rather than more than a gigabyte.
    """
    rows = max(1, _BLOCK // max(d.size, 1))
    out = np.empty(n_resamples, dtype=np.float64)
    negated = -d
    for start in range(0, n_resamples, rows):
        stop = min(n_resamples, start + rows)
        draws = rng.integers(0, 2**32, size=(stop - start, d.size), dtype=np.uint32)
        keep = np.ascontiguousarray((draws & 1).astype(bool).T)  # one row per observation
        total = np.where(keep[0], d[0], negated[0])
        for i in range(1, d.size):
            total += np.where(keep[i], d[i], negated[i])
        out[start:stop] = total / d.size
    return out


#: The most sign draws :func:`_sign_flip_means` holds at once (4 bytes each).
_BLOCK = 2**23
