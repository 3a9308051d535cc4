"""A reranker chosen jointly with its first stage: every stage crossed with every reranker.

A reranker's value depends on what it is given, so a reranking study crosses
first stages with rerankers and has every reranker reorder **the same
candidates** of each first stage. :class:`JointMatrix` holds the first stages
(each an :class:`~hierret.study.experiment.Arm`: a first-stage profile and its
searcher), the rerankers and the number of candidates, and makes the arms
``"<stage>+<reranker>"`` (and ``"<stage>+none"``, the stage unreranked) and the
family declared before the run: every reranked arm against its own first
stage. :meth:`JointMatrix.run` runs them with :func:`hierret.study.experiment.run`.

Latency: :meth:`JointMatrix.prepare` has each reranker compute what depends
on the candidates alone (token or passage vectors), as a deployment would at
index time, so the latency traced is the query-time work;
:meth:`JointMatrix.cold_latency` times copies with nothing prepared
(:func:`unprepared`). Both are machine facts: given a
:class:`~hierret.study.measured.Measurements` (``memo``), each timed
reranker's query encodings (the vectors and the seconds each took,
:func:`kept_query_encodings`) and the cold latencies are kept, and a rerun on
the same machine with the same code, models, questions and candidates reuses
them instead of embedding again (the rankings come from the very vectors
measured, so no quality number moves).

:func:`matrix_table`, :func:`matrix_values` and :func:`plot_matrix` render a
run's result (the figure drawn by :func:`hierret.publish.charts.joint_matrix_figure`);
:func:`hierret.publish.record.key` is the record-key rule.

Examples
--------
>>> from hierret.encoders import HashEncoder
>>> from hierret.study.experiment import Arm
>>> from hierret.structure.hierarchy import build_hierarchy
>>> from hierret.search.profile import Profile
>>> from hierret.search.rerank import EncoderReranker
>>> from hierret.search.searcher import Searcher
>>> from hierret.structure.units import Corpus, Document, Query
>>> docs = [Document(f"d{i}", f"D{i}", t) for i, t in
...         enumerate(["Cats purr softly.", "Dogs bark loudly.", "Birds sing at dawn."])]
>>> s = Searcher(build_hierarchy(Corpus("pets", docs)), HashEncoder(dimension=16))
>>> m = JointMatrix({"bm25": Arm(Profile(ranker="bm25"), s)},
...                 {"rescore": EncoderReranker(HashEncoder(dimension=32))}, candidates=3)
>>> list(m.arms()), m.family()
(['bm25+none', 'bm25+rescore'], [('bm25+rescore', 'bm25+none')])
>>> q = [Query("q1", "do dogs bark", (("d1", 0, 17),)), Query("q2", "cats purr", (("d0", 0, 17),))]
>>> m.prepare(q)  # what run() does first: 3 distinct candidates prepared
3
>>> from hierret.evaluation.stats import StatsSettings
>>> result = m.run(q, "passages", metrics=["ndcg@10"], stats=StatsSettings(n_resamples=50))
>>> sorted(matrix_values(result, "pets"))[:2]
['pets_bm25_none_ndcg10', 'pets_bm25_none_ndcg10_high']
"""

from __future__ import annotations

import base64
import functools
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd
from numpy.typing import NDArray

import hierret.publish.charts as charts
import hierret.study.experiment as experiment
from hierret.datasets import Bundle
from hierret.encoders import Encoder
from hierret.encoders.cache import CachedEncoder
from hierret.evaluation.stats.evidence import TEST_COLUMN, Tested
from hierret.publish.record import key
from hierret.search.profile import Profile, Ranker
from hierret.search.rerank import (
    EncoderReranker,
    MaxSimReranker,
    QueryClock,
    Reranker,
    Selection,
    TokenEncoder,
)
from hierret.search.searcher import Searcher
from hierret.structure.hierarchy import Hierarchy
from hierret.structure.units import Level, Query
from hierret.study.experiment import Arm, Result
from hierret.study.measured import Measurements, text_digest

if TYPE_CHECKING:
    from hierret.publish.figures import Figure

