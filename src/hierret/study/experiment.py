"""Several arms on the same queries: one call that runs, judges, tests and renders.

What every notebook needs, so no notebook re-implements it.

:func:`run` is the declarative front: named arms (each a
:class:`~hierret.profile.Profile`, or an :class:`Arm` pairing a profile with
its own :class:`~hierret.search.Searcher` when arms differ by encoder or
chunking), the queries, the targets at which relevance is judged (an arm
ranking finer units is lifted to the target, each parent scored by its best
child), the metrics, a baseline and a family of comparisons declared before
the run. It returns a :class:`Result` that keeps every arm's run and every
per-query score (arm × target × metric × query) and renders the tables
(:meth:`Result.table`, :meth:`Result.tests`), the figures (:meth:`Result.plot`,
:meth:`Result.difference_figure`, drawn from those tables and scores by
:mod:`hierret.publish.charts` and :mod:`hierret.publish.figures`) and the record
values (:meth:`Result.values`).

The statistics underneath are :func:`compare` (per-query means with bootstrap
intervals, paired differences with bootstrap intervals and randomisation
p-values, Holm-adjusted over the declared family), :func:`compare_hits` (hit
rates: Wilson intervals, Newcombe's paired interval and McNemar's exact test)
and :func:`paired_tests` (any declared pairs).

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
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import pandas as pd

import hierret._clock as _clock
import hierret.publish.charts as charts
import hierret.publish.figures as figures
from hierret.evaluation.metrics import evaluate
from hierret.evaluation.qrels import qrels_from_evidence
from hierret.lifting import lift
from hierret.profile import Profile
from hierret.publish.record import key
from hierret.rerank.base import Reranker
from hierret.runs import Qrels, Run
from hierret.search import ProfileRun, Searcher
from hierret.stats import (
    DEFAULT_STATS,
    StatsSettings,
    evidence,
    mean_interval,
    paired_bootstrap,
    paired_proportions,
    paired_randomization,
    wilson_interval,
)
from hierret.units import Level, Query, Unit

if TYPE_CHECKING:
    from hierret.hierarchy import Hierarchy
    from hierret.publish.figures import Figure

__all__ = [
    "Arm",
    "Result",
    "align",
    "between",
    "compare",
    "compare_hits",
    "judge",
    "paired_tests",
    "run",
]

PerQuery = Mapping[str, Mapping[str, float]]
#: The columns of a table of tests (:meth:`Result.tests`, :func:`between`).
TEST_COLUMNS = [
    "a",
    "b",
    "mean_a",
    "mean_b",
    "diff",
    "diff_low",
    "diff_high",
    "p",
    "p_holm",
    "target",
    "arm_a",
    "arm_b",
]


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
    kept: Mapping[str, int], rows: Mapping[str, dict[str, Any]], name: str = ""
) -> dict[str, float]:
    """Holm over the kept tests as one family (:func:`hierret.stats.evidence.adjust`);
    a test drawn again near 0.05 gets its new ``p`` in ``rows``."""
    adjusted = dict(zip(kept, evidence.adjust(list(kept.values()), name), strict=True))
    for name, i in kept.items():
        rows[name]["p"] = evidence.kept()[i].p
    return adjusted


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
) -> int:
    """Keep one paired test's evidence (its questions, both arms' scores, its settings)."""
    return evidence.keep(
        evidence.PairedTest(
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
    )


def _attach(start: int, sources: Mapping[str, evidence.Judged]) -> None:
    """Attach to every test kept from number ``start`` on the runs its arms were scored
    from (:func:`hierret.stats.evidence.attach`), by the arm names the test was kept
    with; a test with an arm ``sources`` does not hold (an added arm) gets none."""
    for i, t in enumerate(evidence.kept()[start:], start):
        if t.a in sources and t.b in sources:
            evidence.attach(i, sources[t.a], sources[t.b])


def _table(
    rows: dict[str, dict[str, Any]],
    kept: Mapping[str, int],
    baseline: str,
    declared: Sequence[str],
    confidence: float,
    columns: tuple[str, ...],
) -> pd.DataFrame:
    """One row per arm, Holm-adjusted p-values over the declared family."""
    adjusted = _adjust(kept, rows)
    table = pd.DataFrame.from_dict(dict(rows), orient="index").reindex(columns=list(columns[:-1]))
    table["p_holm"] = pd.Series(adjusted, dtype=float)
    table.index.name = "arm"
    table.attrs.update(baseline=baseline, family=list(declared), confidence=confidence)
    return table


def _resampling(stats: StatsSettings) -> dict[str, Any]:
    """The bootstrap's keyword arguments from the settings."""
    return {"n_resamples": stats.n_resamples, "confidence": stats.confidence, "seed": stats.seed}


