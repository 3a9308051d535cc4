"""Do two ways of scoring the same units agree? Two precisions of a model; dot vs cosine.

Two measurements an encoder decision needs and no index can make, because
an index refuses both on purpose:

:func:`precision_agreement`
    Two encoders that share one vector space (a quantised model and its
    full-precision original): the cosine between their vectors of every unit
    and of every query, separately for units longer than the reference's
    token window, and what changes when the reference's unit vectors are
    searched with the other encoder's query vectors (top-``n`` overlap and
    the change of a metric, dense alone and fused with a lexical run). An
    index built by one encoder refuses the other's queries (the identity
    guard), so the scores are computed here directly.
:func:`normalization_effect`
    One encoder's raw (unnormalised) vectors ranked by inner product, against
    the unit vectors every index holds: what L2 normalisation changes.

:func:`identity_guard` shows the guard at work: what an index says when it is
searched with another encoder's query vectors.

:func:`score_run` (a run from a query × unit score matrix, ranked by the
package's tie rule) and :func:`top_overlap` are the pieces both use.

Examples
--------
>>> import numpy as np
>>> scores = np.array([[0.1, 0.9, 0.5], [0.7, 0.2, 0.7]])
>>> score_run(["q1", "q2"], ["a", "b", "c"], scores, k=2)
{'q1': [('b', 0.9), ('c', 0.5)], 'q2': [('c', 0.7), ('a', 0.7)]}
>>> top_overlap({"q": [("a", 1.0), ("b", 0.5)]}, {"q": [("b", 0.9), ("c", 0.1)]}, n=2)
0.5
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

import hierret.publish.charts as charts
from hierret.encoders import Encoder
from hierret.evaluation.metrics import evaluate
from hierret.search.profile import Profile
from hierret.search.rankers.fusion import rrf
from hierret.search.runs import Run, rank
from hierret.search.searcher import Searcher
from hierret.search.vectors.index import IdentityMismatchError
from hierret.structure.units import Level
from hierret.study.testbed import Testbed

if TYPE_CHECKING:
    from pandas.io.formats.style import Styler

    from hierret.publish.figures import Axes, Figure

__all__ = [
    "TIE_TOLERANCE",
    "PrecisionAgreement",
    "identity_guard",
    "normalization_effect",
    "precision_agreement",
    "score_run",
    "top_overlap",
]


#: Scores closer than this rank as tied in :func:`precision_agreement` (by id, the package's
#: tie rule). Declared before the runs it applies to: about 25 times the largest change of a
#: MiniLM query-passage cosine measured across PyTorch's kernel paths on one machine (3.9e-7,
#: ``ATEN_CPU_CAPABILITY=default``, ``ONEDNN_MAX_CPU_ISA=SSE41``, ``MKL_CBWR=COMPATIBLE``
#: against the default AVX2 path), and well below the gaps that separate distinct passages.
TIE_TOLERANCE = 1e-5


def score_run(
    query_ids: Sequence[str],
    unit_ids: Sequence[str],
    scores: NDArray[Any],
    k: int = 100,
    tolerance: float = 0.0,
) -> Run:
    """The top ``k`` units per query from a score matrix, ties broken by unit id.

    Parameters
    ----------
    query_ids : sequence of str
        One per row of ``scores``.
    unit_ids : sequence of str
        One per column of ``scores``.
    scores : array, shape (n_queries, n_units)
        Any score, higher is better (e.g. query vectors @ unit vectors.T).
    k : int, default 100
        Ranking length.
    tolerance : float, default 0.0
        Scores closer than this are tied (:func:`hierret.search.runs.rank`).
    """
    if np.shape(scores) != (len(query_ids), len(unit_ids)):
        raise ValueError(
            f"scores has shape {np.shape(scores)}, expected "
            f"({len(query_ids)}, {len(unit_ids)}): one row per query, one "
            "column per unit"
        )
    return {
        q: rank(dict(zip(unit_ids, map(float, row), strict=True)), tolerance)[:k]
        for q, row in zip(query_ids, scores, strict=True)
    }


def top_overlap(a: Run, b: Run, n: int = 10) -> float:
    """Mean share of ``a``'s top ``n`` units that are in ``b``'s top ``n``, over ``a``'s queries.

    Each query counts ``|top_n(a) ∩ top_n(b)| / n``; a query missing from ``b``
    counts 0.
    """
    if not a:
        raise ValueError("the run a has no query: nothing to compare")
    return float(
        np.mean([len({u for u, _ in a[q][:n]} & {u for u, _ in b.get(q, [])[:n]}) / n for q in a])
    )


@dataclass(frozen=True)
class PrecisionAgreement:
    """What :func:`precision_agreement` measured.

    Attributes
    ----------
    units : ndarray
        Cosine between the two encoders' vectors of each unit.
    long : ndarray of bool
        Units longer than the reference encoder's token window.
    queries : ndarray
        Cosine between the two encoders' vectors of each query.
    rankings : DataFrame
        One row per first stage (``dense``, and ``hybrid`` when asked for):
        ``top-n overlap`` of the rankings searched with the reference's and
        with the other's query vectors, and the change of the metric's mean
        (other − reference), e.g. ``ΔnDCG@10``.
    names : (str, str)
        Labels of the reference and the other encoder: their precisions when
        they are one model (``("fp32", "int8")``), else their names.
    tolerance : float
        Dense scores closer than this ranked as tied.
    """

    units: NDArray[Any]
    long: NDArray[np.bool_]
    queries: NDArray[Any]
    rankings: pd.DataFrame
    names: tuple[str, str] = ("reference", "other")
    tolerance: float = 0.0

    def vectors(self) -> pd.Series:
        """The cosines summarised: min and mean over units, long units and queries."""
        long = self.units[self.long]
        return pd.Series(
            {
                "passages_min": float(self.units.min()),
                "passages_mean": float(self.units.mean()),
                "long_n": int(self.long.sum()),
                "long_min": float(long.min()) if len(long) else float("nan"),
                "long_mean": float(long.mean()) if len(long) else float("nan"),
                "queries_min": float(self.queries.min()),
                "queries_mean": float(self.queries.mean()),
            },
            name="cosine",
            dtype=object,
        )

    def tables(self) -> list[Styler]:
        """:meth:`vectors` and :attr:`rankings` as captioned tables for a page.

        Cosines are shown to four decimals: they differ from 1 in the fourth.
        """
        from hierret.publish.tables import styled

        other, reference = self.names[1], self.names[0]
        return [
            styled(self.vectors(), f"Cosine, {other} vs {reference}", decimals=4),
            styled(self.rankings, f"{other} queries, {reference} index"),
        ]

    def plot(self, ax: Axes | None = None, xlabel: str | None = None) -> Figure:
        """Histogram of the unit cosines, within the window and beyond it; the figure.

        Drawn by :func:`hierret.publish.charts.cosine_histogram`.
        """
        return charts.cosine_histogram(
            self.units, self.long, names=self.names, ax=ax, xlabel=xlabel
        )

    def values(self) -> dict[str, float]:
        """Flat record values: :meth:`vectors`, then ``{stage}_overlap``, ``{stage}_delta``,
        and the ``tolerance`` the rankings were made with."""
        out = {str(k): v for k, v in self.vectors().items()} | {"tolerance": self.tolerance}
        for stage, row in self.rankings.iterrows():
            out[f"{stage}_overlap"], out[f"{stage}_delta"] = (
                float(row.iloc[0]),
                float(row.iloc[1]),
            )
        return out


def precision_agreement(
    reference: Encoder,
    other: Encoder,
    bed: Testbed,
    *,
    level: Level | None = None,
    hybrid: bool = True,
    metric: str = "ndcg@10",
    k: int = 100,
    n: int = 10,
    rrf_k: int = 60,
    tolerance: float = TIE_TOLERANCE,
) -> PrecisionAgreement:
    """Compare two encoders of one vector space on the same units and queries.

    Parameters
    ----------
    reference, other : Encoder
        Same dimension; ``reference`` is the one whose unit vectors are searched
        (e.g. fp32), ``other`` the one whose query vectors are swapped in (e.g.
        int8). Cached encoders are fine.
    bed : Testbed
        The units, their texts, the questions and their judgments.
    level : {"passages", "sections", "documents"}, optional
        The units compared (default: the testbed's level); their texts are
        embedded as the encoders embed any text.
    hybrid : bool, default True
        Also fuse each dense run with the testbed's BM25 run (its top ``k``,
        ranked by :class:`~hierret.search.searcher.Searcher` as any BM25 profile is)
        by reciprocal rank fusion (``rrf_k``, pool ``k``), as a hybrid first
        stage does: the ``hybrid`` row.
    metric : str, default "ndcg@10"
        The metric whose change is reported.
    k : int, default 100
        Ranking length of the dense runs.
    n : int, default 10
        Depth of the overlap.
    rrf_k : int, default 60
        Reciprocal rank fusion constant.
    tolerance : float, default :data:`TIE_TOLERANCE`
        Dense scores closer than this rank as tied, ordered by unit id. The
        two encoders' runs differ by design, but each run also moves in its
        last float32 bits with the CPU's kernels; a near tie at the top
        ``n`` boundary (or anywhere the hybrid's ranks are fused) would then
        make the overlap and the metric change depend on the CPU model. With
        ties counted as ties, they do only when a gap between two scores lies
        within the kernels' variation of ``tolerance`` itself. ``0`` ranks by
        the raw floats.

    Returns
    -------
    PrecisionAgreement

    Raises
    ------
    ValueError
        The encoders' dimensions differ (their vectors cannot be compared).

    Examples
    --------
    >>> from hierret.encoders import HashEncoder
    >>> bed = Testbed.load("python-reference", max_queries=3, max_docs=4)
    >>> enc = HashEncoder(dimension=32)
    >>> agree = precision_agreement(enc, enc, bed)
    >>> agree.values()["passages_min"] > 0.999, agree.values()["dense_overlap"]
    (True, 1.0)
    """
    if reference.identity.dimension != other.identity.dimension:
        raise ValueError(
            f"{reference.identity.name} ({reference.identity.dimension} dims) and "
            f"{other.identity.name} ({other.identity.dimension} dims) do not share "
            "a vector space: give two encoders of one model"
        )
    texts, queries, qrels = bed.texts(level), bed.queries, bed.qrels(level)
    unit_ids = [u.id for u in bed.units(level)]
    a, b = reference.encode_passages(texts), other.encode_passages(texts)
    long = np.array(reference.count_tokens(texts)) > reference.identity.window
    qtexts = [q.text for q in queries]
    qa, qb = reference.encode_queries(qtexts), other.encode_queries(qtexts)
    ids = [q.id for q in queries]
    dense = {
        "reference": score_run(ids, unit_ids, qa @ a.T, k, tolerance),
        "other": score_run(ids, unit_ids, qb @ a.T, k, tolerance),
    }
    stages: dict[str, Mapping[str, Run]] = {"dense": dense}
    if hybrid:
        bm25 = Profile(level=level or bed.level, ranker="bm25")
        lexical = Searcher(bed.hierarchy, reference).run(queries, bm25, k=k)
        stages["hybrid"] = {
            side: {q: rrf([r[q], lexical[q]], rrf_k, k) for q in r} for side, r in dense.items()
        }
    rows = {}
    for stage, runs in stages.items():
        means = {
            side: np.mean(list(evaluate(r, qrels, [metric])[metric].values()))
            for side, r in runs.items()
        }
        rows[stage] = {
            f"top-{n} overlap": top_overlap(runs["reference"], runs["other"], n),
            f"Δ{_label(metric)}": float(means["other"] - means["reference"]),
        }
    return PrecisionAgreement(
        np.sum(a * b, axis=1),
        long,
        np.sum(qa * qb, axis=1),
        pd.DataFrame.from_dict(rows, orient="index"),
        _names(reference, other),
        tolerance,
    )


def _names(reference: Encoder, other: Encoder) -> tuple[str, str]:
    """Labels for the two encoders: their precisions when they are one model."""
    a, b = reference.identity, other.identity
    return (a.precision, b.precision) if a.name == b.name else (a.name, b.name)


def _label(metric: str) -> str:
    """``ndcg@10`` as readers write it: ``nDCG@10``."""
    return metric.replace("ndcg", "nDCG").replace("mrr", "MRR")


def normalization_effect(
    encoder: Encoder,
    bed: Testbed,
    *,
    level: Level | None = None,
    metric: str = "ndcg@10",
    k: int = 100,
    probe: int = 8,
    atol: float = 1e-3,
) -> dict[str, float]:
    """The metric of ``encoder``'s raw vectors ranked by inner product, and their norms.

    Indexes hold L2-normalised vectors, so their inner product is the
    cosine; this ranks the model's own vectors
    (:meth:`~hierret.encoders.Encoder.encode_unnormalized`) by inner product
    instead. A model that normalises inside itself has nothing to ablate: when
    the first ``probe`` texts' raw vectors all have norm 1 (within ``atol``),
    only their norms are returned.

    Parameters
    ----------
    encoder : Encoder
        A :class:`~hierret.encoders.cache.CachedEncoder` keeps the raw vectors under
        their own identity (``normalized=False``); any other embeds them anew.
    bed : Testbed
        The units, their texts, the questions and their judgments.
    level : {"passages", "sections", "documents"}, optional
        The units ranked (default: the testbed's level).
    metric : str, default "ndcg@10"
    k : int, default 100
        Ranking length.
    probe : int, default 8
        Texts embedded to tell whether the model normalises itself.
    atol : float, default 1e-3
        Tolerance on a norm of 1.

    Returns
    -------
    dict
        ``norm min``, ``norm max`` (over the units, or over the probe when the
        model normalises itself) and, unless it does, ``{metric} inner
        product``: the mean of the metric over the judged queries.

    Examples
    --------
    >>> from hierret.encoders import HashEncoder
    >>> bed = Testbed.load("python-reference", max_queries=3, max_docs=4)
    >>> sorted(normalization_effect(HashEncoder(dimension=32), bed))
    ['ndcg@10 inner product', 'norm max', 'norm min']
    """
    texts = bed.texts(level)
    sample = np.linalg.norm(encoder.encode_unnormalized(texts[:probe], "passage"), axis=1)
    if np.allclose(sample, 1.0, atol=atol):
        return {"norm min": float(sample.min()), "norm max": float(sample.max())}
    units = encoder.encode_unnormalized(texts, "passage")
    vecs = encoder.encode_unnormalized([q.text for q in bed.queries], "query")
    norms = np.linalg.norm(units, axis=1)
    run = score_run(
        [q.id for q in bed.queries], [u.id for u in bed.units(level)], vecs @ units.T, k
    )
    mean = np.mean(list(evaluate(run, bed.qrels(level), [metric])[metric].values()))
    return {
        "norm min": float(norms.min()),
        "norm max": float(norms.max()),
        f"{metric} inner product": float(mean),
    }


def identity_guard(
    reference: Encoder, other: Encoder, bed: Testbed, query: str = "what does finally do?"
) -> str:
    """What the identity guard says when ``reference``'s index is searched with ``other``'s
    query vectors: the error an index raises, as a line to print.

    The index of ``bed``'s units at its level (``first-window`` vectors, the
    :class:`~hierret.search.searcher.Searcher` of ``reference``) is searched with
    ``other``'s vector of ``query``; it refuses, naming both identities.

    Raises
    ------
    ValueError
        ``reference`` and ``other`` have the same identity: nothing is refused.

    Examples
    --------
    >>> from hierret.encoders import HashEncoder
    >>> bed = Testbed.load("python-reference", max_queries=2, max_docs=3)
    >>> line = identity_guard(HashEncoder(dimension=8), HashEncoder(8, window=128), bed)
    >>> line.startswith("IdentityMismatchError: ")
    True
    >>> identity_guard(HashEncoder(dimension=8), HashEncoder(dimension=8), bed)
    Traceback (most recent call last):
    ...
    ValueError: hash-8... is the identity of the index: ...
    """
    index = bed.searcher(reference).dense_index(bed.level, "first-window")
    try:
        index.search(other.encode_queries([query]), 5, other.identity)
    except IdentityMismatchError as exc:
        return f"IdentityMismatchError: {exc}"
    raise ValueError(
        f"{other.identity.describe()} is the identity of the index: give an encoder of "
        "another identity (the guard refuses only a mismatch)"
    )