__all__ = [
    "JointMatrix",
    "first_stages",
    "kept_query_encodings",
    "latency_values",
    "matrix_table",
    "matrix_values",
    "plot_matrix",
    "record_identity",
    "timed_reranker",
    "unprepared",
]


def timed_reranker(
    kind: str, encoder: Encoder | TokenEncoder, name: str, *, reduce: Literal["sum", "mean"] = "sum"
) -> Reranker:
    """A reranker set up for timing: candidates kept without limit, queries never cached.

    A MaxSim reranker over an encoder in a :class:`~hierret.encoders.cache.CachedEncoder`
    keeps its candidates' token matrices in that encoder's vector cache too, so
    a rerun reads them (what :meth:`JointMatrix.prepare` computes, untimed).

    ``kind`` ``"maxsim"`` gives a :class:`~hierret.search.rerank.MaxSimReranker`
    over ``encoder``'s token vectors (``reduce`` combines the per-token
    maxima); ``"encoder"`` an :class:`~hierret.search.rerank.EncoderReranker`
    (cosine under ``encoder``; candidates are kept when it is a
    :class:`~hierret.encoders.cache.CachedEncoder`). A query arrives once in a
    deployment, so its encoding is always timed.

    Examples
    --------
    >>> from hierret.encoders import HashEncoder
    >>> timed_reranker("encoder", HashEncoder(dimension=8), "rescore").identity.name
    'rescore'
    """
    if kind == "maxsim":
        return MaxSimReranker(
            encoder, reduce=reduce, cache_size=None, cache_queries=False, name=name
        )
    if kind == "encoder" and not isinstance(encoder, TokenEncoder):
        return EncoderReranker(encoder, name=name, cache_queries=False)
    raise ValueError(
        f"unknown reranker kind {kind!r} for {type(encoder).__name__}: use "
        "'maxsim' (any encoder) or 'encoder' (an Encoder)"
    )


def unprepared(reranker: Reranker) -> Reranker:
    """A copy of ``reranker`` that keeps nothing between calls, to time a cold start.

    A MaxSim reranker gets no token cache, in memory or on disk; an encoder
    reranker its encoder without a :class:`~hierret.encoders.cache.CachedEncoder`. Any
    other reranker (a cross-encoder has nothing to prepare) is returned as it is.

    Examples
    --------
    >>> from hierret.encoders.cache import VectorCache
    >>> from hierret.encoders import HashEncoder
    >>> raw = HashEncoder(dimension=8)
    >>> warm = EncoderReranker(CachedEncoder(raw, VectorCache(None)), name="e")
    >>> cold = unprepared(warm)
    >>> cold.encoder is raw, cold.identity.name
    (True, 'e')
    """
    name = reranker.identity.name
    if isinstance(reranker, MaxSimReranker):
        return MaxSimReranker(
            reranker.tokens, reduce=reranker.reduce, cache_size=0, name=name, cache=None
        )
    if isinstance(reranker, EncoderReranker):
        encoder = reranker.encoder
        while isinstance(encoder, CachedEncoder):
            encoder = encoder.encoder
        return EncoderReranker(encoder, name=name)
    return reranker


def model_key(reranker: Reranker) -> str:
    """What names a reranker's model and settings exactly: its identity line, with the
    identity key of its encoder or token encoder where it has one.

    Examples
    --------
    >>> from hierret.encoders import HashEncoder
    >>> enc = HashEncoder(dimension=8)
    >>> model_key(EncoderReranker(enc, name="e")).endswith(enc.identity.key())
    True
    """
    line = reranker.identity.describe()
    if isinstance(reranker, EncoderReranker):
        return f"{line} | {reranker.encoder.identity.key()}"
    if isinstance(reranker, MaxSimReranker) and reranker.token_identity is not None:
        return f"{line} | {reranker.token_identity.key()}"
    return line


def _array(value: Any) -> dict[str, Any]:
    array = np.ascontiguousarray(value)
    data = base64.b64encode(array.tobytes()).decode("ascii")
    return {"dtype": array.dtype.str, "shape": list(array.shape), "data": data}