def compare(
    per_query: PerQuery,
    baseline: str,
    family: Sequence[str] | None = None,
    stats: StatsSettings = DEFAULT_STATS,
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
        :data:`~hierret.stats.DEFAULT_STATS` by default.

    Returns
    -------
    pandas.DataFrame
        One row per arm: ``n``, ``mean``, ``low``, ``high`` (bootstrap interval
        of the mean), and for family members ``diff``, ``diff_low``,
        ``diff_high`` (paired bootstrap), ``p`` (paired randomisation) and
        ``p_holm``: the columns :data:`MEAN_COLUMNS`, empty (NaN) for the arms
        not tested, whether or not any arm is.
    """
    frame = align(per_query)
    declared = _family(list(frame.columns), baseline, family)
    rows: dict[str, dict[str, Any]] = {}
    kept: dict[str, int] = {}
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
    return _table(rows, kept, baseline, declared, stats.confidence, MEAN_COLUMNS)


def compare_hits(
    hits: Mapping[str, Mapping[str, bool]],
    baseline: str,
    family: Sequence[str] | None = None,
    stats: StatsSettings = DEFAULT_STATS,
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
    rows: dict[str, dict[str, Any]] = {}
    kept: dict[str, int] = {}
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
    return _table(rows, kept, baseline, declared, stats.confidence, HIT_COLUMNS)


def paired_tests(
    per_query: PerQuery,
    pairs: Sequence[tuple[str, str]],
    stats: StatsSettings = DEFAULT_STATS,
    *,
    hits: bool = False,
    name: str = "",
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
        :data:`~hierret.stats.DEFAULT_STATS` by default.
    hits : bool, default False
        The scores are hits (``hit@k``: a score above 0 is a hit): each pair
        is compared as :func:`compare_hits` compares an arm with its baseline
        (Newcombe's paired interval, McNemar's exact ``p``), so any declared
        pair of arms is tested the same way, baseline or not.
    name : str, optional
        The family's name, kept with its evidence
        (:mod:`hierret.stats.evidence`).

    Returns
    -------
    pandas.DataFrame
        One row per pair (index ``"a vs b"``): ``a``, ``b``, ``mean_a``,
        ``mean_b`` (hit rates for hits), ``diff`` with its paired interval
        (``diff_low``, ``diff_high``), ``p`` and ``p_holm``.

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
    kept: dict[str, int] = {}
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
    adjusted = _adjust(kept, rows, name)  # a p drawn again near 0.05 is in rows too
    table = pd.DataFrame.from_dict(rows, orient="index")
    table["p_holm"] = pd.Series(adjusted, dtype=float)
    table.attrs.update(confidence=stats.confidence, n=max(sizes, default=0))
    return table


# --- the declarative comparison ----------------------------------------------------------

_ORDER: dict[str, int] = {"passages": 0, "sections": 1, "documents": 2}


@dataclass(frozen=True)
class Arm:
    """One arm: a profile, and the searcher that runs it when not the run's own.

    Parameters
    ----------
    profile : Profile
    searcher : Searcher, optional
        Its own hierarchy and encoder (arms differing by encoder or chunking);
        ``None``: the ``searcher`` given to :func:`run`.
    k : int, optional
        Length of this arm's rankings before lifting (default: :func:`run`'s
        ``k``); a finer arm lifted to a coarse target may need more units.
    """

    profile: Profile
    searcher: Searcher | None = None
    k: int | None = None


def _arm(
    name: str, value: object, searcher: Searcher | None
) -> tuple[Searcher, Profile, int | None]:
    if isinstance(value, Profile):
        value = Arm(value)
    elif isinstance(value, tuple) and len(value) == 2:
        value = Arm(value[1], value[0])
    if not isinstance(value, Arm) or not isinstance(value.profile, Profile):
        raise TypeError(
            f"arm {name!r} must be a Profile, an Arm or a (Searcher, Profile) pair, "
            f"got {type(value).__name__}"
        )
    own = value.searcher or searcher
    if own is None:
        raise ValueError(
            f"arm {name!r} has no searcher: pass searcher= to run(), or give "
            "the arm as Arm(profile, searcher)"
        )
    return own, value.profile, value.k


def _unit_level(profile: Profile) -> Level:
    return "sections" if profile.level == "fused" else profile.level


@dataclass
class Result:
    """What :func:`run` produced: runs, per-query scores, and their tables.

    Attributes
    ----------
    traces : dict[str, ProfileRun]
        Each arm's run with its stages (first stage, reranked, final).
    scores : dict
        ``scores[target][metric][arm][query_id]``: every per-query value, on
        the queries judged at that target under every arm.
    baseline : str
    family : list of (str, str)
        The pairs declared before the run; each ``(a, b)`` tests ``a − b``.
    targets, metrics : list of str
    stats : StatsSettings
        The statistics' settings (confidence, resamples, seed).
    queries : dict[str, Query]
        The questions by id (text and evidence), as :func:`run` was given them.
    rankings : dict
        ``rankings[target][arm]``: each arm's run at the target (lifted when
        finer), on the queries scored there; what every score was computed from.
    judgements : dict
        ``judgements[target][arm]``: the qrels each arm was judged by there.
    hierarchies : dict[str, Hierarchy]
        Each arm's hierarchy (its searcher's), to read its units' text and
        paths. These last four are filled by :func:`run`; a result built by
        hand may leave them empty (:mod:`hierret.study.casebook` needs them).
    added : list of str
        Arms scored outside the searcher (:meth:`add`), after the traced ones.
    added_runs : dict
        ``added_runs[target][arm]``: the run and qrels of an added arm, when
        :meth:`add` was given them; apart from :attr:`rankings`, whose arms
        have a hierarchy to show them with (:mod:`hierret.study.casebook`).
    """

    traces: dict[str, ProfileRun]
    scores: dict[str, dict[str, dict[str, dict[str, float]]]]
    baseline: str
    family: list[tuple[str, str]]
    targets: list[str]
    metrics: list[str]
    stats: StatsSettings = DEFAULT_STATS
    queries: dict[str, Query] = field(default_factory=dict, repr=False)
    rankings: dict[str, dict[str, Run]] = field(default_factory=dict, repr=False)
    judgements: dict[str, dict[str, Qrels]] = field(default_factory=dict, repr=False)
    hierarchies: dict[str, Hierarchy] = field(default_factory=dict, repr=False)
    added: list[str] = field(default_factory=list)
    added_runs: dict[str, dict[str, tuple[Run, Qrels]]] = field(default_factory=dict, repr=False)
    _tables: dict[tuple[str, ...], pd.DataFrame] = field(default_factory=dict, repr=False)
    #: what :func:`run` judged with: the arms' searchers, the queries, the qrels given
    _judging: (
        tuple[dict[str, tuple[Searcher, Profile, int | None]], list[Query], dict[str, Qrels]] | None
    ) = field(default=None, repr=False)

    @property
    def confidence(self) -> float:
        """The level of every interval of this result (``stats.confidence``)."""
        return self.stats.confidence

    @property
    def arms(self) -> list[str]:
        """Arm names, in the order given (then those :meth:`add` added)."""
        if not self.traces and self.scores:  # a result built from scores alone
            return list(next(iter(next(iter(self.scores.values())).values())))
        return list(self.traces) + [a for a in self.added if a not in self.traces]

    def add(
        self,
        arm: str,
        scores: Mapping[str, Mapping[str, float]],
        metric: str | None = None,
        rankings: Mapping[str, tuple[Run, Qrels]] | None = None,
    ) -> None:
        """Add an arm scored outside the searcher: a merged, routed or tuned run.

        Its per-query scores then enter every table and test like a traced
        arm's (declare its pairs in a family given to :meth:`tests`).

        Parameters
        ----------
        arm : str
            A new arm name.
        scores : mapping
            ``{target: {query_id: value}}`` at every target of the result, on
            at least the queries judged there (others are dropped).
        metric : str, optional
            Which metric the values are (default: the first).
        rankings : mapping, optional
            ``{target: (run, qrels)}``: the arm's run at the target and the
            qrels that gave ``scores`` (kept in :attr:`added_runs`, so that
            its tests carry them, :meth:`judged`); a target not named keeps none.

        Raises
        ------
        ValueError
            A known arm, an unknown metric, a missing target or query.

        Examples
        --------
        >>> r = Result({}, {"sections": {"mrr": {"a": {"q": 1.0}}}}, "a", [], ["sections"],
        ...            ["mrr"], StatsSettings(n_resamples=10))
        >>> r.add("b", {"sections": {"q": 0.5, "other": 1.0}})
        >>> r.arms, r.per_query("sections", "mrr").loc["q"].tolist()
        (['a', 'b'], [1.0, 0.5])
        """
        metric = metric or self.metrics[0]
        if arm in self.arms:
            raise ValueError(f"arm {arm!r} is already in the result: give the new arm a new name")
        for target in self.targets:
            self._check(target, metric)
            wanted = set(next(iter(self.scores[target][metric].values()), {}))
            given = scores.get(target, {})
            lost = sorted(wanted - set(given))
            if target not in scores or lost:
                raise ValueError(
                    f"arm {arm!r} does not score every query judged at {target!r} "
                    f"(missing {lost[:3]}); score it at every target"
                )
            self.scores[target][metric][arm] = {q: float(given[q]) for q in sorted(wanted)}
            if rankings is not None and target in rankings:
                run, qrels = rankings[target]
                self.added_runs.setdefault(target, {})[arm] = (
                    {q: run.get(q, []) for q in wanted},
                    {q: qrels[q] for q in wanted},
                )
        self.added.append(arm)
        self._tables.clear()

    @property
    def runs(self) -> dict[str, Run]:
        """Each arm's final run, at its own level (before lifting)."""
        return {arm: t.run for arm, t in self.traces.items()}

    def _check(self, target: str, metric: str) -> None:
        if target not in self.targets:
            raise ValueError(f"unknown target {target!r}: this result has {self.targets}")
        if metric not in self.metrics:
            raise ValueError(f"unknown metric {metric!r}: this result has {self.metrics}")

    def per_query(self, target: str, metric: str) -> pd.DataFrame:
        """Queries as rows, arms as columns: the values every table is computed from."""
        self._check(target, metric)
        return align(self.scores[target][metric])

    def frame(self) -> pd.DataFrame:
        """Every per-query value in one long table: arm, target, metric, query, value."""
        rows = [
            (arm, t, m, q, v)
            for t, by_metric in self.scores.items()
            for m, by_arm in by_metric.items()
            for arm, per_q in by_arm.items()
            for q, v in per_q.items()
        ]
        return pd.DataFrame(rows, columns=["arm", "target", "metric", "query", "value"])

    def _members(self) -> list[str]:
        return [a for a, b in self.family if b == self.baseline]

    def table(self, target: str, metric: str) -> pd.DataFrame:
        """Every arm against the baseline at one target and metric.

        Means with bootstrap intervals (:func:`compare`), or for ``hit@k``
        metrics hit rates with Wilson intervals (:func:`compare_hits`). Arms
        whose pair ``(arm, baseline)`` is in the family also get the paired
        difference with its interval, ``p`` and ``p_holm`` (Holm over those
        pairs at this target and metric); undeclared pairs are not tested.
        """
        key = ("table", target, metric)
        if key not in self._tables:
            self._check(target, metric)
            per_q = self.scores[target][metric]
            start = len(evidence.kept())
            if metric.startswith("hit@"):
                hits = {a: {q: v > 0 for q, v in s.items()} for a, s in per_q.items()}
                table = compare_hits(hits, self.baseline, self._members(), self.stats)
            else:
                table = compare(per_q, self.baseline, self._members(), self.stats)
            _attach(start, self.judged(target, metric))
            self._tables[key] = table
        return self._tables[key]

    def tests(
        self,
        metric: str,
        targets: Sequence[str] | None = None,
        family: Sequence[tuple[str, str]] | None = None,
        name: str = "",
    ) -> pd.DataFrame:
        """Every declared pair at every target, Holm-adjusted over all of them together.

        :func:`paired_tests` on per-query scores keyed ``"arm@target"``; rows
        ``"a@target vs b@target"`` with ``target`` and the pair's ``a``/``b``
        arm names in columns ``arm_a``, ``arm_b``. ``family`` tests another
        family of pairs declared before the run (its own Holm adjustment)
        instead of :attr:`family`, e.g. a second question asked of the same arms;
        ``name`` names it in the published evidence. Any pair of arms can be
        declared, the baseline in it or not; ``hit@k`` metrics are tested as
        :meth:`table` tests them (Newcombe's interval, McNemar's exact ``p``),
        other metrics with the paired bootstrap and randomisation test.
        """
        chosen = list(targets) if targets is not None else self.targets
        pairs_ = [(a, b) for a, b in (self.family if family is None else family)]
        unknown = sorted({a for pair in pairs_ for a in pair} - set(self.arms))
        if unknown:
            raise ValueError(f"family arms {unknown} are not arms of the result: {self.arms}")
        key = ("tests", metric, name, *chosen, *(f"{a} vs {b}" for a, b in pairs_))
        if key not in self._tables:
            for t in chosen:
                self._check(t, metric)
            scores = {
                f"{arm}@{t}": self.scores[t][metric][arm] for t in chosen for arm in self.arms
            }
            pairs = [(f"{a}@{t}", f"{b}@{t}") for t in chosen for a, b in pairs_]
            if not pairs:  # nothing declared, nothing tested
                table = pd.DataFrame(columns=TEST_COLUMNS)
            else:
                hits = metric.startswith("hit@")
                start = len(evidence.kept())
                table = paired_tests(scores, pairs, self.stats, hits=hits, name=name)
                _attach(start, {f"{arm}@{t}": j for t in chosen
                                for arm, j in self.judged(t, metric).items()})  # fmt: skip
                table["target"] = [t for t in chosen for _ in pairs_]
                table["arm_a"] = [a for _ in chosen for a, _ in pairs_]
                table["arm_b"] = [b for _ in chosen for _, b in pairs_]
            self._tables[key] = table
        return self._tables[key]

    def judged(self, target: str, metric: str) -> dict[str, evidence.Judged]:
        """Each arm's run at ``target`` with the qrels that scored it, for ``metric``.

        What the per-query scores of :meth:`per_query` were computed from (an
        arm ranking finer units, lifted to the target; an added arm's from
        :attr:`added_runs`); arms without rankings there (added by :meth:`add`
        without them, or a result built by hand) are left out.

        Examples
        --------
        >>> r = Result({}, {"sections": {"mrr": {"a": {"q": 1.0}}}}, "a", [], ["sections"],
        ...            ["mrr"], rankings={"sections": {"a": {"q": [("s1", 0.5)]}}},
        ...            judgements={"sections": {"a": {"q": {"s1": 1}}}})
        >>> r.judged("sections", "mrr")["a"].run
        {'q': [('s1', 0.5)]}
        """
        self._check(target, metric)
        runs, qrels = self.rankings.get(target, {}), self.judgements.get(target, {})
        found = {a: (runs[a], qrels[a]) for a in self.arms if a in runs and a in qrels}
        found |= self.added_runs.get(target, {})
        return {arm: evidence.Judged(run, judged, metric) for arm, (run, judged) in found.items()}

    def rejudge(self, qrels: Mapping[str, Qrels]) -> Result:
        """The same runs judged with other judgements: every score and table recomputed.

        Nothing is searched again: each arm's run is lifted and scored as
        :func:`run` did, with ``qrels`` replacing the judgements of the targets
        it names (other targets are judged as before). For a sensitivity
        analysis: what the arms and the declared comparisons would be if the
        gold set held these judgements.

        Parameters
        ----------
        qrels : mapping of target to Qrels
            The new judgements, by target (e.g. the study's qrels with further
            relevant units added, :func:`hierret.study.audit.add_relevant`).

        Returns
        -------
        Result
            Same arms, runs, family and settings; new ``scores``.

        Raises
        ------
        ValueError
            This result was not made by :func:`run` (it keeps no searchers), or
            ``qrels`` names a target the result was not judged at.
        """
        if self._judging is None:
            raise ValueError(
                "this Result keeps no searchers to lift its runs with: rejudge "
                "works on results made by experiment.run"
            )
        unknown = sorted(set(qrels) - set(self.targets))
        if unknown:
            raise ValueError(
                f"qrels name targets {unknown} this result was not judged at: {self.targets}"
            )
        resolved, queries, given = self._judging
        given = {**given, **qrels}
        targets = cast(list[Level], self.targets)
        scores, rankings, judged = _score(
            resolved, self.traces, queries, targets, self.metrics, given
        )
        return Result(
            self.traces,
            scores,
            self.baseline,
            self.family,
            self.targets,
            self.metrics,
            self.stats,
            self.queries,
            rankings,
            judged,
            self.hierarchies,
            _judging=(resolved, queries, given),
        )

    def wins(self, metric: str, pairs: Sequence[tuple[str, str]]) -> pd.DataFrame:
        """How many questions each ``a`` wins, ties and loses against ``b``, at every target.

        Rows are indexed by ``target``, ``a`` and ``b``.

        Examples
        --------
        >>> r = Result({}, {"sections": {"mrr": {"a": {"q1": 1.0, "q2": 0.5, "q3": 0.0},
        ...                                      "b": {"q1": 0.5, "q2": 0.5, "q3": 1.0}}}},
        ...            "a", [], ["sections"], ["mrr"])
        >>> r.wins("mrr", [("a", "b")]).reset_index().to_dict("records")
        [{'target': 'sections', 'a': 'a', 'b': 'b', 'wins': 1, 'ties': 1, 'losses': 1}]
        """
        rows = []
        for target in self.targets:
            frame = self.per_query(target, metric)
            for a, b in pairs:
                d = np.sign(frame[a] - frame[b])
                rows.append(
                    {
                        "target": target,
                        "a": a,
                        "b": b,
                        "wins": int((d > 0).sum()),
                        "ties": int((d == 0).sum()),
                        "losses": int((d < 0).sum()),
                    }
                )
        return pd.DataFrame(rows).set_index(["target", "a", "b"])

    def plot(self, metric: str, targets: Sequence[str] | None = None) -> Figure:
        """Each arm's mean (or hit rate) with its interval, one panel per target, stacked.

        Drawn by :func:`hierret.publish.charts.arms_figure` from :meth:`table`.
        """
        chosen = list(targets) if targets is not None else self.targets
        tables = {
            f"{target} target": self.table(target, metric).rename(columns={"rate": "mean"})
            for target in chosen
        }
        return charts.arms_figure(tables, xlabel=metric, baseline=self.baseline)

    def difference_figure(self, target: str, metric: str, pair: tuple[str, str]) -> Figure:
        """The arms with their intervals, above the per-question differences of one pair.

        Drawn by :func:`hierret.publish.figures.difference_figure` from
        :meth:`table` and the pair's per-question scores.

        Parameters
        ----------
        target, metric : str
            Which table: one of the result's targets and metrics.
        pair : (str, str)
            Arms ``(a, b)``; the lower panel shows ``a − b`` per question,
            sorted (green: ``a`` better, red: worse).

        Returns
        -------
        Figure
        """
        a, b = pair
        scores = self.scores[target][metric]
        kind = "Wilson" if metric.startswith("hit@") else "bootstrap"
        return figures.difference_figure(
            self.table(target, metric),
            pd.Series(scores[a], name=a, dtype=float),
            pd.Series(scores[b], name=b, dtype=float),
            metric=metric,
            target=target,
            level=f"{self.confidence:.0%} {kind}",
            baseline=self.baseline,
        )

    def values(self, prefix: str = "") -> dict[str, float]:
        """Flat record values for :func:`hierret.publish.report.write_results`, with stable keys.

        Keys are :func:`hierret.publish.record.key` joins of ``prefix``, target, arm, metric and a
        column: for every target, metric and arm, ``…_{arm}_{metric}`` (the
        mean, or the hit rate for ``hit@k``), ``…_low``, ``…_high``; for family
        members of :meth:`table`, ``…_diff``, ``…_diff_low``, ``…_diff_high``,
        ``…_p``, ``…_p_holm``; for ``hit@k`` also ``…_hits``; for every
        declared pair in :meth:`tests` (all targets together),
        ``{prefix}_{target}_{a}_vs_{b}_{metric}_{column}`` with the same
        columns; and ``{prefix}_{target}_n`` the number of queries judged.

        Examples
        --------
        >>> r = Result({}, {"sections": {"mrr": {"a": {"q": 1.0}, "b": {"q": 0.5}}}}, "a", [],
        ...            ["sections"], ["mrr"], StatsSettings(n_resamples=10))
        >>> sorted(r.values("dr9"))[:3]
        ['dr9_sections_a_mrr', 'dr9_sections_a_mrr_high', 'dr9_sections_a_mrr_low']
        """
        out: dict[str, float] = {}
        columns = ("low", "high", "diff", "diff_low", "diff_high", "p", "p_holm", "hits")
        for target in self.targets:
            for metric in self.metrics:
                table = self.table(target, metric)
                value = "rate" if metric.startswith("hit@") else "mean"
                for arm in table.index:
                    out[key(prefix, target, arm, metric)] = float(table.loc[arm, value])
                    for col in columns:
                        if col in table.columns and pd.notna(table.loc[arm, col]):
                            out[key(prefix, target, arm, metric, col)] = float(table.loc[arm, col])
                out[key(prefix, target, "n")] = float(len(self.per_query(target, metric)))
        for metric in self.metrics:
            tests = self.tests(metric)
            for _, row in tests.iterrows():
                for col in ("diff", "diff_low", "diff_high", "p", "p_holm"):
                    name = key(prefix, row["target"], row["arm_a"], "vs", row["arm_b"], metric, col)
                    out[name] = float(row[col])
        return out


