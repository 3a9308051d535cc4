"""Several arms on the same queries: one table with intervals and paired tests.

What every notebook needs, so no notebook re-implements it. Arms are compared
with a baseline on the *same* queries: per-query means with bootstrap
intervals, paired differences with bootstrap intervals and randomisation
p-values, Holm-adjusted over the declared family; for hit rates, Wilson
intervals, Newcombe's paired interval and McNemar's exact test.

Examples
--------
>>> per_query = {"base": {"q1": 0.0, "q2": 1.0, "q3": 0.5},
...              "new": {"q1": 1.0, "q2": 1.0, "q3": 1.0}}
>>> table = compare(per_query, baseline="base", n_resamples=200)
>>> float(table.loc["new", "mean"]), float(table.loc["new", "diff"])
(1.0, 0.5)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from hierret.stats import (
    holm,
    mean_interval,
    paired_bootstrap,
    paired_proportions,
    paired_randomization,
    wilson_interval,
)

__all__ = ["align", "compare", "compare_hits", "paired_tests"]

PerQuery = Mapping[str, Mapping[str, float]]


def align(per_query: PerQuery) -> pd.DataFrame:
    """Arms as columns, queries as rows; every arm must score the same queries."""
    frame = pd.DataFrame({arm: pd.Series(dict(v), dtype=float) for arm, v in per_query.items()})
    missing = frame.columns[frame.isna().any()].tolist()
    if missing:
        raise ValueError(f"arms {missing} do not score every query: paired comparisons need "
                         "the same queries under each arm")
    return frame.sort_index()


def _family(arms: Sequence[str], baseline: str, family: Sequence[str] | None) -> list[str]:
    if baseline not in arms:
        raise ValueError(f"baseline {baseline!r} is not an arm; arms: {list(arms)}")
    declared = list(family) if family is not None else [a for a in arms if a != baseline]
    unknown = [a for a in declared if a not in arms or a == baseline]
    if unknown:
        raise ValueError(f"family members {unknown} are not arms other than the baseline")
    return declared


def _table(
    rows: Mapping[str, Mapping[str, float]],
    pvalues: Mapping[str, float],
    baseline: str,
    declared: Sequence[str],
    confidence: float,
) -> pd.DataFrame:
    """One row per arm, Holm-adjusted p-values over the declared family."""
    table = pd.DataFrame.from_dict(dict(rows), orient="index")
    table["p_holm"] = pd.Series(holm(pvalues) if pvalues else {}, dtype=float)
    table.index.name = "arm"
    table.attrs.update(baseline=baseline, family=list(declared), confidence=confidence)
    return table


def compare(
    per_query: PerQuery,
    baseline: str,
    family: Sequence[str] | None = None,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> pd.DataFrame:
    """Compare arms' per-query scores (e.g. nDCG@10) with a baseline.

    Parameters
    ----------
    per_query : mapping
        ``{arm: {query_id: score}}``; every arm scores the same queries.
    baseline : str
        The arm every other arm is compared with.
    family : sequence of str, optional
        The comparisons declared before the run (arms compared with the
        baseline); Holm's adjustment runs over exactly these. Default: all arms.
    confidence, n_resamples, seed
        Interval level and resampling settings (bootstrap, randomisation).

    Returns
    -------
    pandas.DataFrame
        One row per arm: ``n``, ``mean``, ``low``, ``high`` (bootstrap interval
        of the mean), and for family members ``diff``, ``diff_low``,
        ``diff_high`` (paired bootstrap), ``p`` (paired randomisation) and
        ``p_holm``.
    """
    frame = align(per_query)
    declared = _family(list(frame.columns), baseline, family)
    rows: dict[str, dict[str, float]] = {}
    pvalues: dict[str, float] = {}
    base = frame[baseline].to_numpy()
    for arm in frame.columns:
        x = frame[arm].to_numpy()
        ci = mean_interval(x, n_resamples=n_resamples, confidence=confidence, seed=seed,
                           method="percentile")
        row = {"n": float(len(x)), "mean": float(np.mean(x)), "low": ci.low, "high": ci.high}
        if arm in declared:
            d = paired_bootstrap(x, base, n_resamples=n_resamples, confidence=confidence,
                                 seed=seed, method="percentile")
            pvalues[arm] = paired_randomization(x, base, n_resamples=n_resamples, seed=seed)
            row |= {"diff": d.estimate, "diff_low": d.low, "diff_high": d.high, "p": pvalues[arm]}
        rows[arm] = row
    return _table(rows, pvalues, baseline, declared, confidence)


def compare_hits(
    hits: Mapping[str, Mapping[str, bool]],
    baseline: str,
    family: Sequence[str] | None = None,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Compare arms' per-query hits (e.g. hit@1) with a baseline.

    Returns one row per arm: ``hits``, ``n``, ``rate`` with its Wilson interval
    (``low``, ``high``), and for family members the paired counts, the
    difference with Newcombe's paired score interval, McNemar's exact ``p`` and
    ``p_holm``.

    Examples
    --------
    >>> hits = {"whole": {"q1": True, "q2": False, "q3": False},
    ...         "passages": {"q1": True, "q2": True, "q3": True}}
    >>> table = compare_hits(hits, baseline="whole")
    >>> table.loc["passages", ["hits", "only_arm", "only_base"]].tolist()
    [3.0, 2.0, 0.0]
    """
    frame = align({a: {q: float(v) for q, v in h.items()} for a, h in hits.items()})
    declared = _family(list(frame.columns), baseline, family)
    rows: dict[str, dict[str, float]] = {}
    pvalues: dict[str, float] = {}
    base = frame[baseline].to_numpy() > 0
    for arm in frame.columns:
        x = frame[arm].to_numpy() > 0
        w = wilson_interval(int(x.sum()), len(x), confidence)
        row = {"hits": float(x.sum()), "n": float(len(x)), "rate": w.estimate,
               "low": w.low, "high": w.high}
        if arm in declared:
            pp = paired_proportions(x, base, confidence)
            pvalues[arm] = pp.mcnemar_p
            row |= {"both": pp.both, "only_arm": pp.only_a, "only_base": pp.only_b,
                    "neither": pp.neither, "diff": pp.difference.estimate,
                    "diff_low": pp.difference.low, "diff_high": pp.difference.high,
                    "p": pp.mcnemar_p}
        rows[arm] = row
    return _table(rows, pvalues, baseline, declared, confidence)