def _unarray(data: Mapping[str, Any]) -> NDArray[Any]:
    raw = base64.b64decode(data["data"])
    array = np.frombuffer(raw, dtype=np.dtype(data["dtype"])).reshape(data["shape"])
    array.setflags(write=False)
    return array


class _NotKept(Exception):
    """Nothing kept, and measuring was not asked for."""


def kept_query_encodings(
    reranker: Reranker,
    queries: Sequence[str],
    memo: Measurements,
    *,
    measure: bool = True,
    warm_up: bool = True,
) -> int:
    """Give ``reranker``'s :class:`~hierret.search.rerank.QueryClock` each query's encoding and
    its time, kept from an earlier run (``memo``) or measured now; returns how many.

    Measuring embeds each distinct query alone, timed, after one untimed
    encoding (a model loaded on first use is not a query's time; ``warm_up``
    ``False`` leaves it to the caller), exactly as a timed
    :meth:`~hierret.search.rerank.Reranker.score` would. The vectors are kept bit for
    bit beside the times, so a rerun that reuses them ranks with the very
    vectors the measurement made. With ``measure`` ``False`` nothing is
    measured: 0 when nothing was kept. A reranker without a clock (it caches
    its queries, or has none to encode) is left as it is: 0.

    Examples
    --------
    >>> import tempfile
    >>> from hierret.encoders import HashEncoder
    >>> tmp = tempfile.TemporaryDirectory()
    >>> rr = EncoderReranker(HashEncoder(dimension=8), cache_queries=False)
    >>> kept_query_encodings(rr, ["why?", "how?"], Measurements(tmp.name), measure=False)
    0
    >>> kept_query_encodings(rr, ["why?", "how?", "why?"], Measurements(tmp.name))
    2
    >>> again = EncoderReranker(HashEncoder(dimension=8), cache_queries=False)
    >>> memo = Measurements(tmp.name)
    >>> kept_query_encodings(again, ["why?", "how?"], memo, measure=False), memo.reused
    (2, 1)
    >>> bool((again.query_clock.kept()["why?"][0] == rr.encode_query("why?")).all())
    True
    >>> tmp.cleanup()
    """
    clock = getattr(reranker, "query_clock", None)
    encode = getattr(reranker, "encode_query", None)
    if not isinstance(clock, QueryClock) or encode is None:
        return 0
    distinct = list(dict.fromkeys(queries))

    def timed() -> list[tuple[Any, float]]:
        if not measure:
            raise _NotKept
        if distinct and warm_up:
            encode(distinct[0])  # untimed warm-up: a lazy model loads here
        fresh = QueryClock[Any]()
        for query in distinct:
            fresh.encode(query, functools.partial(encode, query))
        return list(fresh.kept().values())

    inputs = {"reranker": model_key(reranker), "queries": text_digest(distinct)}
    try:
        kept = memo.recall(
            "query-encodings",
            inputs,
            timed,
            dump=lambda rows: [[_array(v), t] for v, t in rows],
            load=lambda rows: [(_unarray(v), float(t)) for v, t in rows],
        )
    except _NotKept:
        return 0
    if len(kept) != len(distinct):
        raise ValueError(f"the kept query encodings hold {len(kept)} of {len(distinct)} queries")
    for query, (value, seconds) in zip(distinct, kept, strict=True):
        clock.keep(query, value, seconds)
    return len(distinct)


def first_stages(
    hierarchy: Hierarchy,
    level: Level,
    specs: Mapping[str, tuple[Ranker, str]],
    encoders: Mapping[str, Encoder],
) -> dict[str, Arm]:
    """First stages by label from ``(ranker, encoder name)`` specs, one searcher per encoder.

    Each is ``Profile(level=level, ranker=ranker, vectors="first-window")``:
    a section or document is embedded as the encoder embeds its text (cut at
    its window).

    Examples
    --------
    >>> from hierret.encoders import HashEncoder
    >>> from hierret.structure.hierarchy import build_hierarchy
    >>> from hierret.structure.units import Corpus, Document
    >>> h = build_hierarchy(Corpus("c", [Document("d", "D", "Cats purr.")]))
    >>> arms = first_stages(h, "passages", {"bm25": ("bm25", "h"), "dense": ("dense", "h")},
    ...                     {"h": HashEncoder(dimension=8)})
    >>> arms["bm25"].searcher is arms["dense"].searcher, arms["dense"].profile.ranker
    (True, 'dense')
    """
    searchers = {e: Searcher(hierarchy, encoders[e]) for _, e in specs.values()}
    return {
        label: Arm(Profile(level=level, ranker=ranker, vectors="first-window"), searchers[e])
        for label, (ranker, e) in specs.items()
    }