def judge(
    run: Run,
    queries: Sequence[Query],
    units: Sequence[Unit],
    parents: Mapping[str, str] | None = None,
    metrics: Sequence[str] = ("ndcg@10",),
) -> dict[str, dict[str, float]]:
    """Per-query scores of a run computed outside :func:`run`, at one target.

    Parameters
    ----------
    run : Run
        Rankings, of the target's units or of finer ones.
    queries : sequence of Query
        Their evidence spans judge the target's ``units``.
    units : sequence of Unit
        The target level's units (``hierarchy.units(target)``).
    parents : mapping, optional
        Each ranked unit's id to its target unit's id, to lift the run
        (:func:`~hierret.lifting.lift`); ``None``: the run ranks the units.
    metrics : sequence of str

    Returns
    -------
    dict
        ``{metric: {query_id: value}}`` for the queries judged at the target.

    Examples
    --------
    >>> from hierret.units import Unit
    >>> units = [Unit("d#s1", "d", "sections", 0, 5), Unit("d#s2", "d", "sections", 5, 9)]
    >>> q = [Query("q", "?", (("d", 6, 8),))]
    >>> judge({"q": [("d#p1", 0.9), ("d#p0", 0.5)]}, q, units,
    ...       {"d#p0": "d#s1", "d#p1": "d#s2"}, ["mrr"])
    {'mrr': {'q': 1.0}}
    """
    qrels = qrels_from_evidence(queries, list(units))
    ranked = lift(run, parents) if parents is not None else run
    return evaluate({q: ranked.get(q, []) for q in qrels}, qrels, metrics)


