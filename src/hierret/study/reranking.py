"""A reranking study: its encoders, rerankers and judged corpora, one joint matrix each.

DR-003 (``04_dr003_reranking``) crosses first stages with rerankers on several
corpora (:class:`~hierret.study.joint.JointMatrix`, one per corpus).
:class:`Reranking` is the study's set-up and its matrices as one object, made
from the notebook's parameters: the encoders that load here
(:func:`hierret.study.available.encoders`), the first stages they allow, the
rerankers with their own thresholds (:meth:`Reranking.table`), the corpora,
each judged at its finest level (:meth:`Reranking.load`,
:meth:`Reranking.corpora_table`), then one matrix per corpus run on its
questions (:meth:`Reranking.run`), its tests and figure
(:meth:`Reranking.paired`, :meth:`Reranking.plot`), its latency with nothing
prepared (:meth:`Reranking.cold_latency`), and what the record states
(:meth:`Reranking.values`, :meth:`Reranking.identity`).

Examples
--------
>>> study = Reranking.of(["hybrid:hash"], ["none", "e5-rescore"], rescore_encoder="hash",
...                      maxsim_encoder="hash", min_score={"e5-rescore": 0.5},
...                      n_resamples=100, log=None)
>>> list(study.stages), list(study.rerankers), study.own
(['hybrid-hash'], ['e5-rescore'], {'e5-rescore': 0.5})
>>> study = study.load(["python-reference"], max_docs={"python-reference": 6}, max_queries=4)
>>> results = study.run(5, ["ndcg@10"])
>>> results["python-reference"].arms
['hybrid-hash+none', 'hybrid-hash+e5-rescore']
>>> study.shipped_reranker(), study.stage("dense")  # no dense stage: the first
('e5-rescore', 'hybrid-hash')
>>> study.min_scores()
{'min_score_e5_rescore': 0.5}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, cast

import numpy as np
import pandas as pd

import hierret.study.available as available
from hierret.datasets.bundle import Bundle
from hierret.encoders import Encoder
from hierret.evaluation import Qrels
from hierret.evaluation.stats import DEFAULT_STATS, StatsSettings
from hierret.publish.record import key
from hierret.publish.roles import corpus_token
from hierret.search.profile import Profile, Ranker
from hierret.search.rerank import Reranker
from hierret.structure.hierarchy import Hierarchy
from hierret.structure.units import Level
from hierret.study.joint import JointMatrix
from hierret.study.measured import Measurements
from hierret.study.result import Result
from hierret.study.sets import SelectionFidelity, paired_by_metric
from hierret.study.thresholds import Thresholds

if TYPE_CHECKING:
    from hierret.publish.figures import Figure

__all__ = ["Reranking"]

#: Names shortened in stage labels and record keys.
SHORT = {"python-reference": "pyref", "all-MiniLM-L6-v2": "minilm", "e5-small": "e5"}
#: Each timed reranker's kind and the parameter naming its encoder.
KINDS = {"maxsim": "maxsim", "e5-rescore": "encoder"}


class Reranking:
    """First stages and rerankers on several corpora: the set-up and its joint matrices.

    Build it with :meth:`of` (the encoders and rerankers), then :meth:`load`
    (the corpora) and :meth:`run` (one matrix per corpus).

    Attributes
    ----------
    encoders : dict of str to Encoder
        Those that load here, by name (cached).
    missing : dict of str to str
        Those that do not, with why.
    stages : dict of str to (Ranker, str)
        Each first stage's label (``dense-minilm``) to its ranker and encoder.
    rerankers : dict of str to Reranker
        The timed rerankers and the cross-encoders that load, by name.
    own : dict of str to float or None
        Each reranker's threshold on its own scale
        (:meth:`hierret.study.thresholds.Thresholds.own_thresholds`).
    stats : StatsSettings
    memo : Measurements
        Keeps latencies and query encodings: a rerun on this machine reuses them.
    data : dict of str to (Bundle, Hierarchy, Level, Qrels)
        After :meth:`load`: each corpus with its hierarchy, the level judged
        and the judgements there.
    matrices : dict of str to JointMatrix
        After :meth:`run`: each corpus's matrix.
    """

    SHORT = SHORT

    def __init__(
        self,
        encoders: Mapping[str, Encoder],
        missing: Mapping[str, str],
        stages: Mapping[str, tuple[Ranker, str]],
        rerankers: Mapping[str, Reranker],
        own: Mapping[str, float | None],
        *,
        stats: StatsSettings = DEFAULT_STATS,
        memo: Measurements | None = None,
    ) -> None:
        self.encoders, self.missing = dict(encoders), dict(missing)
        self.stages, self.rerankers, self.own = dict(stages), dict(rerankers), dict(own)
        self.stats = stats
        self.memo = Measurements() if memo is None else memo
        self.data: dict[str, tuple[Bundle, Hierarchy, Level, Qrels]] = {}
        self.matrices: dict[str, JointMatrix] = {}
        self.metrics: list[str] = []
        self.cold: dict[str, pd.DataFrame] = {}
        self.unreranked: str | None = None
        self.cross_encoders: list[str] = []

    @classmethod
    def of(
        cls,
        first_stages: Sequence[str],
        rerankers: Sequence[str],
        cross_encoders: Sequence[str] = (),
        *,
        maxsim_encoder: str = "all-MiniLM-L6-v2",
        maxsim_reduce: str = "mean",
        rescore_encoder: str = "e5-small",
        min_score: Mapping[str, float] | None = None,
        confidence: float = DEFAULT_STATS.confidence,
        n_resamples: int = DEFAULT_STATS.n_resamples,
        seed: int = 0,
        memo: Measurements | None = None,
        log: available.Log = print,
    ) -> Reranking:
        """Load the encoders and rerankers a reranking notebook names.

        Parameters
        ----------
        first_stages : sequence of str
            ``ranker:encoder`` (``dense:all-MiniLM-L6-v2``); a stage whose
            encoder cannot load here is left out.
        rerankers : sequence of str
            ``none`` (each stage's own order, the baseline), ``maxsim`` (over
            ``maxsim_encoder``'s token vectors, ``maxsim_reduce`` combining
            the per-token maxima), ``e5-rescore`` (cosine under ``rescore_encoder``).
        cross_encoders : sequence of str
            Hub ids or folders of cross-encoders, with their weights at hand.
        min_score : mapping of str to float, optional
            Thresholds by reranker name or kind (:meth:`Thresholds.own_thresholds`).
        confidence, n_resamples, seed
            The :class:`~hierret.evaluation.stats.StatsSettings` of every interval and test.
        memo : Measurements, optional
            Where latencies and query encodings are kept (default: in the vector
            cache's folder).
        log : callable, optional
            Told each encoder's identity, or why it is missing.
        """
        encoders, missing = available.encoders(
            [s.split(":")[1] for s in first_stages] + [maxsim_encoder, rescore_encoder], log=log
        )
        specs = [s.split(":") for s in first_stages]
        stages = {f"{r}-{SHORT.get(e, e)}": (cast(Ranker, r), e) for r, e in specs if e in encoders}
        chosen = {"maxsim": maxsim_encoder, "e5-rescore": rescore_encoder}
        reduce = cast(Literal["sum", "mean"], maxsim_reduce)
        timed = {
            name: JointMatrix.timed_reranker(kind, encoders[chosen[name]], name, reduce=reduce)
            for name, kind in KINDS.items()
            if name in rerankers and chosen[name] in encoders
        }
        crossed = available.cross_encoders(cross_encoders, log=log)
        found = timed | crossed
        own = Thresholds.own_thresholds(dict(min_score or {}), found)
        study = cls(
            encoders,
            missing,
            stages,
            found,
            own,
            stats=StatsSettings(confidence, n_resamples, seed),
        )
        study.unreranked = "none" if "none" in rerankers else None
        study.cross_encoders = list(crossed)
        return study

    def table(self) -> pd.DataFrame:
        """One row per reranker: what it is and its threshold on its own scale."""
        rows = {
            r: {"reranker": m.identity.describe(), "min_score": self.own[r]}
            for r, m in self.rerankers.items()
        }
        return pd.DataFrame(rows).T

    def load(
        self,
        corpora: Sequence[str],
        *,
        max_docs: Mapping[str, int] | None = None,
        max_queries: int | None = None,
        log: available.Log = print,
    ) -> Reranking:
        """Load each corpus whose data is here (:func:`hierret.study.available.corpora`,
        sampled with the study's seed) and judge it at its finest level
        (:func:`hierret.study.available.judged`); returns the study."""
        bundles = available.corpora(
            corpora, max_docs=max_docs, max_queries=max_queries, seed=self.stats.seed, log=log
        )
        self.data = {c: (b, *available.judged(b)) for c, b in bundles.items()}
        return self

    def corpora_table(self) -> pd.DataFrame:
        """One row per corpus: the level judged, its units, how it was sampled."""
        rows = {
            c: {"level": v, "units": len(h.units(v)), "sampling": b.sampling}
            for c, (b, h, v, _) in self.data.items()
        }
        return pd.DataFrame(rows).T

    def run(self, candidates: int, metrics: Sequence[str]) -> dict[str, Result]:
        """One :class:`~hierret.study.joint.JointMatrix` per corpus, run on its questions at
        its judged level (:meth:`~hierret.study.joint.JointMatrix.run`): each reranker
        reorders each first stage's top ``candidates``.

        Raises
        ------
        ValueError
            No corpus was loaded (:meth:`load` first).
        """
        if not self.data:
            raise ValueError("no corpus loaded: call study.load(corpora) before study.run")
        results, self.metrics = {}, list(metrics)
        for c, (b, h, level, qrels) in self.data.items():
            stages = JointMatrix.first_stages(h, level, self.stages, self.encoders)
            self.matrices[c] = JointMatrix(
                stages, self.rerankers, candidates, self.unreranked, self.memo
            )
            results[c] = self.matrices[c].run(
                b.queries, level, metrics=list(metrics), qrels={level: qrels}, stats=self.stats
            )
        return results

    @staticmethod
    def paired(result: Result, metrics: Sequence[str]) -> pd.DataFrame:
        """Each reranked arm against its own first stage, metric by metric, each metric its
        own family (:func:`hierret.study.sets.paired_by_metric`)."""
        return paired_by_metric(result, list(metrics))

    @staticmethod
    def plot(results: Mapping[str, Result], metric: str = "ndcg@10") -> Figure:
        """Every corpus's matrix in one figure (:meth:`JointMatrix.plot`)."""
        return JointMatrix.plot(results, metric)

    def stage(self, ranker: str) -> str:
        """The first stage of ``ranker`` (``"hybrid"``), else the first stage there is.

        Raises
        ------
        ValueError
            No first stage could be loaded here.
        """
        if not self.stages:
            raise ValueError(
                "no first stage: none of their encoders loads here (see study.missing)"
            )
        return next(
            (s for s, (r, _) in self.stages.items() if r == ranker), next(iter(self.stages))
        )

    def shipped_reranker(self) -> str | None:
        """The reranker a shipped profile uses: the first cross-encoder that loaded (as the
        study shipped), else the first reranker; ``None`` without any."""
        return next(iter([*self.cross_encoders, *self.rerankers]), None)

    def cold_latency(self, stage: str, sample: int, seed: int) -> pd.DataFrame:
        """Per corpus, reranking time per query with nothing prepared, on ``stage``'s
        candidates, for ``sample`` questions drawn with ``seed`` (the same on every
        corpus; :meth:`JointMatrix.cold_latency`, machine-dependent, kept in
        :attr:`memo`), indexed by corpus; :attr:`cold` keeps each corpus's table."""
        self.cold = {
            c: m.cold_latency(
                stage, self.data[c][0].queries, sample=sample, rng=np.random.default_rng(seed)
            )
            for c, m in self.matrices.items()
        }
        return pd.concat(self.cold, names=["corpus", ""])

    def fidelity(self, corpus: str, shipped: Profile, stage: str) -> SelectionFidelity:
        """``shipped`` against its twin without selection on ``corpus``, searched as
        ``stage`` of its matrix (:class:`~hierret.study.sets.SelectionFidelity`, the two
        named ``shipped`` and ``reorder``, judged at the corpus's level with the matrix's
        metrics and the study's rerankers and statistics).

        Raises
        ------
        KeyError
            ``corpus`` has no matrix (:meth:`run` first).
        """
        b, _, level, qrels = self.data[corpus]
        searcher = self.matrices[corpus].stages[stage].searcher
        assert searcher is not None, "every stage has its searcher"
        return SelectionFidelity(
            shipped,
            searcher,
            b.queries,
            target=level,
            qrels=qrels,
            names=("shipped", "reorder"),
            rerankers=self.rerankers,
            metrics=self.metrics,
            stats=self.stats,
        )

    def min_scores(self) -> dict[str, float]:
        """Record values: each reranker's own threshold, ``min_score_<reranker>``."""
        return {key("min_score", r): float(t) for r, t in self.own.items() if t is not None}

    def values(
        self,
        results: Mapping[str, Result],
        fidelity: Mapping[str, SelectionFidelity],
        measures: Sequence[str],
    ) -> dict[str, float]:
        """Record values: each matrix's (:meth:`JointMatrix.values`, with its latencies
        :attr:`cold` when measured), then each fidelity's ``measures``
        (:meth:`SelectionFidelity.values`), prefixed by the corpus's short name (a
        folder's last part: :func:`hierret.publish.roles.corpus_token`)."""
        out: dict[str, float] = {}
        for c, matrix in self.matrices.items():
            out |= matrix.values(results[c], corpus_token(c), self.cold.get(c))
        for c, f in fidelity.items():
            out |= f.values(f"{corpus_token(c)}_fidelity", list(measures))
        return out

    def identity(
        self,
        results: Mapping[str, Result],
        fidelity: Mapping[str, SelectionFidelity],
        **more: Any,
    ) -> dict[str, Any]:
        """What the record states about how it ran: the encoders, rerankers, corpora and
        every profile evaluated (:meth:`JointMatrix.identity`), the encoders missing,
        ``more`` (``parameters=``...), then the statistics' settings."""
        out = JointMatrix.identity(
            self.encoders,
            self.rerankers,
            self.data,
            results,
            {c: f.result for c, f in fidelity.items()},
        )
        return out | {"encoders_missing": self.missing} | more | self.stats.as_dict()