def _ranked_level(arm: Arm) -> Level:
    return "sections" if arm.profile.level == "fused" else arm.profile.level


@dataclass(frozen=True)
class JointMatrix:
    """First stages crossed with rerankers, each reranker reading the same candidates.

    Parameters
    ----------
    stages : mapping of str to Arm
        First stages by label: a profile without reranker and the searcher
        that runs it (arms of different encoders have their own searchers).
    rerankers : mapping of str to Reranker
        By the names profiles use.
    candidates : int, default 20
        First-stage units every reranker reorders, and the ranking length.
    unreranked : str or None, default "none"
        Suffix of the arm that keeps each stage's order; ``None``: no such
        arms (and no family).
    memo : Measurements, optional
        Keeps the timed rerankers' query encodings (:meth:`prepare`) and the
        cold latencies (:meth:`cold_latency`), reused on this machine while
        nothing they depend on changed (:mod:`hierret.study.measured`).

    Notes
    -----
    An :class:`~hierret.search.rerank.EncoderReranker` over a dense first stage of
    the same encoder can only reproduce that stage's order: that arm is left
    out.
    """

    stages: Mapping[str, Arm]
    rerankers: Mapping[str, Reranker]
    candidates: int = 20
    unreranked: str | None = "none"
    memo: Measurements | None = None

    def _redundant(self, stage: Arm, reranker: Reranker) -> bool:
        searcher = stage.searcher
        return (
            isinstance(reranker, EncoderReranker)
            and stage.profile.ranker == "dense"
            and searcher is not None
            and reranker.encoder.identity.key() == searcher.encoder.identity.key()
        )

    def arms(self) -> dict[str, Arm]:
        """``"<stage>+<reranker>"`` arms, stage by stage, the unreranked one first."""
        names = [self.unreranked] if self.unreranked is not None else []
        out: dict[str, Arm] = {}
        for label, stage in self.stages.items():
            for rr in [*names, *self.rerankers]:
                if rr in self.rerankers and self._redundant(stage, self.rerankers[rr]):
                    continue
                profile = replace(
                    stage.profile,
                    name=f"{label}+{rr}",
                    selection=Selection(),
                    candidates=self.candidates,
                    reranker=None if rr == self.unreranked else rr,
                )
                out[f"{label}+{rr}"] = Arm(profile, stage.searcher)
        return out

    def family(self) -> list[tuple[str, str]]:
        """Every reranked arm against its own first stage unreranked, in arm order."""
        if self.unreranked is None:
            return []
        arms = self.arms()
        return [
            (name, f"{name.rsplit('+', 1)[0]}+{self.unreranked}")
            for name, arm in arms.items()
            if arm.profile.reranker is not None
        ]

    def prepare(self, queries: Sequence[Query]) -> int:
        """Run every first stage and have every reranker prepare the union of candidates.

        Each reranker then scores one pair untimed (a warm-up). With a
        ``memo``, each timed reranker's clock gets every query's encoding and
        its time (:func:`kept_query_encodings`): those kept from an earlier run
        before the warm-ups, which then embed nothing; the others are measured
        after every reranker's warm-up, in the state in which the queries
        were always timed (one engine's settings can change another's last
        bits: e5's engine sets OpenMP's thread count, which MiniLM's float32
        sums follow). Returns the number of distinct candidates prepared.
        """
        texts: dict[str, str] = {}
        for stage in self.stages.values():
            assert stage.searcher is not None, "every stage needs its searcher"
            run = stage.searcher.run(queries, stage.profile, k=self.candidates)
            h = stage.searcher.hierarchy
            units = {u.id: u for u in h.units(_ranked_level(stage))}
            texts |= {uid: h.text(units[uid]) for r in run.values() for uid, _ in r}
        pool = sorted(texts)
        words = [q.text for q in queries]
        todo = []  # timed rerankers whose query encodings are measured after the warm-ups
        for reranker in self.rerankers.values():
            reranker.prepare([texts[u] for u in pool])
            clock = getattr(reranker, "query_clock", None)
            kept = self.memo is not None and kept_query_encodings(
                reranker, words, self.memo, measure=False
            )
            if pool:
                reranker.score(queries[0].text, [texts[pool[0]]])
            if isinstance(clock, QueryClock):  # the warm-up's encoding is not a timing
                clock.take() if kept else clock.clear()
                todo += [] if kept else [reranker]
        memo = self.memo
        for reranker in todo if memo is not None else ():
            assert memo is not None
            kept_query_encodings(reranker, words, memo, warm_up=not pool)
        return len(pool)

    @staticmethod
    def first_stages(
        hierarchy: Hierarchy,
        level: Level,
        specs: Mapping[str, tuple[Ranker, str]],
        encoders: Mapping[str, Encoder],
    ) -> dict[str, Arm]:
        """First stages by label from ``(ranker, encoder name)`` specs (:func:`first_stages`)."""
        return first_stages(hierarchy, level, specs, encoders)

    @staticmethod
    def timed_reranker(
        kind: str,
        encoder: Encoder | TokenEncoder,
        name: str,
        *,
        reduce: Literal["sum", "mean"] = "sum",
    ) -> Reranker:
        """A reranker set up for timing (:func:`timed_reranker`)."""
        return timed_reranker(kind, encoder, name, reduce=reduce)

    def table(self, result: Result, interval: str = "ndcg@10") -> pd.DataFrame:
        """One row per arm of this matrix's ``result`` (:meth:`run`): each metric's mean,
        ``interval``'s bounds, the added latency (:func:`matrix_table`)."""
        return matrix_table(result, interval)

    @staticmethod
    def plot(results: Mapping[str, Result], metric: str = "ndcg@10") -> Figure:
        """Several matrices' results (a row per corpus) in one figure (:func:`plot_matrix`)."""
        return plot_matrix(results, metric)

    @staticmethod
    def identity(
        encoders: Mapping[str, Encoder],
        rerankers: Mapping[str, Reranker],
        corpora: Mapping[str, tuple[Any, ...]],
        *results: Mapping[str, Result],
    ) -> dict[str, Any]:
        """What a reranking record states about how it ran (:func:`record_identity`)."""
        return record_identity(encoders, rerankers, corpora, *results)

    def values(
        self, result: Result, prefix: str, cold: pd.DataFrame | None = None
    ) -> dict[str, float]:
        """:func:`matrix_values` and :func:`latency_values` of ``cold``, with the sizes.

        Adds ``{prefix}_questions`` (questions judged) and ``{prefix}_units``
        (units of the target level in the first stage's hierarchy).
        """
        target = result.targets[0]
        searcher = next(iter(self.stages.values())).searcher
        assert searcher is not None, "every stage needs its searcher"
        out: dict[str, float] = {
            f"{prefix}_questions": len(result.per_query(target, result.metrics[0])),
            f"{prefix}_units": len(searcher.units(target)),  # type: ignore[arg-type]
        }
        out |= matrix_values(result, prefix)
        return out | (latency_values(cold, prefix) if cold is not None else {})

    def run(
        self, queries: Sequence[Query], target: Level, *, prepare: bool = True, **options: Any
    ) -> Result:
        """:func:`hierret.study.experiment.run` of :meth:`arms` with :meth:`family`.

        With ``prepare`` (the default), :meth:`prepare` runs first, so the
        latency traced is the query-time work. The baseline is the first
        arm; rankings are ``candidates`` long; ``options`` (``metrics``,
        ``qrels``, ``stats``, ...) go through.
        """
        if prepare:
            self.prepare(queries)
        arms = self.arms()
        return experiment.run(
            arms,
            queries,
            targets=[target],
            baseline=next(iter(arms)),
            family=self.family(),
            k=self.candidates,
            rerankers=self.rerankers,
            **options,
        )

    def cold_latency(
        self,
        stage: str,
        queries: Sequence[Query],
        sample: int | None = None,
        rng: np.random.Generator | None = None,
    ) -> pd.DataFrame:
        """Reranking time per query on ``stage``'s candidates, with nothing prepared.

        ``sample`` questions drawn by ``rng`` (without replacement, kept in
        their order) are timed; ``None``: all of them. Returns one row per
        reranker: ``reranker``, ``first stage``, ``mean ms``, ``p90 ms``,
        ``queries``. Machine-dependent: with a ``memo``, a table measured before
        on this machine with the same code, rerankers, questions and first-stage
        candidates (ids and texts) is reused.
        """
        if sample is not None:
            draw = (rng or np.random.default_rng(0)).choice(
                len(queries), size=min(sample, len(queries)), replace=False
            )
            queries = [queries[i] for i in sorted(draw)]
        arm = self.stages[stage]
        assert arm.searcher is not None, "the stage needs its searcher"
        if self.memo is None:
            return self._cold_latency(stage, queries)
        run = arm.searcher.run(queries, arm.profile, k=self.candidates)
        h = arm.searcher.hierarchy
        units = {u.id: u for u in h.units(_ranked_level(arm))}
        shown = [f"{q.text}\0{uid}\0{h.text(units[uid])}" for q in queries for uid, _ in run[q.id]]
        inputs = {
            "stage": [stage, asdict(arm.profile), arm.searcher.encoder.identity.key()],
            "rerankers": {rr: model_key(r) for rr, r in self.rerankers.items()},
            "candidates": [self.candidates, text_digest(shown)],
        }
        return self.memo.recall_frame(
            "cold-latency", inputs, lambda: self._cold_latency(stage, queries).set_index("reranker")
        ).reset_index()

    def _cold_latency(self, stage: str, queries: Sequence[Query]) -> pd.DataFrame:
        arm = self.stages[stage]
        assert arm.searcher is not None, "the stage needs its searcher"
        rows = []
        for rr, reranker in self.rerankers.items():
            profile = replace(
                arm.profile, name=f"{stage}+{rr} (cold)", reranker=rr, candidates=self.candidates
            )
            lat = arm.searcher.trace(
                queries, profile, k=self.candidates, rerankers={rr: unprepared(reranker)}
            ).latency()
            rows.append(
                {
                    "reranker": rr,
                    "first stage": stage,
                    "mean ms": lat.mean_ms,
                    "p90 ms": lat.p90_ms,
                    "queries": lat.n,
                }
            )
        return pd.DataFrame(
            rows, columns=["reranker", "first stage", "mean ms", "p90 ms", "queries"]
        )