def _check_names(
    arms: Sequence[str], baseline: str, family: Sequence[tuple[str, str]]
) -> list[tuple[str, str]]:
    if baseline not in arms:
        raise ValueError(f"baseline {baseline!r} is not an arm; arms: {list(arms)}")
    pairs = [tuple(pair) for pair in family]
    bad = [pair for pair in pairs if len(pair) != 2 or pair[0] == pair[1]]
    if bad:
        raise ValueError(f"family pairs must be (arm, other arm), got {bad}")
    unknown = sorted({a for pair in pairs for a in pair} - set(arms))
    if unknown:
        raise ValueError(f"family names unknown arms {unknown}; arms: {list(arms)}")
    return [(a, b) for a, b in pairs]


def between(
    results: Mapping[Any, Result], arm: str, metric: str, targets: Sequence[str] | None = None
) -> pd.DataFrame:
    """One arm of several runs on the same questions, each run against the first.

    Some settings change the whole run rather than one arm (the passage size
    rebuilds the hierarchy, so each size is its own :func:`run`). When the
    targets' units do not depend on the setting (sections and documents do
    not depend on the passage size), the same arm can be compared across
    runs, question by question: every later run against the first, at every
    target, as one family declared by the call and Holm-adjusted together.

    Parameters
    ----------
    results : mapping of label to Result
        The runs, by label (e.g. the passage size); the first is the baseline.
    arm : str
        An arm of every run.
    metric : str
    targets : sequence of str, optional
        Default: the first run's targets.

    Returns
    -------
    pandas.DataFrame
        :func:`paired_tests` rows ``"label@target vs first@target"``, with
        columns ``target``, ``arm_a`` and ``arm_b`` (``"arm-label"``, as
        :meth:`Result.tests` names its arms) and ``run_a`` and ``run_b`` (the
        labels); empty, with those columns, when there is one run.

    Raises
    ------
    ValueError
        No runs, an arm or target missing from a run, or runs whose questions
        at a target differ (not paired).

    Examples
    --------
    >>> small = Result({}, {"sections": {"mrr": {"chunk": {"q1": 1.0, "q2": 0.5}}}}, "chunk",
    ...                [], ["sections"], ["mrr"], StatsSettings(n_resamples=100))
    >>> large = Result({}, {"sections": {"mrr": {"chunk": {"q1": 0.5, "q2": 0.5}}}}, "chunk",
    ...                [], ["sections"], ["mrr"], StatsSettings(n_resamples=100))
    >>> t = between({900: small, 1800: large}, "chunk", "mrr")
    >>> t.index.tolist(), t[["diff", "run_a", "run_b"]].to_dict("records")
    (['1800@sections vs 900@sections'], [{'diff': -0.25, 'run_a': 1800, 'run_b': 900}])
    """
    if not results:
        raise ValueError("between() needs at least one run")
    labels = list(results)
    first = results[labels[0]]
    chosen = list(targets) if targets is not None else first.targets
    columns = [*TEST_COLUMNS, "run_a", "run_b"]
    scores: dict[str, Mapping[str, float]] = {}
    for label, r in results.items():
        for t in chosen:
            r._check(t, metric)
            if arm not in r.scores[t][metric]:
                raise ValueError(f"run {label!r} has no arm {arm!r}: {r.arms}")
            scores[f"{label}@{t}"] = r.scores[t][metric][arm]
            base = first.scores[t][metric][arm]
            if set(scores[f"{label}@{t}"]) != set(base):
                raise ValueError(
                    f"runs {label!r} and {labels[0]!r} judge different questions "
                    f"at {t!r}: not a paired comparison"
                )
    pairs = [(f"{label}@{t}", f"{labels[0]}@{t}") for t in chosen for label in labels[1:]]
    if not pairs:
        return pd.DataFrame(columns=columns)
    start = len(evidence.kept())
    table = paired_tests(scores, pairs, first.stats, hits=metric.startswith("hit@"))
    _attach(start, {f"{label}@{t}": r.judged(t, metric)[arm] for label, r in results.items()
                    for t in chosen if arm in r.judged(t, metric)})  # fmt: skip
    table["target"] = [t for t in chosen for _ in labels[1:]]
    table["run_a"] = [label for _ in chosen for label in labels[1:]]
    table["run_b"] = labels[0]
    table["arm_a"] = [f"{arm}-{label}" for label in table["run_a"]]
    table["arm_b"] = f"{arm}-{labels[0]}"
    return table[columns]


