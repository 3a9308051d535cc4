"""Adjusting a declared family of p-values for multiple comparisons."""

from __future__ import annotations

import numbers
from collections.abc import Mapping

from statsmodels.stats.multitest import multipletests

__all__ = ["holm"]


def _is_probability(p: object) -> bool:
    return not isinstance(p, bool) and isinstance(p, numbers.Real) and 0.0 <= float(p) <= 1.0


def holm(pvalues: Mapping[str, float]) -> dict[str, float]:
    """Holm-adjusted p-values over a declared family of comparisons.

    Parameters
    ----------
    pvalues : Mapping[str, float]
        Unadjusted p-value of each comparison in the family, keyed by the
        comparison's name. The whole family must be passed at once.

    Returns
    -------
    dict[str, float]
        Holm (step-down Bonferroni) adjusted p-values, same keys and order.

    Examples
    --------
    >>> adjusted = holm({"A vs B": 0.01, "A vs C": 0.04, "B vs C": 0.03})
    >>> {name: round(p, 4) for name, p in adjusted.items()}
    {'A vs B': 0.03, 'A vs C': 0.06, 'B vs C': 0.06}
    """
    if len(pvalues) == 0:
        raise ValueError("pvalues is empty; pass the p-value of every comparison in the family.")
    for name, p in pvalues.items():
        if not _is_probability(p):
            raise ValueError(f"pvalues[{name!r}]={p!r} is not a probability in [0, 1].")
    names = list(pvalues)
    _, adjusted, _, _ = multipletests([float(pvalues[k]) for k in names], method="holm")
    return {k: float(p) for k, p in zip(names, adjusted, strict=True)}
