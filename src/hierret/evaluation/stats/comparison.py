"""Arms compared on the same questions: means or hit rates, paired differences, Holm.

The statistics of a comparison, apart from running the arms
(:mod:`hierret.study.experiment`) and from the object that keeps a study's scores
(:mod:`hierret.study.result`). :func:`compare` compares per-query means (bootstrap
intervals, paired bootstrap differences and randomisation p-values, Holm-adjusted
over the declared family), :func:`compare_hits` hit rates (Wilson intervals,
Newcombe's paired interval and McNemar's exact test), :func:`paired_tests` any
declared pairs; :func:`compare_metric` picks between the first two by the
metric's kind (:data:`hierret.evaluation.metrics.KINDS`), and :data:`SUMMARY`
names the column that holds each kind's per-arm value.

Examples
--------
>>> per_query = {"base": {"q1": 0.0, "q2": 1.0, "q3": 0.5},
...              "new": {"q1": 1.0, "q2": 1.0, "q3": 1.0}}
>>> table = compare(per_query, baseline="base", stats=StatsSettings(n_resamples=200))
>>> float(table.loc["new", "mean"]), float(table.loc["new", "diff"])
(1.0, 0.5)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

import hierret.evaluation.stats.evidence as evidence
from hierret.evaluation.metrics import MetricKind, is_binary
from hierret.evaluation.stats.proportions import paired_proportions, wilson_interval
from hierret.evaluation.stats.resampling import (
    mean_interval,
    paired_bootstrap,
    paired_randomization,
)
from hierret.evaluation.stats.settings import DEFAULT_STATS, StatsSettings

__all__ = [
    "HIT_COLUMNS",
    "MEAN_COLUMNS",
    "SUMMARY",
    "PerQuery",
    "align",
    "compare",
    "compare_hits",
    "compare_metric",
    "paired_tests",
]

PerQuery = Mapping[str, Mapping[str, float]]


def align(per_query: PerQuery) -> pd.DataFrame:
    """Arms as columns, queries as rows; every arm must score the same queries."""
    frame = pd.DataFrame({arm: pd.Series(dict(v), dtype=float) for arm, v in per_query.items()})
    missing = frame.columns[frame.isna().any()].tolist()
    if missing:
        raise ValueError(
            f"arms {missing} do not score every query: paired comparisons need "
            "the same queries under each arm"
        )
    return frame.sort_index()


def _family(arms: Sequence[str], baseline: str, family: Sequence[str] | None) -> list[str]:
    if baseline not in arms:
        raise ValueError(f"baseline {baseline!r} is not an arm; arms: {list(arms)}")
    declared = list(family) if family is not None else [a for a in arms if a != baseline]
    unknown = [a for a in declared if a not in arms or a == baseline]
    if unknown:
        raise ValueError(f"family members {unknown} are not arms other than the baseline")
    return declared


#: The columns of :func:`compare` and :func:`compare_hits`, tested arms or not: a table
#: of one arm (nothing to test) has the test columns too, empty.
MEAN_COLUMNS: tuple[str, ...] = ("n", "mean", "low", "high", "diff", "diff_low", "diff_high")
MEAN_COLUMNS += ("p", "p_holm")
HIT_COLUMNS: tuple[str, ...] = ("hits", "n", "rate", "low", "high", "both", "only_arm")
HIT_COLUMNS += ("only_base", "neither", "diff", "diff_low", "diff_high", "p", "p_holm")


def _adjust(
    tests: Mapping[str, evidence.PairedTest],
    rows: Mapping[str, dict[str, Any]],
    ledger: evidence.Ledger | None,
    name: str = "",
) -> tuple[dict[str, float], dict[str, evidence.PairedTest]]:
    """Keep the tests in ``ledger`` (a ledger of their own when ``None``) and Holm-adjust
    them there as one family (:meth:`hierret.evaluation.stats.evidence.Ledger.adjust`):
    their adjusted p-values and the tests as published, by row; a test drawn again near
    0.05 gets its new ``p`` in ``rows``."""
    book = evidence.Ledger() if ledger is None else ledger
    ids = [book.keep(t) for t in tests.values()]
    adjusted = dict(zip(tests, book.adjust(ids, name), strict=True))
    published = {row: book.tests[i] for row, i in zip(tests, ids, strict=True)}
    for row, test in published.items():
        rows[row]["p"] = test.p
    return adjusted, published


def _keep(
    kind: evidence.Kind,
    a: str,
    b: str,
    frame: pd.DataFrame,
    x: Any,
    y: Any,
    d: Any,
    p: float,
    stats: StatsSettings,
) -> evidence.PairedTest:
    """One paired test's evidence (its questions, both arms' scores, its settings)."""
    return evidence.PairedTest(
        kind,
        a,
        b,
        tuple(map(str, frame.index)),
        tuple(map(float, x)),
        tuple(map(float, y)),
        float(d.estimate),
        float(d.low),
        float(d.high),
        float(p),
        stats.confidence,
        stats.n_resamples if kind == "mean" else 0,
        stats.seed,
        stats.n_resamples,
    )


def _table(
    rows: dict[str, dict[str, Any]],
    kept: Mapping[str, evidence.PairedTest],
    baseline: str,
    declared: Sequence[str],
    confidence: float,
    columns: tuple[str, ...],
    ledger: evidence.Ledger | None,
) -> pd.DataFrame:
    """One row per arm, Holm-adjusted p-values over the declared family."""
    adjusted, published = _adjust(kept, rows, ledger)
    table = pd.DataFrame.from_dict(dict(rows), orient="index").reindex(columns=list(columns[:-1]))
    table["p_holm"] = pd.Series(adjusted, dtype=float)
    table[evidence.TEST_COLUMN] = pd.Series(
        published, dtype=object
    )  # rides with its row when reshaped
    table.index.name = "arm"
    table.attrs.update(
        baseline=baseline, family=list(declared), confidence=confidence, tests=published
    )
    return table


def _resampling(stats: StatsSettings) -> dict[str, Any]:
    """The bootstrap's keyword arguments from the settings."""
    return {"n_resamples": stats.n_resamples, "confidence": stats.confidence, "seed": stats.seed}