def run(
    arms: Mapping[str, Profile | Arm | tuple[Searcher, Profile]],
    queries: Sequence[Query],
    *,
    searcher: Searcher | None = None,
    targets: Sequence[Level] = ("passages",),
    metrics: Sequence[str] = ("ndcg@10",),
    baseline: str | None = None,
    family: Sequence[tuple[str, str]] = (),
    qrels: Mapping[str, Qrels] | None = None,
    k: int = 100,
    rerankers: Mapping[str, Reranker] | None = None,
    stats: StatsSettings = DEFAULT_STATS,
) -> Result:
    """Run named arms on the same queries, judge them at each target, keep every score.

    Parameters
    ----------
    arms : mapping of str to Profile, Arm or (Searcher, Profile)
        The arms, by name (table rows, in this order).
    queries : sequence of Query
        The questions; their evidence spans judge them unless ``qrels`` does.
    searcher : Searcher, optional
        Runs the arms given as a bare Profile.
    targets : sequence of {"passages", "sections", "documents"}
        Levels at which relevance is judged. An arm ranking finer units is
        lifted to the target (each parent scored by its best child, with its
        own hierarchy's ``parents``); an arm ranking coarser units than a
        target is an error. Fused arms rank sections.
    metrics : sequence of str
        Metric names (:func:`~hierret.evaluation.evaluate`): ``ndcg@10``,
        ``recall@10``, ``mrr``, ``hit@1``, …
    baseline : str, optional
        The arm every table compares with (default: the first arm).
    family : sequence of (str, str)
        The comparisons declared before the run: each ``(a, b)`` tests
        ``a − b``. Only declared pairs are tested (Holm-adjusted within the
        family); an undeclared pair is not.
    qrels : mapping of target to Qrels, optional
        Judgements given explicitly (e.g. corpora judged at documents only);
        targets not in it are judged from the queries' evidence spans against
        each arm's own hierarchy (:func:`~hierret.evaluation.qrels_from_evidence`).
    k : int, default 100
        Length of each arm's rankings before lifting (an :class:`Arm` may set
        its own).
    rerankers : mapping of str to Reranker, optional
        Rerankers by the names profiles use.
    stats : StatsSettings, optional
        Interval level and resampling settings (bootstrap, randomisation);
        :data:`~hierret.stats.DEFAULT_STATS` by default.

    Returns
    -------
    Result
        At each target, only the queries judged under every arm are scored
        (the same queries for every arm, as paired tests need).

    Raises
    ------
    ValueError
        An unknown baseline or family arm, a target that is not a level, an
        arm coarser than a target, no query judged at a target.
    TypeError
        An arm that is not a Profile, an Arm or a (Searcher, Profile) pair.

    Examples
    --------
    >>> from hierret.encoders import HashEncoder
    >>> from hierret.hierarchy import build_hierarchy
    >>> from hierret.units import Corpus, Document
    >>> text = "Cats\\n====\\n\\nCats purr.\\n\\nDogs\\n====\\n\\nDogs bark.\\n"
    >>> h = build_hierarchy(Corpus("pets", [Document("d", "Pets", text)]))
    >>> q = [Query("q1", "why do dogs bark", (("d", 28, 38),)),
    ...      Query("q2", "do cats purr", (("d", 12, 22),))]
    >>> result = run({"passages": Profile(), "sections": Profile(level="sections")}, q,
    ...              searcher=Searcher(h, HashEncoder(dimension=16)), targets=["sections"],
    ...              metrics=["hit@1"], family=[("sections", "passages")])
    >>> result.table("sections", "hit@1")[["hits", "n"]].to_dict("index")
    {'passages': {'hits': 1.0, 'n': 2.0}, 'sections': {'hits': 2.0, 'n': 2.0}}
    """
    resolved = {name: _arm(name, value, searcher) for name, value in arms.items()}
    names = list(resolved)
    if not names:
        raise ValueError("no arms: give at least one named Profile")
    base = baseline if baseline is not None else names[0]
    pairs = _check_names(names, base, family)
    for target in targets:
        if target not in _ORDER:
            raise ValueError(f"unknown target {target!r}: use one of {tuple(_ORDER)}")
    for name, (_, profile, _) in resolved.items():
        coarse = [t for t in targets if _ORDER[_unit_level(profile)] > _ORDER[t]]
        if coarse:
            raise ValueError(
                f"arm {name!r} ranks {_unit_level(profile)}, coarser than the "
                f"target {coarse[0]!r}: it cannot be judged there (rank a finer "
                "level, or drop the target)"
            )
    traces = {
        name: s.trace(queries, p, own_k or k, rerankers) for name, (s, p, own_k) in resolved.items()
    }
    with _clock.stage("evaluate"):
        scores, rankings, judged = _score(
            resolved, traces, queries, targets, metrics, dict(qrels or {})
        )
    return Result(
        traces,
        scores,
        base,
        pairs,
        list(targets),
        list(metrics),
        stats,
        {q.id: q for q in queries},
        rankings,
        judged,
        {name: s.hierarchy for name, (s, _, _) in resolved.items()},
        _judging=(resolved, list(queries), dict(qrels or {})),
    )


