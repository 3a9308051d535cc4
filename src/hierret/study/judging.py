"""Arms' runs judged at a target: lifted to its units, scored per question.

What :func:`hierret.study.experiment.run` and :meth:`hierret.study.result.Result.rejudge`
both do with a run once it is made: :func:`score` lifts each arm's run to every
target (each parent scored by its best child) and scores it against the
judgements there, on the questions judged under every arm; :func:`judge` does
the same for one run made outside them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from hierret.evaluation.metrics import evaluate
from hierret.evaluation.qrels import qrels_from_evidence
from hierret.search.lifting import lift
from hierret.search.profile import Profile
from hierret.search.runs import Qrels, Run
from hierret.search.searcher import ProfileRun, Searcher
from hierret.structure.units import Level, Query, Unit

__all__ = ["ORDER", "Resolved", "judge", "score", "unit_level"]

#: The levels, finest first: an arm is judged at its own level or a coarser one.
ORDER: dict[str, int] = {"passages": 0, "sections": 1, "documents": 2}
#: Each arm's searcher, profile and own ranking length (``None``: the run's).
Resolved = Mapping[str, tuple[Searcher, Profile, int | None]]


def unit_level(profile: Profile) -> Level:
    """The level of the units ``profile`` ranks (fused arms rank sections)."""
    return "sections" if profile.level == "fused" else profile.level


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
        (:func:`~hierret.search.lifting.lift`); ``None``: the run ranks the units.
    metrics : sequence of str

    Returns
    -------
    dict
        ``{metric: {query_id: value}}`` for the queries judged at the target.

    Examples
    --------
    >>> from hierret.structure.units import Unit
    >>> units = [Unit("d#s1", "d", "sections", 0, 5), Unit("d#s2", "d", "sections", 5, 9)]
    >>> q = [Query("q", "?", (("d", 6, 8),))]
    >>> judge({"q": [("d#p1", 0.9), ("d#p0", 0.5)]}, q, units,
    ...       {"d#p0": "d#s1", "d#p1": "d#s2"}, ["mrr"])
    {'mrr': {'q': 1.0}}
    """
    qrels = qrels_from_evidence(queries, list(units))
    ranked = lift(run, parents) if parents is not None else run
    return evaluate({q: ranked.get(q, []) for q in qrels}, qrels, metrics)


def score(
    resolved: Resolved,
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
            level = unit_level(profile)
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
