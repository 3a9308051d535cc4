"""What a comparison of arms produced: runs, per-query scores, and their tables.

A :class:`Result` (made by :func:`hierret.study.experiment.run`, or by hand from
scores) keeps every arm's run and every per-query score (arm × target × metric ×
query) and renders the tables (:meth:`Result.table`, :meth:`Result.tests`), the
figures (:meth:`Result.plot`, :meth:`Result.difference_figure`, drawn from those
tables and scores by :mod:`hierret.publish.charts` and
:mod:`hierret.publish.figures`) and the record values (:meth:`Result.values`);
:func:`between` compares one arm across several results. The statistics are
:mod:`hierret.evaluation.stats.comparison`'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import pandas as pd

import hierret.evaluation.stats.evidence as evidence
import hierret.publish.charts as charts
import hierret.publish.figures as figures
from hierret.evaluation.metrics import is_binary, kind
from hierret.evaluation.stats.comparison import SUMMARY, align, compare_metric, paired_tests
from hierret.evaluation.stats.settings import DEFAULT_STATS, StatsSettings
from hierret.publish.record import key
from hierret.search.profile import Profile
from hierret.search.runs import Qrels, Run
from hierret.search.searcher import ProfileRun, Searcher
from hierret.structure.units import Level, Query
from hierret.study.judging import score

if TYPE_CHECKING:
    from hierret.publish.figures import Figure
    from hierret.structure.hierarchy import Hierarchy

__all__ = ["LEDGER", "TEST_COLUMNS", "Result", "between"]

#: The ledger every :class:`Result` keeps its tests in unless given its own: one per
#: process, a notebook's kernel being one study. A notebook hands it to
#: :func:`hierret.publish.record.publish` (``evidence=LEDGER``), which writes the
#: evidence of every published test from it; ``LEDGER.clear()`` starts a new study.
LEDGER = evidence.Ledger()

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
    "test",
    "target",
    "arm_a",
    "arm_b",
]


def _attach(ledger: evidence.Ledger, start: int, sources: Mapping[str, evidence.Judged]) -> None:
    """Attach to every test ``ledger`` kept from number ``start`` on the runs its arms were
    scored from (:meth:`hierret.evaluation.stats.evidence.Ledger.attach`), by the arm names the test
    was kept with; a test with an arm ``sources`` does not hold (an added arm) gets none."""
    for i, t in enumerate(ledger.kept()[start:], start):
        if t.a in sources and t.b in sources:
            ledger.attach(i, sources[t.a], sources[t.b])


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
    #: where its tests are kept (:data:`LEDGER` unless given)
    ledger: evidence.Ledger = field(default_factory=lambda: LEDGER, repr=False, compare=False)
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

        Means with bootstrap intervals (:func:`~hierret.evaluation.stats.comparison.compare`),
        or for binary metrics (``hit@k``) hit rates with Wilson intervals
        (:func:`~hierret.evaluation.stats.comparison.compare_hits`). Arms whose pair
        ``(arm, baseline)`` is in the family also get the paired difference
        with its interval, ``p`` and ``p_holm`` (Holm over those pairs at this
        target and metric); undeclared pairs are not tested.
        """
        key = ("table", target, metric)
        if key not in self._tables:
            self._check(target, metric)
            per_q = self.scores[target][metric]
            start = len(self.ledger.kept())
            table = compare_metric(
                per_q, metric, self.baseline, self._members(), self.stats, ledger=self.ledger
            )
            _attach(self.ledger, start, self.judged(target, metric))
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
                start = len(self.ledger.kept())
                table = paired_tests(
                    scores, pairs, self.stats, hits=is_binary(metric), name=name, ledger=self.ledger
                )
                _attach(self.ledger, start, {f"{arm}@{t}": j for t in chosen
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
        scores, rankings, judged = score(
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
            ledger=self.ledger,
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
        interval = "Wilson" if is_binary(metric) else "bootstrap"
        return figures.difference_figure(
            self.table(target, metric),
            pd.Series(scores[a], name=a, dtype=float),
            pd.Series(scores[b], name=b, dtype=float),
            metric=metric,
            target=target,
            level=f"{self.confidence:.0%} {interval}",
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
                value = SUMMARY[kind(metric)]
                for arm in table.index:
                    out[key(prefix, target, arm, metric)] = float(table.loc[arm, value])
                    for col in columns:
                        if col in table.columns and pd.notna(table.loc[arm, col]):
                            out[key(prefix, target, arm, metric, col)] = float(table.loc[arm, col])
                    out |= _carried(table.loc[arm], key(prefix, target, arm, metric, "diff"), out)
                out[key(prefix, target, "n")] = float(len(self.per_query(target, metric)))
        for metric in self.metrics:
            tests = self.tests(metric)
            for _, row in tests.iterrows():
                pair = (prefix, row["target"], row["arm_a"], "vs", row["arm_b"], metric)
                for col in ("diff", "diff_low", "diff_high", "p", "p_holm"):
                    out[key(*pair, col)] = float(row[col])
                out |= _carried(row, key(*pair, "diff"), out)
        return out


def _carried(row: pd.Series, name: str, values: Mapping[str, float]) -> dict[str, float]:
    """``{name: the difference as a Tested float}`` when ``values`` has ``name`` and the
    table's row holds its test; empty otherwise."""
    test = row.get(evidence.TEST_COLUMN)
    if isinstance(test, evidence.PairedTest) and name in values:
        return {name: evidence.Tested(values[name], test)}
    return {}


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
    start = len(first.ledger.kept())
    table = paired_tests(scores, pairs, first.stats, hits=is_binary(metric), ledger=first.ledger)
    sources = {f"{label}@{t}": r.judged(t, metric)[arm] for label, r in results.items()
               for t in chosen if arm in r.judged(t, metric)}  # fmt: skip
    _attach(first.ledger, start, sources)
    table["target"] = [t for t in chosen for _ in labels[1:]]
    table["run_a"] = [label for _ in chosen for label in labels[1:]]
    table["run_b"] = labels[0]
    table["arm_a"] = [f"{arm}-{label}" for label in table["run_a"]]
    table["arm_b"] = f"{arm}-{labels[0]}"
    return table[columns]
