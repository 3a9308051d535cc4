"""Result type and argument checks shared by :mod:`hierret.evaluation.stats`."""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = ["Interval"]


@dataclass(frozen=True)
class Interval:
    """A point estimate with a two-sided confidence interval.

    Parameters
    ----------
    estimate : float
        The point estimate.
    low, high : float
        Lower and upper confidence limits.
    confidence : float
        Confidence level of the interval, in (0, 1).

    Examples
    --------
    >>> Interval(0.5, 0.25, 0.75, 0.95).high
    0.75
    """

    estimate: float
    low: float
    high: float
    confidence: float


def check_confidence(confidence: object) -> float:
    """Return ``confidence`` as a float, or raise if it is not in (0, 1)."""
    if (
        isinstance(confidence, bool)
        or not isinstance(confidence, numbers.Real)
        or not 0.0 < float(confidence) < 1.0
    ):
        raise ValueError(
            f"confidence={confidence!r} is not a level in (0, 1); "
            "pass e.g. 0.95 for a 95% interval."
        )
    return float(confidence)


def check_count(name: str, value: object) -> int:
    """Return ``value`` as an int, or raise if it is not a whole count >= 0."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name}={value!r} is not an integer count; pass a whole number >= 0.")
    count = int(value)
    if count < 0:
        raise ValueError(f"{name}={count} is negative; counts must be >= 0.")
    return count


def check_resamples(n_resamples: object) -> int:
    """Return ``n_resamples`` as an int, or raise if it is not a positive integer."""
    if (
        isinstance(n_resamples, bool)
        or not isinstance(n_resamples, numbers.Integral)
        or int(n_resamples) < 1
    ):
        raise ValueError(
            f"n_resamples={n_resamples!r} is not a positive integer; pass e.g. 10_000."
        )
    return int(n_resamples)


def as_vector(name: str, values: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """Return ``values`` as a non-empty, finite, one-dimensional float array."""
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError(
            f"{name} has shape {arr.shape}; pass a one-dimensional sequence, one value per query."
        )
    if arr.size == 0:
        raise ValueError(f"{name} is empty; pass at least one per-query value.")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite values; drop or fill them first.")
    return arr


def as_outcomes(name: str, values: npt.ArrayLike) -> npt.NDArray[np.bool_]:
    """Return ``values`` as a one-dimensional boolean array (accepting 0/1 numbers)."""
    arr = as_vector(name, values)
    if not np.all((arr == 0.0) | (arr == 1.0)):
        raise ValueError(
            f"{name} holds values other than 0/1 or False/True; pass one boolean hit per query."
        )
    return np.asarray(arr == 1.0, dtype=np.bool_)


def check_same_length(a: npt.NDArray[np.generic], b: npt.NDArray[np.generic]) -> None:
    """Raise if the two per-query arrays differ in length."""
    if a.shape != b.shape:
        raise ValueError(
            f"a has {a.size} values but b has {b.size}; pass both arms' results "
            "on the same queries, in the same order."
        )
