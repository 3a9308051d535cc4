"""A testbed: a loaded corpus with its hierarchy, ready to search and to judge.

Every study starts the same way: load a corpus (:func:`hierret.datasets.load`,
the one loader and its one sampler), cut it into documents, sections and
passages with the corpus's own heading styles
(:func:`~hierret.structure.hierarchy.build_hierarchy`), and judge the questions at a
level. A :class:`Testbed` is those two values together, so that a notebook
says once how a corpus is cut, and asks the testbed for its queries, units,
texts and judgments at any level, and compares arms on it
(:meth:`Testbed.compare`, :func:`hierret.study.experiment.run` at its level).

Its :attr:`~Testbed.level` is the finest level the corpus is judged at:
passages for span evidence (python-reference, Qasper, ``*-sections``),
documents for BEIR (SciFact).

Examples
--------
>>> bed = Testbed.load("python-reference", max_queries=3, max_docs=5, max_chars=600)
>>> bed.level, len(bed.queries), len(bed.units()) == len(bed.texts())
('passages', 3, True)
>>> sorted(bed.summary())
['level', 'questions', 'sample', 'units']
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hierret.datasets import Bundle, load
from hierret.datasets.download import DataNotFoundError
from hierret.encoders import Encoder
from hierret.evaluation import check_coverage
from hierret.search.profile import Profile
from hierret.search.runs import Qrels
from hierret.search.searcher import Searcher
from hierret.structure.chunking import DEFAULT_MAX_CHARS, DEFAULT_OVERLAP_CHARS
from hierret.structure.hierarchy import Hierarchy, build_hierarchy
from hierret.structure.units import Level, Query, Unit
from hierret.study.experiment import Arm, Result, run
from hierret.study.sweep import ChunkingSweep, chunking_sweep

__all__ = ["Testbed"]


@dataclass(frozen=True)
class Testbed:
    """A corpus (:class:`~hierret.datasets.Bundle`) and the hierarchy built from it.

    Parameters
    ----------
    bundle : Bundle
        Documents, queries, targets, heading styles, sampling.
    hierarchy : Hierarchy
        Built from ``bundle.corpus`` (see :meth:`load`).

    Raises
    ------
    ValueError
        ``hierarchy`` was built from another corpus.
    """

    __test__ = False  # not a test class, whatever pytest guesses from the name

    bundle: Bundle
    hierarchy: Hierarchy
    _searchers: dict[str, Searcher] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        if self.hierarchy.corpus.fingerprint != self.bundle.corpus.fingerprint:
            raise ValueError(
                f"the hierarchy was built from corpus {self.hierarchy.corpus.name!r}, "
                f"not the bundle's {self.bundle.corpus.name!r}: build it from "
                "bundle.corpus"
            )

    @classmethod
    def load(
        cls,
        source: str | os.PathLike[str],
        max_chars: int = DEFAULT_MAX_CHARS,
        overlap_chars: int = DEFAULT_OVERLAP_CHARS,
        *,
        max_queries: int | None = None,
        max_docs: int | None = None,
        seed: int = 0,
        split: str | None = None,
    ) -> Testbed:
        """Load ``source`` and cut it into a hierarchy with its own heading styles.

        Parameters
        ----------
        source : str or path-like
            A corpus name or path, as :func:`hierret.datasets.load` takes it.
        max_chars, overlap_chars : int
            Passage size and overlap (:func:`~hierret.structure.hierarchy.build_hierarchy`).
        max_queries, max_docs, seed, split
            The sample and split (:func:`hierret.datasets.load`).
        """
        bundle = load(source, max_queries=max_queries, max_docs=max_docs, seed=seed, split=split)
        return cls(
            bundle,
            build_hierarchy(
                bundle.corpus,
                max_chars=max_chars,
                overlap_chars=overlap_chars,
                heading_styles=bundle.heading_styles,
            ),
        )

    @classmethod
    def found(cls, source: str | os.PathLike[str], *args: Any, **kwargs: Any) -> Testbed | None:
        """:meth:`load` a corpus whose data is here (or downloads); ``None`` when it is not.

        Says in one line what was skipped and why, so a study runs on what is at
        hand (a corpus downloaded on demand, on a machine without the network).
        Any error other than missing data is raised.

        Examples
        --------
        >>> Testbed.found("python-reference", max_queries=2, max_docs=3).level
        'passages'
        """
        try:
            return cls.load(source, *args, **kwargs)
        except DataNotFoundError as exc:
            print(f"{source}: skipped — {exc}")
            return None

    @property
    def level(self) -> Level:
        """The finest level the corpus is judged at."""
        return min(self.bundle.targets, key=("passages", "sections", "documents").index)

    @property
    def queries(self) -> tuple[Query, ...]:
        """The questions kept, in file order."""
        return self.bundle.queries

    def qrels(self, level: Level | None = None) -> Qrels:
        """Judgments at ``level`` (default :attr:`level`): :meth:`Bundle.qrels`."""
        return self.bundle.qrels(self.hierarchy, level or self.level)

    def covered(
        self, levels: Sequence[Level] = ("documents", "sections", "passages")
    ) -> dict[str, Qrels]:
        """The judgments at each of ``levels``, checked: every question has an answer at each.

        Raises
        ------
        ValueError
            A question with no relevant unit at a level
            (:func:`~hierret.evaluation.check_coverage`), naming it.

        Examples
        --------
        >>> bed = Testbed.load("python-reference", max_queries=2, max_docs=3)
        >>> sorted(bed.covered(["sections", "passages"]))
        ['passages', 'sections']
        """
        qrels: dict[str, Qrels] = {level: self.qrels(level) for level in levels}
        check_coverage(self.queries, qrels).raise_if_failed()
        return qrels

    def units(self, level: Level | None = None) -> list[Unit]:
        """The units of ``level`` (default :attr:`level`), in hierarchy order."""
        return self.hierarchy.units(level or self.level)

    def texts(self, level: Level | None = None) -> list[str]:
        """The text of every unit of ``level`` (default :attr:`level`)."""
        return [self.hierarchy.text(u) for u in self.units(level)]

    def sample(self, n: int, seed: int = 0, level: Level | None = None) -> list[str]:
        """A seeded sample of ``n`` unit texts of ``level`` (default :attr:`level`; all
        of them when there are fewer), in hierarchy order.

        Examples
        --------
        >>> bed = Testbed.load("python-reference", max_queries=2, max_docs=3)
        >>> texts = bed.sample(4, seed=1)
        >>> len(texts), texts == bed.sample(4, seed=1), set(texts) <= set(bed.texts())
        (4, True, True)
        """
        pool = self.texts(level)
        pick = np.random.default_rng(seed).choice(len(pool), min(n, len(pool)), replace=False)
        return [pool[i] for i in sorted(pick)]

    def searcher(self, encoder: Encoder) -> Searcher:
        """The :class:`~hierret.search.searcher.Searcher` of this hierarchy with ``encoder``,
        made once.

        One per encoder identity, so its indexes are built once however often
        it is asked for; the first encoder given for an identity is the one it
        embeds with (give a :class:`~hierret.encoders.cache.CachedEncoder` first to cache
        every vector).

        Examples
        --------
        >>> from hierret.encoders import HashEncoder
        >>> bed = Testbed.load("python-reference", max_queries=2, max_docs=3)
        >>> bed.searcher(HashEncoder(dimension=8)) is bed.searcher(HashEncoder(dimension=8))
        True
        """
        key = encoder.identity.key()
        if key not in self._searchers:
            self._searchers[key] = Searcher(self.hierarchy, encoder)
        return self._searchers[key]

    def sweep(self, encoder: Encoder, settings: Sequence[tuple[int, int]]) -> ChunkingSweep:
        """This corpus cut at each ``(max_chars, overlap_chars)``, with its own heading styles.

        :func:`hierret.study.sweep.chunking_sweep` of the bundle's corpus: one
        searcher per passage size, each with ``encoder``.

        Examples
        --------
        >>> from hierret.encoders import HashEncoder
        >>> bed = Testbed.load("python-reference", max_queries=2, max_docs=3)
        >>> bed.sweep(HashEncoder(dimension=8), [(600, 120), (900, 180)]).sizes
        [600, 900]
        """
        return chunking_sweep(self.bundle.corpus, encoder, settings, self.bundle.heading_styles)

    def summary(self) -> dict[str, object]:
        """Questions, units at :attr:`level`, the level, and how the corpus was sampled."""
        return {
            "questions": len(self.queries),
            "units": len(self.units()),
            "level": self.level,
            "sample": self.bundle.sampling,
        }

    def run(
        self,
        arms: Mapping[str, Profile | Arm | tuple[Searcher, Profile]],
        encoder: Encoder,
        **kwargs: Any,
    ) -> Result:
        """Arms on this testbed's questions, as :func:`hierret.study.experiment.run` runs them.

        Arms given as a bare :class:`~hierret.search.profile.Profile` search this
        hierarchy with ``encoder`` (:meth:`searcher`); the targets, metrics,
        baseline and family are the caller's (unlike :meth:`compare`, which
        judges at :attr:`level` and tests every arm against the baseline).

        Parameters
        ----------
        arms : mapping
            Named arms, as :func:`hierret.study.experiment.run` takes them.
        encoder : Encoder
            The encoder of the arms without their own searcher.
        **kwargs
            More :func:`hierret.study.experiment.run` arguments: ``targets``,
            ``metrics``, ``baseline``, ``family``, ``qrels``, ``stats``...

        Examples
        --------
        >>> from hierret.encoders import HashEncoder
        >>> from hierret.evaluation.stats import StatsSettings
        >>> bed = Testbed.load("python-reference", max_queries=4, max_docs=6)
        >>> r = bed.run({"passages": Profile(), "sections": Profile(level="sections")},
        ...             HashEncoder(dimension=32), targets=["sections"], metrics=["hit@1"],
        ...             family=[("sections", "passages")], stats=StatsSettings(n_resamples=50))
        >>> r.arms, r.family
        (['passages', 'sections'], [('sections', 'passages')])
        """
        return run(arms, self.queries, searcher=self.searcher(encoder), **kwargs)

    def compare(
        self,
        arms: Mapping[str, Profile | Arm | tuple[Searcher, Profile] | Searcher],
        metrics: Sequence[str] = ("ndcg@10",),
        *,
        profile: Profile | None = None,
        baseline: str | None = None,
        k: int = 100,
        **kwargs: Any,
    ) -> Result:
        """Every arm against the baseline on this testbed's questions, judged at :attr:`level`.

        :func:`hierret.study.experiment.run` with ``targets=[level]``, this testbed's
        judgments at that level, and the family declared as every other arm
        against the baseline (Holm over those comparisons).

        Parameters
        ----------
        arms : mapping
            Named arms, as :func:`hierret.study.experiment.run` takes them, or
            searchers that all run ``profile`` (arms differing by encoder).
        metrics : sequence of str, default ("ndcg@10",)
        profile : Profile, optional
            The profile of the arms given as a :class:`~hierret.search.searcher.Searcher`.
        baseline : str, optional
            Default: the first arm.
        k : int, default 100
            Ranking length of each arm.
        **kwargs
            More :func:`hierret.study.experiment.run` arguments: ``searcher``,
            ``rerankers``, ``stats`` (a :class:`~hierret.evaluation.stats.StatsSettings`).

        Examples
        --------
        >>> from hierret.encoders import HashEncoder
        >>> from hierret.evaluation.stats import StatsSettings
        >>> few = StatsSettings(n_resamples=100)
        >>> bed = Testbed.load("python-reference", max_queries=4, max_docs=6)
        >>> s = Searcher(bed.hierarchy, HashEncoder(dimension=32))
        >>> result = bed.compare({"dense": Profile(), "bm25": Profile(ranker="bm25")},
        ...                      ["recall@10"], searcher=s, stats=few)
        >>> list(result.table("passages", "recall@10").index), result.family
        (['dense', 'bm25'], [('bm25', 'dense')])
        >>> other = Searcher(bed.hierarchy, HashEncoder(dimension=64))
        >>> bed.compare({"32": s, "64": other}, profile=Profile(), stats=few).arms
        ['32', '64']
        """
        given = {name: _with_profile(name, arm, profile) for name, arm in arms.items()}
        base = baseline if baseline is not None else next(iter(given), "")
        family = [(arm, base) for arm in given if arm != base]
        return run(
            given,
            self.queries,
            targets=[self.level],
            metrics=metrics,
            baseline=base,
            family=family,
            qrels={self.level: self.qrels()},
            k=k,
            **kwargs,
        )


def _with_profile(
    name: str, arm: Profile | Arm | tuple[Searcher, Profile] | Searcher, profile: Profile | None
) -> Profile | Arm | tuple[Searcher, Profile]:
    """A searcher given as an arm becomes ``(searcher, profile)``."""
    if not isinstance(arm, Searcher):
        return arm
    if profile is None:
        raise ValueError(f"arm {name!r} is a Searcher: give the profile it runs (profile=...)")
    return (arm, profile)
