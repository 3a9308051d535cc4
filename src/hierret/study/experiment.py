"""Several arms on the same queries: one call that runs, judges, tests and renders.

What every notebook needs, so no notebook re-implements it.

:func:`run` is the declarative front: named arms (each a
:class:`~hierret.search.profile.Profile`, or an :class:`Arm` pairing a profile with
its own :class:`~hierret.search.searcher.Searcher` when arms differ by encoder or
chunking), the queries, the targets at which relevance is judged (an arm
ranking finer units is lifted to the target, each parent scored by its best
child, :mod:`hierret.study.judging`), the metrics, a baseline and a family of
comparisons declared before the run. It returns a
:class:`~hierret.study.result.Result` that keeps every arm's run and every
per-query score and renders the tables, figures and record values.

The statistics underneath are :mod:`hierret.evaluation.stats.comparison`'s
(:func:`compare`, :func:`compare_hits`, :func:`paired_tests`); this module
re-exports them, with :class:`~hierret.study.result.Result`,
:func:`~hierret.study.result.between` and :func:`~hierret.study.judging.judge`,
under the names notebooks use.

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
from dataclasses import dataclass

import hierret._clock as _clock
from hierret.evaluation.stats.comparison import align as align
from hierret.evaluation.stats.comparison import compare as compare
from hierret.evaluation.stats.comparison import compare_hits as compare_hits
from hierret.evaluation.stats.comparison import paired_tests as paired_tests
from hierret.evaluation.stats.settings import DEFAULT_STATS, StatsSettings
from hierret.search.profile import Profile
from hierret.search.rerank.base import Reranker
from hierret.search.runs import Qrels
from hierret.search.searcher import Searcher
from hierret.structure.units import Level, Query
from hierret.study.judging import ORDER, score, unit_level
from hierret.study.judging import judge as judge
from hierret.study.result import TEST_COLUMNS as TEST_COLUMNS
from hierret.study.result import Result as Result
from hierret.study.result import between as between

__all__ = ["Arm", "run"]


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
        :data:`~hierret.evaluation.stats.DEFAULT_STATS` by default.

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
    >>> from hierret.structure.hierarchy import build_hierarchy
    >>> from hierret.structure.units import Corpus, Document
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
        if target not in ORDER:
            raise ValueError(f"unknown target {target!r}: use one of {tuple(ORDER)}")
    for name, (_, profile, _) in resolved.items():
        coarse = [t for t in targets if ORDER[unit_level(profile)] > ORDER[t]]
        if coarse:
            raise ValueError(
                f"arm {name!r} ranks {unit_level(profile)}, coarser than the "
                f"target {coarse[0]!r}: it cannot be judged there (rank a finer "
                "level, or drop the target)"
            )
    traces = {
        name: s.trace(queries, p, own_k or k, rerankers) for name, (s, p, own_k) in resolved.items()
    }
    with _clock.stage("evaluate"):
        scores, rankings, judged = score(
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