def paired_tests(
    per_query: PerQuery,
    pairs: Sequence[tuple[str, str]],
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> pd.DataFrame:
    """Paired comparisons ``a − b`` for a declared family of arm pairs, Holm-adjusted.

    Parameters
    ----------
    per_query : mapping
        ``{arm: {query_id: score}}`` on the same queries.
    pairs : sequence of (str, str)
        The family, declared before the run: each ``(a, b)`` tests ``a − b``.

    Returns
    -------
    pandas.DataFrame
        One row per pair (index ``"a vs b"``): ``a``, ``b``, ``mean_a``,
        ``mean_b``, ``diff`` with its paired bootstrap interval
        (``diff_low``, ``diff_high``), randomisation ``p`` and ``p_holm``.

    Examples
    --------
    >>> scores = {"x": {"q1": 1.0, "q2": 0.5}, "y": {"q1": 0.5, "q2": 0.5}}
    >>> float(paired_tests(scores, [("x", "y")], n_resamples=100).loc["x vs y", "diff"])
    0.25
    """
    frame = align(per_query)
    unknown = sorted({arm for pair in pairs for arm in pair} - set(frame.columns))
    if unknown:
        raise ValueError(f"pairs name unknown arms {unknown}; arms: {list(frame.columns)}")
    rows: dict[str, dict[str, object]] = {}
    pvalues: dict[str, float] = {}
    for a, b in pairs:
        x, y = frame[a].to_numpy(), frame[b].to_numpy()
        d = paired_bootstrap(x, y, n_resamples=n_resamples, confidence=confidence, seed=seed,
                             method="percentile")
        name = f"{a} vs {b}"
        pvalues[name] = paired_randomization(x, y, n_resamples=n_resamples, seed=seed)
        rows[name] = {"a": a, "b": b, "mean_a": float(np.mean(x)), "mean_b": float(np.mean(y)),
                      "diff": d.estimate, "diff_low": d.low, "diff_high": d.high,
                      "p": pvalues[name]}
    table = pd.DataFrame.from_dict(rows, orient="index")
    table["p_holm"] = pd.Series(holm(pvalues), dtype=float)
    table.attrs.update(confidence=confidence, n=len(frame))
    return table
