"""Sweeps: a profile's settings, or the passage size, swept over values, with intervals.

**Profile settings.** A sweep is a comparison whose arms differ in some fields of a
:class:`~hierret.search.profile.Profile` (``section_weight``, ``vectors``, ``pool``,
``rrf_k``, ``candidates``...), over every combination of the values given.
:func:`run` runs it with :func:`hierret.study.experiment.run` (so each setting is
searched exactly as that profile searches) and keeps every per-query score
(:class:`Swept`); :meth:`Swept.table` gives one row per setting and target:
the mean (the hit rate for ``hit@k``) with its interval, and
:meth:`Swept.out_of_fold` reports a tuned setting honestly: chosen on some
questions, scored on the others, by seeded k-fold cross-validation.
:func:`hierret.publish.charts.sweep_figure` draws that table: one panel per
target, the mean against one field, one line per value of another, the
interval as a band.

**Passage sizes.** Passages of different sizes are different units, so a
chunking sweep compares them where they meet: at a coarser target (sections or
documents), through :func:`hierret.study.experiment.run`, each passage ranking
lifted to the target. :func:`chunking_sweep` builds one
:class:`~hierret.search.searcher.Searcher` per setting (same encoder, so a
:class:`~hierret.encoders.cache.CachedEncoder` embeds each passage text once);
:meth:`ChunkingSweep.arms` names one arm per profile and size,
``"{profile}-{max_chars}"``, and :meth:`ChunkingSweep.family` declares each
other size against one; :meth:`ChunkingSweep.table` says what each size costs
(passages, share over the encoder's window); :meth:`ChunkingSweep.plot` draws
a metric against the size, with its intervals
(:func:`hierret.publish.charts.chunk_sizes_axes`).

Examples
--------
>>> from hierret.encoders import HashEncoder
>>> from hierret.structure.hierarchy import build_hierarchy
>>> from hierret.search.searcher import Searcher
>>> from hierret.structure.units import Corpus, Document, Query
>>> text = "Cats\\n====\\n\\nCats purr.\\n\\nDogs\\n====\\n\\nDogs bark.\\n"
>>> s = Searcher(build_hierarchy(Corpus("pets", [Document("d", "Pets", text)])),
...              HashEncoder(dimension=16))
>>> q = [Query("q1", "why do dogs bark", (("d", 28, 38),))]
>>> table = run(Profile(level="fused"), {"vectors": ["rawspan", "centroid"],
...                                       "section_weight": [0.0, 1.0]},
...             q, searcher=s, targets=["sections"], stats=StatsSettings(n_resamples=10)).table()
>>> table[["vectors", "section_weight", "target", "n"]].values.tolist()
[['rawspan', 0.0, 'sections', 1], ['rawspan', 1.0, 'sections', 1], \
['centroid', 0.0, 'sections', 1], ['centroid', 1.0, 'sections', 1]]

>>> long = "Cats\\n====\\n\\n" + "Cats purr softly. " * 20 + "\\n\\nDogs\\n====\\n\\nDogs bark.\\n"
>>> sizes = chunking_sweep(Corpus("pets", [Document("d", "Pets", long)]),
...                        HashEncoder(dimension=16, window=40), [(120, 24), (240, 48)])
>>> sizes.table()[["overlap_chars", "passages"]].to_dict("index")
{120: {'overlap_chars': 24, 'passages': 4}, 240: {'overlap_chars': 48, 'passages': 2}}
>>> sorted(sizes.arms({"dense": Profile()}))
['dense-120', 'dense-240']
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

import hierret.publish.charts as charts
import hierret.study.experiment as experiment
from hierret.encoders import Encoder, truncation_report
from hierret.evaluation.metrics import kind
from hierret.evaluation.stats import DEFAULT_STATS, StatsSettings, cross_validate, mean_interval
from hierret.evaluation.stats.comparison import SUMMARY
from hierret.search.profile import Profile
from hierret.search.runs import Qrels
from hierret.search.searcher import Searcher
from hierret.structure.hierarchy import HEADING_STYLES, build_hierarchy
from hierret.structure.units import Corpus, Level, Query
from hierret.study.experiment import Arm, Result

if TYPE_CHECKING:
    from hierret.publish.figures import Axes, Figure

__all__ = ["ChunkingSweep", "Swept", "chunking_sweep", "run"]


def run(
    profile: Profile,
    grid: Mapping[str, Sequence[Any]],
    queries: Sequence[Query],
    *,
    searcher: Searcher,
    targets: Sequence[Level] = ("passages",),
    metric: str = "ndcg@10",
    k: int = 100,
    qrels: Mapping[str, Qrels] | None = None,
    stats: StatsSettings = DEFAULT_STATS,
) -> Swept:
    """Run ``profile`` with its fields set to every combination in ``grid``, keeping every score.

    Parameters
    ----------
    profile : Profile
        Every other setting.
    grid : mapping of str to sequence
        Fields of :class:`~hierret.search.profile.Profile` and the values each takes,
        in order; every combination is run (the first field varies slowest).
    queries, searcher, targets, metric, k, qrels, stats
        As :func:`hierret.study.experiment.run` takes them.

    Returns
    -------
    Swept
        The settings and the :class:`~hierret.study.experiment.Result` of their
        arms (named ``"field=value, ..."``). :meth:`Swept.table` gives one
        row per setting and target (targets outer, settings inner): a column
        per field of ``grid``, then ``target``, ``n`` (queries judged),
        ``mean`` (the hit rate for hit@k), ``low`` and ``high`` (its
        interval, as :meth:`~hierret.study.experiment.Result.table` computes it);
        :meth:`Swept.out_of_fold` tunes one field honestly.

    Raises
    ------
    ValueError
        A key of ``grid`` that is not a profile field (or is ``name``), a field
        with no values or with a value repeated; a value the profile refuses
        raises what :class:`~hierret.search.profile.Profile` raises.
    """
    known = [f.name for f in fields(Profile) if f.name != "name"]
    unknown = [name for name in grid if name not in known]
    if not grid or unknown:
        raise ValueError(f"unknown profile fields {unknown}: sweep some of {known}")
    for name, values in grid.items():
        if not values or len({repr(v) for v in values}) != len(values):
            raise ValueError(f"give {name} values to sweep, each once; got {list(values)}")
    settings: list[dict[str, Any]] = [
        dict(zip(grid, combo, strict=True)) for combo in itertools.product(*grid.values())
    ]
    arms = {_arm(setting): replace(profile, **setting) for setting in settings}
    result = experiment.run(
        arms,
        queries,
        searcher=searcher,
        targets=targets,
        metrics=[metric],
        qrels=qrels,
        k=k,
        stats=stats,
    )
    return Swept(settings, result)


def _arm(setting: Mapping[str, Any]) -> str:
    return ", ".join(f"{f}={v!r}" for f, v in setting.items())


@dataclass(frozen=True)
class Swept:
    """A sweep's settings and the result of their arms (see :func:`run`).

    Attributes
    ----------
    settings : list of dict
        Each combination of the grid, in grid order (the first field slowest).
    result : Result
        One arm per setting, named ``"field=value, ..."``, every per-query score kept.
    """

    settings: list[dict[str, Any]]
    result: Result

    @classmethod
    def of(
        cls,
        profile: Profile,
        grid: Mapping[str, Sequence[Any]],
        queries: Sequence[Query],
        **options: Any,
    ) -> Swept:
        """Run ``profile`` at every combination of ``grid`` (:func:`run`, which takes
        ``options``: ``searcher``, ``targets``, ``metric``, ``k``, ``qrels``, ``stats``)."""
        return run(profile, grid, queries, **options)

    def plot(self, field: str, **options: Any) -> Figure:
        """The mean against ``field``, a panel per target
        (:func:`hierret.publish.charts.sweep_figure` of :meth:`table`; it takes ``options``:
        ``by``, ``ylabel``, ``marks``, ``title``)."""
        return charts.sweep_figure(self.table(), field, **options)

    def table(self) -> pd.DataFrame:
        """One row per setting and target: the mean with its interval (see :func:`run`)."""
        metric = self.result.metrics[0]
        value = SUMMARY[kind(metric)]
        rows = []
        for target in self.result.targets:
            table = self.result.table(target, metric)
            arms = [_arm(s) for s in self.settings]
            numbers = table.loc[arms, ["n", value, "low", "high"]].to_numpy(dtype=float)
            for setting, (n, mean, low, high) in zip(self.settings, numbers, strict=True):
                rows.append(
                    {
                        **setting,
                        "target": target,
                        "n": int(n),
                        "mean": float(mean),
                        "low": float(low),
                        "high": float(high),
                    }
                )
        return pd.DataFrame(rows)

    def out_of_fold(self, field: str, folds: int = 5, seed: int = 0) -> pd.DataFrame:
        """``field`` tuned by seeded k-fold cross-validation over the questions.

        The questions (sorted by id) are shuffled with ``seed`` and cut into
        ``folds`` nearly equal folds. For each fold, the value of ``field``
        with the best mean on the other folds is chosen (ties: the first in
        the grid) and scored on the held-out fold. Every question is thus
        scored by a value chosen without it, and the mean of those scores is
        an honest estimate of what tuning buys; the in-sample best, chosen and
        scored on the same questions, is optimistic. The other fields of the
        grid (e.g. ``vectors``) are tuned separately, as are the targets.

        Parameters
        ----------
        field : str
            A field of the grid.
        folds : int, default 5
            At least 2, at most the number of questions.
        seed : int, default 0
            Seed of the shuffle.

        Returns
        -------
        DataFrame
            One row per group of the other fields and target: the group's
            fields, ``target``, ``n``, ``folds``, ``mean`` (out of fold) with
            ``low``/``high`` (bootstrap interval, the result's settings),
            ``chosen`` (the value chosen per fold), ``chosen_min``,
            ``chosen_max``, ``in_sample`` (the value best on all questions) and
            ``in_sample_mean``.

        Raises
        ------
        ValueError
            ``field`` not in the grid, or ``folds`` out of range.

        Examples
        --------
        >>> scores = {"sections": {"mrr": {"w=0": {"q1": 1.0, "q2": 0.0, "q3": 1.0},
        ...                                "w=1": {"q1": 0.0, "q2": 1.0, "q3": 0.5}}}}
        >>> r = Result({}, scores, "w=0", [], ["sections"], ["mrr"], StatsSettings(n_resamples=50))
        >>> swept = Swept([{"w": 0}, {"w": 1}], r)
        >>> t = swept.out_of_fold("w", folds=3)  # each question held out once
        >>> t.loc[0, ["mean", "in_sample_mean"]].tolist(), t.loc[0, "chosen"]
        ([0.3333333333333333, 0.6666666666666666], [0, 1, 0])
        """
        if not self.settings or field not in self.settings[0]:
            raise ValueError(
                f"{field!r} is not a field of the sweep: "
                f"{list(self.settings[0]) if self.settings else []}"
            )
        r, metric = self.result, self.result.metrics[0]
        others = [f for f in self.settings[0] if f != field]
        groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
        for s in self.settings:
            groups.setdefault(tuple(s[f] for f in others), []).append(s)
        rows = []
        for target in r.targets:
            frame = r.per_query(target, metric)
            if not 2 <= folds <= len(frame):
                raise ValueError(
                    f"folds must be between 2 and the {len(frame)} questions "
                    f"judged at {target!r}, got {folds}: set folds between 2 and "
                    f"{len(frame)} (a notebook's parameter `folds`), or judge more questions"
                )
            for group, members in groups.items():
                scores = frame[[_arm(s) for s in members]].to_numpy(dtype=float)
                held, picks, _ = cross_validate(scores, folds, seed)
                chosen = [members[i][field] for i in picks]
                ci = mean_interval(held, r.stats.n_resamples, r.stats.confidence, r.stats.seed)
                best_all = int(np.argmax(scores.mean(axis=0)))
                rows.append(
                    {
                        **dict(zip(others, group, strict=True)),
                        "target": target,
                        "n": len(frame),
                        "folds": folds,
                        "mean": ci.estimate,
                        "low": ci.low,
                        "high": ci.high,
                        "chosen": chosen,
                        "chosen_min": min(chosen),
                        "chosen_max": max(chosen),
                        "in_sample": members[best_all][field],
                        "in_sample_mean": float(scores[:, best_all].mean()),
                    }
                )
        return pd.DataFrame(rows)


@dataclass(frozen=True)
class ChunkingSweep:
    """One searcher per passage size over the same corpus and encoder.

    Attributes
    ----------
    searchers : dict[int, Searcher]
        By ``max_chars``, in the order the settings were given.
    overlaps : dict[int, int]
        ``overlap_chars`` of each size.
    """

    searchers: dict[int, Searcher]
    overlaps: dict[int, int]

    @property
    def sizes(self) -> list[int]:
        """The ``max_chars`` of every setting, in order."""
        return list(self.searchers)

    def arms(self, profiles: Mapping[str, Profile], k: int | None = None) -> dict[str, Arm]:
        """One arm per profile and size, named ``"{profile}-{max_chars}"``.

        Parameters
        ----------
        profiles : mapping of str to Profile
            The profiles, by the name that starts each arm's name.
        k : int, optional
            Each arm's ranking length (default: that of :func:`~hierret.study.experiment.run`).

        Returns
        -------
        dict[str, Arm]
            Profile by profile, size by size; each arm carries its size's searcher.
        """
        return {
            f"{name}-{size}": Arm(profile, searcher, k)
            for name, profile in profiles.items()
            for size, searcher in self.searchers.items()
        }

    def family(self, name: str, baseline: int) -> list[tuple[str, str]]:
        """Every other size of profile ``name`` against its ``baseline`` size, as declared pairs.

        Examples
        --------
        >>> from hierret.encoders import HashEncoder
        >>> from hierret.structure.units import Corpus, Document
        >>> sweep = chunking_sweep(Corpus("c", [Document("d", "D", "Cats purr.")]),
        ...                        HashEncoder(dimension=8), [(300, 60), (600, 120)])
        >>> sweep.family("dense", 600)
        [('dense-300', 'dense-600')]
        """
        if baseline not in self.searchers:
            raise ValueError(f"baseline size {baseline} is not swept: sizes {self.sizes}")
        return [(f"{name}-{size}", f"{name}-{baseline}") for size in self.sizes if size != baseline]

    def table(self) -> pd.DataFrame:
        """What each size makes: passages, and how many exceed the encoder's window.

        Returns
        -------
        pandas.DataFrame
            Indexed by ``max_chars``: ``overlap_chars``, ``passages``,
            ``over_window`` (passages longer than the encoder's token window,
            which the encoder cuts) and ``over_window_share``.
        """
        rows = {}
        for size, s in self.searchers.items():
            report = truncation_report(s.encoder, s.texts("passages"))
            rows[size] = {
                "overlap_chars": self.overlaps[size],
                "passages": report.n_texts,
                "over_window": report.n_over_window,
                "over_window_share": report.share,
            }
        table = pd.DataFrame.from_dict(rows, orient="index")
        table.index.name = "max_chars"
        return table

    def plot(
        self, table: pd.DataFrame, names: Sequence[str], *, ax: Axes | None = None, ylabel: str = ""
    ) -> Axes:
        """Each profile's estimate against the passage size, with its interval.

        Drawn by :func:`hierret.publish.charts.chunk_sizes_axes`. The y axis
        spans at least 0.1 (:func:`hierret.publish.figures.readable_span`), so
        that differences read at their size beside the intervals.

        Parameters
        ----------
        table : pandas.DataFrame
            A table of :meth:`hierret.study.experiment.Result.table` over arms named
            by :meth:`arms`: ``mean`` (or ``rate``), ``low`` and ``high`` per arm.
        names : sequence of str
            The profile names to draw, one line each.
        ax : Axes, optional
            Where to draw; a new figure otherwise.
        ylabel : str
            The y axis label (the metric and its target).
        """
        return charts.chunk_sizes_axes(table, names, self.sizes, ax=ax, ylabel=ylabel)


def chunking_sweep(
    corpus: Corpus,
    encoder: Encoder,
    settings: Sequence[tuple[int, int]],
    heading_styles: Sequence[str] = HEADING_STYLES,
) -> ChunkingSweep:
    """Cut ``corpus`` at each ``(max_chars, overlap_chars)`` and make a searcher for each.

    Parameters
    ----------
    corpus : Corpus
    encoder : Encoder
        Shared by every searcher (wrap it in a
        :class:`~hierret.encoders.cache.CachedEncoder` so nothing is embedded twice).
    settings : sequence of (int, int)
        Passage size and overlap (:func:`~hierret.structure.hierarchy.build_hierarchy`),
        each ``max_chars`` once.
    heading_styles : sequence of str
        Passed to :func:`~hierret.structure.hierarchy.build_hierarchy` (the bundle's own,
        :attr:`hierret.datasets.Bundle.heading_styles`).

    Returns
    -------
    ChunkingSweep

    Raises
    ------
    ValueError
        No settings, or a ``max_chars`` given twice.
    """
    sizes = [size for size, _ in settings]
    if not sizes:
        raise ValueError("no settings: give at least one (max_chars, overlap_chars)")
    if len(set(sizes)) != len(sizes):
        raise ValueError(f"each max_chars once: got {sizes}")
    searchers = {
        size: Searcher(
            build_hierarchy(
                corpus, max_chars=size, overlap_chars=overlap, heading_styles=heading_styles
            ),
            encoder,
        )
        for size, overlap in settings
    }
    return ChunkingSweep(searchers, dict(settings))
