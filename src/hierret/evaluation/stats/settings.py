"""How a study's statistics are computed, as one frozen value passed like a profile.

A :class:`~hierret.search.profile.Profile` says everything that decides a ranking;
:class:`StatsSettings` says everything that decides an interval or a p-value
of a comparison: the confidence level, how many resamples the bootstrap and
the randomisation test draw, and their seed. A study passes one value
(``stats=StatsSettings(n_resamples=1000)``) instead of the same three keyword
arguments through every call, and records it beside its results.

The primitives of :mod:`hierret.evaluation.stats`
(:func:`~hierret.evaluation.stats.paired_bootstrap`,
:func:`~hierret.evaluation.stats.wilson_interval`, …) keep their keyword arguments, as
:mod:`scipy.stats` does; their defaults are :data:`DEFAULT_STATS`'s.

Examples
--------
>>> s = StatsSettings(n_resamples=1000)
>>> s.confidence, s.n_resamples, s.seed
(0.95, 1000, 0)
>>> s.as_dict()
{'confidence': 0.95, 'n_resamples': 1000, 'seed': 0}
>>> StatsSettings(confidence=95)
Traceback (most recent call last):
...
ValueError: confidence=95 is not a level in (0, 1); pass e.g. 0.95 for a 95% interval.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from hierret.evaluation.stats._common import check_confidence, check_count

__all__ = ["DEFAULT_STATS", "StatsSettings"]


@dataclass(frozen=True)
class StatsSettings:
    """The settings of a study's intervals and tests.

    Parameters
    ----------
    confidence : float, default 0.95
        Level of every interval, in (0, 1).
    n_resamples : int, default 10_000
        Resamples of the bootstrap intervals and of the paired randomisation
        test (at least 1).
    seed : int, default 0
        Seed of every resampling, so that a rerun gives the same limits and
        p-values.

    Raises
    ------
    ValueError, TypeError
        A level outside (0, 1), a count that is not a whole number ≥ 1, a
        seed that is not a whole number ≥ 0; the message names the field.
    """

    confidence: float = 0.95
    n_resamples: int = 10_000
    seed: int = 0

    def __post_init__(self) -> None:
        check_confidence(self.confidence)
        if check_count("n_resamples", self.n_resamples) < 1:
            raise ValueError("n_resamples=0: draw at least 1 resample (10_000 is the default)")
        check_count("seed", self.seed)

    def as_dict(self) -> dict[str, Any]:
        """The settings as plain values, for a result record."""
        return asdict(self)


#: The settings every record uses unless a notebook's parameters say otherwise.
DEFAULT_STATS = StatsSettings()
