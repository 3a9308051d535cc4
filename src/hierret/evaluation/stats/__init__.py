"""Paired statistics for comparing retrieval arms on the same queries.

Hit rates (e.g. hit@10) are compared with :func:`paired_proportions`:
Wilson intervals per arm, Newcombe's method-10 interval for the paired
difference and the exact McNemar test. Mean per-query scores (e.g. nDCG@10)
are compared with :func:`paired_bootstrap` and :func:`paired_randomization`.
A declared family of comparisons is adjusted with :func:`holm`. A setting is
tuned out of fold by one seeded split (:func:`fold_parts`, :func:`cross_validate`,
:func:`held_out`). A study passes its settings (confidence, resamples, seed) as
one frozen :class:`StatsSettings`.

Examples
--------
>>> from hierret.evaluation.stats import paired_proportions
>>> a = [True] * 36 + [False] * 4  # 40 queries; arm A hits 36
>>> b = [True] * 24 + [False] * 12 + [True] * 2 + [False] * 2  # arm B hits 26
>>> r = paired_proportions(a, b)
>>> r.both, r.only_a, r.only_b, r.neither
(24, 12, 2, 2)
>>> round(r.difference.low, 3), round(r.difference.high, 3), round(r.mcnemar_p, 4)
(0.068, 0.415, 0.0129)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import hierret._face as _face

if TYPE_CHECKING:
    from hierret.evaluation.stats import evidence, montecarlo
    from hierret.evaluation.stats._common import Interval
    from hierret.evaluation.stats.folds import cross_validate, fold_parts, held_out
    from hierret.evaluation.stats.multiplicity import holm
    from hierret.evaluation.stats.proportions import (
        PairedProportions,
        mcnemar_exact,
        newcombe_paired_interval,
        paired_proportions,
        wilson_interval,
    )
    from hierret.evaluation.stats.resampling import (
        BootstrapMethod,
        mean_interval,
        paired_bootstrap,
        paired_randomization,
    )
    from hierret.evaluation.stats.settings import DEFAULT_STATS, StatsSettings

#: Each public name and the module that defines it; a name's module loads on first use.
_FACE = {
    "evidence": "hierret.evaluation.stats.evidence",
    "montecarlo": "hierret.evaluation.stats.montecarlo",
    "Interval": "hierret.evaluation.stats._common",
    "cross_validate": "hierret.evaluation.stats.folds",
    "fold_parts": "hierret.evaluation.stats.folds",
    "held_out": "hierret.evaluation.stats.folds",
    "holm": "hierret.evaluation.stats.multiplicity",
    "PairedProportions": "hierret.evaluation.stats.proportions",
    "mcnemar_exact": "hierret.evaluation.stats.proportions",
    "newcombe_paired_interval": "hierret.evaluation.stats.proportions",
    "paired_proportions": "hierret.evaluation.stats.proportions",
    "wilson_interval": "hierret.evaluation.stats.proportions",
    "BootstrapMethod": "hierret.evaluation.stats.resampling",
    "mean_interval": "hierret.evaluation.stats.resampling",
    "paired_bootstrap": "hierret.evaluation.stats.resampling",
    "paired_randomization": "hierret.evaluation.stats.resampling",
    "DEFAULT_STATS": "hierret.evaluation.stats.settings",
    "StatsSettings": "hierret.evaluation.stats.settings",
}

__all__ = [
    "DEFAULT_STATS",
    "BootstrapMethod",
    "Interval",
    "PairedProportions",
    "StatsSettings",
    "cross_validate",
    "evidence",
    "fold_parts",
    "held_out",
    "holm",
    "mcnemar_exact",
    "mean_interval",
    "montecarlo",
    "newcombe_paired_interval",
    "paired_bootstrap",
    "paired_proportions",
    "paired_randomization",
    "wilson_interval",
]

if not TYPE_CHECKING:  # mypy reads the imports above, so a misspelt name stays an error
    __getattr__, __dir__ = _face.lazy(__name__, _FACE)