def _score(
    resolved: Mapping[str, tuple[Searcher, Profile, int | None]],
    traces: Mapping[str, ProfileRun],
    queries: Sequence[Query],
    targets: Sequence[Level],
    metrics: Sequence[str],
    given: Mapping[str, Qrels],
) -> tuple[
    dict[str, dict[str, dict[str, dict[str, float]]]],
    dict[str, dict[str, Run]],
    dict[str, dict[str, Qrels]],
]:
    """Every arm's run judged at every target: ``scores[target][metric][arm][query]``,
    with the rankings and judgements they were computed from (:attr:`Result.rankings`)."""
    wanted = {q.id for q in queries}
    scores: dict[str, dict[str, dict[str, dict[str, float]]]] = {}
    rankings: dict[str, dict[str, Run]] = {t: {} for t in targets}
    judgements: dict[str, dict[str, Qrels]] = {t: {} for t in targets}
    for target in targets:
        judged: dict[str, Qrels] = {}
        for name, (s, _, _) in resolved.items():
            raw = given.get(target)
            if raw is None:
                raw = qrels_from_evidence(queries, s.hierarchy.units(target))
            judged[name] = {q: g for q, g in raw.items() if q in wanted}
        common = set.intersection(*(set(j) for j in judged.values()))
        if not common:
            raise ValueError(f"no query is judged at the {target!r} target under every arm")
        by_metric: dict[str, dict[str, dict[str, float]]] = {m: {} for m in metrics}
        for name, (s, profile, _) in resolved.items():
            level = _unit_level(profile)
            ranked = traces[name].run
            if level != target:
                ranked = lift(ranked, s.hierarchy.parents(level, target))
            qr = {q: g for q, g in judged[name].items() if q in common}
            ranked = {q: r for q, r in ranked.items() if q in common}
            rankings[target][name], judgements[target][name] = ranked, qr
            for m, per_q in evaluate(ranked, qr, metrics).items():
                by_metric[m][name] = per_q
        scores[target] = by_metric
    return scores, rankings, judgements