def compare(
    per_query: PerQuery,
    baseline: str,
    family: Sequence[str] | None = None,
    stats: StatsSettings = DEFAULT_STATS,
    *,
    ledger: evidence.Ledger | None = None,
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
    stats : StatsSettings, optional
        Interval level and resampling settings (bootstrap, randomisation);
        :data:`~hierret.evaluation.stats.DEFAULT_STATS` by default.
    ledger : Ledger, optional
        The study's ledger, which keeps the tests and their family
        (:class:`hierret.evaluation.stats.evidence.Ledger`); default: a ledger of their own.

    Returns
    -------
    pandas.DataFrame
        One row per arm: ``n``, ``mean``, ``low``, ``high`` (bootstrap interval
        of the mean), and for family members ``diff``, ``diff_low``,
        ``diff_high`` (paired bootstrap), ``p`` (paired randomisation) and
        ``p_holm``: the columns :data:`MEAN_COLUMNS`, empty (NaN) for the arms
        not tested, whether or not any arm is; then ``test``, each tested arm's
        test as published (:class:`hierret.evaluation.stats.evidence.PairedTest`), which
        stays with its row however the table is reshaped (a record's
        evidence is found by it: :func:`hierret.publish.record.table_values`),
        also in ``attrs["tests"]`` by row.
    """
    frame = align(per_query)
    declared = _family(list(frame.columns), baseline, family)
    rows: dict[str, dict[str, Any]] = {}
    kept: dict[str, evidence.PairedTest] = {}
    base = frame[baseline].to_numpy()
    for arm in frame.columns:
        x = frame[arm].to_numpy()
        ci = mean_interval(x, **_resampling(stats), method="percentile")
        row = {"n": float(len(x)), "mean": float(np.mean(x)), "low": ci.low, "high": ci.high}
        if arm in declared:
            d = paired_bootstrap(x, base, **_resampling(stats), method="percentile")
            p = paired_randomization(x, base, n_resamples=stats.n_resamples, seed=stats.seed)
            kept[arm] = _keep("mean", str(arm), baseline, frame, x, base, d, p, stats)
            row |= {"diff": d.estimate, "diff_low": d.low, "diff_high": d.high, "p": p}
        rows[arm] = row
    return _table(rows, kept, baseline, declared, stats.confidence, MEAN_COLUMNS, ledger)


def compare_hits(
    hits: Mapping[str, Mapping[str, bool]],
    baseline: str,
    family: Sequence[str] | None = None,
    stats: StatsSettings = DEFAULT_STATS,
    *,
    ledger: evidence.Ledger | None = None,
) -> pd.DataFrame:
    """Compare arms' per-query hits (e.g. hit@1) with a baseline.

    Returns one row per arm: ``hits``, ``n``, ``rate`` with its Wilson interval
    (``low``, ``high``), and for family members the paired counts, the
    difference with Newcombe's paired score interval, McNemar's exact ``p`` and
    ``p_holm``; the tests in the ``test`` column, ``attrs["tests"]`` and ``ledger`` as
    :func:`compare`'s.

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
    rows: dict[str, dict[str, Any]] = {}
    kept: dict[str, evidence.PairedTest] = {}
    base = frame[baseline].to_numpy() > 0
    for arm in frame.columns:
        x = frame[arm].to_numpy() > 0
        w = wilson_interval(int(x.sum()), len(x), stats.confidence)
        row = {
            "hits": float(x.sum()),
            "n": float(len(x)),
            "rate": w.estimate,
            "low": w.low,
            "high": w.high,
        }
        if arm in declared:
            pp = paired_proportions(x, base, stats.confidence)
            kept[arm] = _keep(
                "hits", str(arm), baseline, frame, x, base, pp.difference, pp.mcnemar_p, stats
            )
            row |= {
                "both": pp.both,
                "only_arm": pp.only_a,
                "only_base": pp.only_b,
                "neither": pp.neither,
                "diff": pp.difference.estimate,
                "diff_low": pp.difference.low,
                "diff_high": pp.difference.high,
                "p": pp.mcnemar_p,
            }
        rows[arm] = row
    return _table(rows, kept, baseline, declared, stats.confidence, HIT_COLUMNS, ledger)


def paired_tests(
    per_query: PerQuery,
    pairs: Sequence[tuple[str, str]],
    stats: StatsSettings = DEFAULT_STATS,
    *,
    hits: bool = False,
    name: str = "",
    ledger: evidence.Ledger | None = None,
) -> pd.DataFrame:
    """Paired comparisons ``a − b`` for a declared family of arm pairs, Holm-adjusted.

    Each pair is compared on the queries both its arms score (they must be the
    same: a paired test), so pairs at different targets may rest on different
    questions (a question naming a whole document is not judged at sections).

    Parameters
    ----------
    per_query : mapping
        ``{arm: {query_id: score}}`` on the same queries.
    pairs : sequence of (str, str)
        The family, declared before the run: each ``(a, b)`` tests ``a − b``.
    stats : StatsSettings, optional
        Interval level and resampling settings (bootstrap, randomisation);
        :data:`~hierret.evaluation.stats.DEFAULT_STATS` by default.
    hits : bool, default False
        The scores are hits (``hit@k``: a score above 0 is a hit): each pair
        is compared as :func:`compare_hits` compares an arm with its baseline
        (Newcombe's paired interval, McNemar's exact ``p``), so any declared
        pair of arms is tested the same way, baseline or not.
    name : str, optional
        The family's name, kept with its evidence
        (:mod:`hierret.evaluation.stats.evidence`).
    ledger : Ledger, optional
        The study's ledger, which keeps the tests and their family; default: a
        ledger of their own. The tests as published are in ``attrs["tests"]``.

    Returns
    -------
    pandas.DataFrame
        One row per pair (index ``"a vs b"``): ``a``, ``b``, ``mean_a``,
        ``mean_b`` (hit rates for hits), ``diff`` with its paired interval
        (``diff_low``, ``diff_high``), ``p``, ``p_holm`` and ``test`` (the
        pair's test as published, as in :func:`compare`).

    Examples
    --------
    >>> scores = {"x": {"q1": 1.0, "q2": 0.5}, "y": {"q1": 0.5, "q2": 0.5}}
    >>> settings = StatsSettings(n_resamples=100)
    >>> float(paired_tests(scores, [("x", "y")], settings).loc["x vs y", "diff"])
    0.25
    >>> got = {"x": {"q1": 1.0, "q2": 1.0, "q3": 0.0}, "y": {"q1": 0.0, "q2": 1.0, "q3": 0.0}}
    >>> row = paired_tests(got, [("x", "y")], settings, hits=True).loc["x vs y"]
    >>> round(float(row["diff"]), 3), float(row["p"])  # McNemar: 1 question against 0
    (0.333, 1.0)
    """
    unknown = sorted({arm for pair in pairs for arm in pair} - set(per_query))
    if unknown:
        raise ValueError(f"pairs name unknown arms {unknown}; arms: {list(per_query)}")
    rows: dict[str, dict[str, Any]] = {}
    kept: dict[str, evidence.PairedTest] = {}
    sizes: set[int] = set()
    for a, b in pairs:  # each pair on its queries: targets may judge different questions
        frame = align({a: per_query[a], b: per_query[b]})
        x, y = frame[a].to_numpy(), frame[b].to_numpy()
        sizes.add(len(frame))
        if hits:
            pp = paired_proportions(x > 0, y > 0, stats.confidence)
            d, p = pp.difference, pp.mcnemar_p
            x, y = (x > 0).astype(float), (y > 0).astype(float)
        else:
            d = paired_bootstrap(x, y, **_resampling(stats), method="percentile")
            p = paired_randomization(x, y, n_resamples=stats.n_resamples, seed=stats.seed)
        pair = f"{a} vs {b}"
        kept[pair] = _keep("hits" if hits else "mean", a, b, frame, x, y, d, p, stats)
        rows[pair] = {
            "a": a,
            "b": b,
            "mean_a": float(np.mean(x)),
            "mean_b": float(np.mean(y)),
            "diff": d.estimate,
            "diff_low": d.low,
            "diff_high": d.high,
            "p": p,
        }
    adjusted, published = _adjust(kept, rows, ledger, name)  # a p drawn again is in rows too
    table = pd.DataFrame.from_dict(rows, orient="index")
    table["p_holm"] = pd.Series(adjusted, dtype=float)
    table[evidence.TEST_COLUMN] = pd.Series(
        published, dtype=object
    )  # rides with its row when reshaped
    table.attrs.update(confidence=stats.confidence, n=max(sizes, default=0), tests=published)
    return table


#: The column of a comparison table that holds each metric kind's per-arm value:
#: :func:`compare_hits`'s ``rate`` for a binary metric, :func:`compare`'s ``mean`` else.
SUMMARY: Mapping[MetricKind, str] = {"binary": "rate", "graded": "mean"}


def compare_metric(
    per_query: PerQuery,
    metric: str,
    baseline: str,
    family: Sequence[str] | None = None,
    stats: StatsSettings = DEFAULT_STATS,
    *,
    ledger: evidence.Ledger | None = None,
) -> pd.DataFrame:
    """Compare arms on ``metric`` as its kind says: :func:`compare_hits` or :func:`compare`.

    A binary metric (``hit@k``, :func:`hierret.evaluation.metrics.kind`) is
    compared as hits (a value above 0 is a hit), any other as means.

    Examples
    --------
    >>> scores = {"a": {"q1": 1.0, "q2": 0.0}, "b": {"q1": 1.0, "q2": 1.0}}
    >>> compare_metric(scores, "hit@1", "a", stats=StatsSettings(n_resamples=10))["rate"].tolist()
    [0.5, 1.0]
    """
    if is_binary(metric):
        hits = {a: {q: v > 0 for q, v in s.items()} for a, s in per_query.items()}
        return compare_hits(hits, baseline, family, stats, ledger=ledger)
    return compare(per_query, baseline, family, stats, ledger=ledger)