def matrix_table(result: Result, interval: str = "ndcg@10") -> pd.DataFrame:
    """One row per arm: each metric's mean, ``interval``'s bounds, the added latency (ms)."""
    target = result.targets[0]
    table = pd.DataFrame({m: result.table(target, m)["mean"] for m in result.metrics})
    bounds = result.table(target, interval)
    table[f"{interval} low"], table[f"{interval} high"] = bounds["low"], bounds["high"]
    added = {a: t.latency() for a, t in result.traces.items() if t.profile.reranker}
    table["added ms (mean)"] = pd.Series({a: lat.mean_ms for a, lat in added.items()})
    table["added ms (p90)"] = pd.Series({a: lat.p90_ms for a, lat in added.items()})
    return table


def matrix_values(result: Result, prefix: str) -> dict[str, float]:
    """Record values of a joint matrix's result, keyed by :func:`hierret.publish.record.key`.

    For every arm and metric: ``{prefix}_{arm}_{metric}`` (the mean), ``…_low``
    and ``…_high``; for every family pair, ``{prefix}_{arm}_vs_first_{metric}_``
    ``diff``, ``diff_low``, ``diff_high`` and ``p_holm`` (Holm over the family,
    per metric); for every reranked arm, ``{prefix}_{arm}_ms_mean`` and
    ``…_ms_p90`` (added latency, machine-dependent).
    """
    out: dict[str, float] = {}
    for m in result.metrics:
        table = result.table(result.targets[0], m)
        for arm in table.index:
            for col in ("mean", "low", "high"):
                out[key(prefix, arm, m, "" if col == "mean" else col)] = float(table.loc[arm, col])
        for _, row in result.tests(m).iterrows():
            for col in ("diff", "diff_low", "diff_high", "p_holm"):
                out[key(prefix, row["arm_a"], "vs_first", m, col)] = float(row[col])
            diff = key(prefix, row["arm_a"], "vs_first", m, "diff")
            out[diff] = Tested(out[diff], row[TEST_COLUMN])  # the difference carries its test
    for arm, trace in result.traces.items():
        if trace.profile.reranker is not None:
            lat = trace.latency()
            out[key(prefix, arm, "ms_mean")] = float(lat.mean_ms)
            out[key(prefix, arm, "ms_p90")] = float(lat.p90_ms)
    return out


def latency_values(table: pd.DataFrame, prefix: str, name: str = "cold_ms") -> dict[str, float]:
    """Record values of :meth:`JointMatrix.cold_latency`: ``{prefix}_{reranker}_{name}_mean|p90``.

    Examples
    --------
    >>> t = pd.DataFrame([{"reranker": "maxsim", "mean ms": 9.0, "p90 ms": 12.0}])
    >>> latency_values(t, "pyref")
    {'pyref_maxsim_cold_ms_mean': 9.0, 'pyref_maxsim_cold_ms_p90': 12.0}
    """
    return {
        key(prefix, x["reranker"], name, stat): float(x[f"{stat} ms"])
        for x in table.to_dict("records")
        for stat in ("mean", "p90")
    }


def record_identity(
    encoders: Mapping[str, Encoder],
    rerankers: Mapping[str, Reranker],
    corpora: Mapping[str, tuple[Any, ...]],
    *results: Mapping[str, Result],
) -> dict[str, Any]:
    """What a reranking record states about how it ran.

    Parameters
    ----------
    encoders, rerankers : mapping
        Their identities are recorded.
    corpora : mapping of str to (Bundle, Hierarchy, level, ...)
        Per corpus: the bundle's identity, the hierarchy's and the level
        judged (``target``).
    *results : mapping of corpus name to Result
        Every profile run, keyed ``"<corpus> · <profile name>"``, as a
        dictionary.
    """
    return {
        "encoders": {n: e.identity.describe() for n, e in encoders.items()},
        "rerankers": {n: asdict(r.identity) for n, r in rerankers.items()},
        "profiles": {
            f"{c} · {t.profile.name}": t.profile.as_dict()
            for runs in results
            for c, r in runs.items()
            for t in r.traces.values()
        },
        "corpora": {
            c: {**_bundle(b).identity(), **_hierarchy(h).identity(), "target": level}
            for c, (b, h, level, *_) in corpora.items()
        },
    }


def _bundle(value: object) -> Bundle:
    if not isinstance(value, Bundle):
        raise TypeError(f"expected a Bundle first in each corpus tuple, got {type(value)}")
    return value


def _hierarchy(value: object) -> Hierarchy:
    if not isinstance(value, Hierarchy):
        raise TypeError(f"expected a Hierarchy second in each corpus tuple, got {type(value)}")
    return value


def plot_matrix(results: Mapping[str, Result], metric: str = "ndcg@10") -> Figure:
    """Per corpus (a row): every arm's mean, and each reranked arm minus its first stage.

    Dots are means over the questions, bars their bootstrap intervals at the
    result's confidence; the right panel's zero line is "no change". Drawn by
    :func:`hierret.publish.charts.joint_matrix_figure` from each result's table
    at its first target and its declared tests.
    """
    return charts.joint_matrix_figure(
        {name: r.table(r.targets[0], metric) for name, r in results.items()},
        {name: r.tests(metric).set_index("arm_a") for name, r in results.items()},
        metric,
        {name: r.confidence for name, r in results.items()},
    )
