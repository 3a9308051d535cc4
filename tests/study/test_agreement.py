"""Agreement between two scorings of the same units, checked against direct computation."""

from __future__ import annotations

import numpy as np
import pytest

from hierret.encoders import HashEncoder
from hierret.evaluation import evaluate
from hierret.search.profile import Profile
from hierret.search.rankers.fusion import rrf
from hierret.search.searcher import Searcher
from hierret.study.agreement import (
    TIE_TOLERANCE,
    normalization_effect,
    precision_agreement,
    score_run,
    top_overlap,
)
from hierret.study.testbed import Testbed


@pytest.fixture(scope="module")
def bed() -> Testbed:
    return Testbed.load("python-reference", max_queries=8, max_docs=10)


class Noisy(HashEncoder):
    """A hash encoder whose vectors are nudged: a stand-in for a lower-precision twin."""

    def __init__(self, scale: float) -> None:
        super().__init__(dimension=64, window=40)
        self.scale = scale

    def _embed(self, texts: list[str]) -> np.ndarray:
        base = super()._embed(texts)
        rng = np.random.default_rng(len(texts))
        return base + self.scale * rng.standard_normal(base.shape)


def test_score_run_ranks_by_score_with_the_tie_rule_and_checks_the_shape() -> None:
    run = score_run(["q"], ["b", "a", "c"], np.array([[1.0, 1.0, 2.0]]), k=2)
    assert run == {"q": [("c", 2.0), ("b", 1.0)]}  # ties: ids descending
    with pytest.raises(ValueError, match="one row per query"):
        score_run(["q1", "q2"], ["a"], np.zeros((1, 1)))


def test_top_overlap_counts_shared_units_over_n() -> None:
    a = {"q1": [("x", 1.0), ("y", 0.5)], "q2": [("x", 1.0)]}
    b = {"q1": [("y", 3.0), ("z", 1.0)]}
    assert top_overlap(a, b, n=2) == pytest.approx((1 / 2 + 0) / 2)
    with pytest.raises(ValueError, match="no query"):
        top_overlap({}, b)


def test_an_encoder_agrees_with_itself(bed: Testbed) -> None:
    enc = HashEncoder(dimension=64, window=40)
    agree = precision_agreement(enc, enc, bed)
    assert np.allclose(agree.units, 1.0, atol=1e-6)
    assert np.allclose(agree.queries, 1.0, atol=1e-6)
    assert agree.rankings.to_dict("index") == {
        "dense": {"top-10 overlap": 1.0, "ΔnDCG@10": 0.0},
        "hybrid": {"top-10 overlap": 1.0, "ΔnDCG@10": 0.0},
    }


def test_precision_agreement_is_the_direct_computation(bed: Testbed) -> None:
    ref, other = HashEncoder(dimension=64, window=40), Noisy(0.3)
    agree = precision_agreement(ref, other, bed, n=5, tolerance=0.0)  # the raw floats
    texts, ids = bed.texts(), [u.id for u in bed.units()]
    a, b = ref.encode_passages(texts), other.encode_passages(texts)
    qs = [q.text for q in bed.queries]
    qa, qb = ref.encode_queries(qs), other.encode_queries(qs)
    cos = np.array([float(x @ y) for x, y in zip(a, b, strict=True)])
    assert np.allclose(agree.units, cos, atol=1e-6)
    assert agree.long.tolist() == [n > 40 for n in ref.count_tokens(texts)]
    assert agree.long.any()
    assert not agree.long.all()
    # the dense rows: the reference's unit vectors searched with each side's queries
    qids = [q.id for q in bed.queries]
    mine = score_run(qids, ids, qa @ a.T)
    swapped = score_run(qids, ids, qb @ a.T)
    bm25 = Searcher(bed.hierarchy, ref).run(bed.queries, Profile(ranker="bm25"), k=100)
    for stage, (r0, r1) in {
        "dense": (mine, swapped),
        "hybrid": (
            {q: rrf([mine[q], bm25[q]], 60, 100) for q in qids},
            {q: rrf([swapped[q], bm25[q]], 60, 100) for q in qids},
        ),
    }.items():
        nd = [
            np.mean(list(evaluate(r, bed.qrels(), ["ndcg@10"])["ndcg@10"].values()))
            for r in (r0, r1)
        ]
        shared = np.mean(
            [len({u for u, _ in r0[q][:5]} & {u for u, _ in r1[q][:5]}) / 5 for q in qids]
        )
        assert agree.rankings.loc[stage, "top-5 overlap"] == pytest.approx(shared)
        assert agree.rankings.loc[stage, "ΔnDCG@10"] == pytest.approx(nd[1] - nd[0])
    values = agree.values()
    assert values["long_n"] == int(agree.long.sum())
    assert values["passages_min"] == pytest.approx(cos.min())
    assert set(values) == {
        "passages_min",
        "passages_mean",
        "long_n",
        "long_min",
        "long_mean",
        "queries_min",
        "queries_mean",
        "tolerance",
        "dense_overlap",
        "dense_delta",
        "hybrid_overlap",
        "hybrid_delta",
    }
    assert agree.names == ("fp32", "fp32")  # one model: named by precision
    assert agree.plot().axes[0].get_xlabel() == "cosine(fp32, fp32) per unit"


def test_dense_agreement_only_when_asked_and_same_width_required(bed: Testbed) -> None:
    enc = HashEncoder(dimension=64)
    assert list(precision_agreement(enc, Noisy(0.1), bed, hybrid=False).rankings.index) == ["dense"]
    with pytest.raises(ValueError, match="do not share a vector space"):
        precision_agreement(enc, HashEncoder(dimension=32), bed)


def test_normalization_effect_ranks_raw_vectors_by_inner_product(bed: Testbed) -> None:
    enc = HashEncoder(dimension=64)
    effect = normalization_effect(enc, bed)
    units = enc.encode_unnormalized(bed.texts(), "passage")
    queries = enc.encode_unnormalized([q.text for q in bed.queries], "query")
    run = score_run([q.id for q in bed.queries], [u.id for u in bed.units()], queries @ units.T)
    want = np.mean(list(evaluate(run, bed.qrels(), ["ndcg@10"])["ndcg@10"].values()))
    norms = np.linalg.norm(units, axis=1)
    assert effect == pytest.approx(
        {"norm min": norms.min(), "norm max": norms.max(), "ndcg@10 inner product": want}
    )


class UnitHash(HashEncoder):
    """A hash encoder that normalises inside itself, as MiniLM's pipeline does."""

    def _embed(self, texts: list[str]) -> np.ndarray:
        raw = super()._embed(texts)
        return raw / np.maximum(np.linalg.norm(raw, axis=1, keepdims=True), 1e-12)


def test_a_self_normalising_model_has_nothing_to_ablate(bed: Testbed) -> None:
    effect = normalization_effect(UnitHash(dimension=64), bed)
    assert set(effect) == {"norm min", "norm max"}
    assert effect["norm min"] == pytest.approx(1.0, abs=1e-6)


def test_near_ties_rank_the_same_whatever_the_cpus_last_bits() -> None:
    """Scores moved by the size of float32 kernel variation (another CPU) rank the same
    once near ties count as ties; ranked by the raw floats, near-tied pairs swap."""
    rng = np.random.default_rng(0)
    distinct = np.arange(200) * 1e-3  # distinct units, far apart
    scores = np.repeat(distinct, 2) + rng.uniform(0, 2e-7, 400)  # each with a near twin
    moved = scores + rng.uniform(-1e-7, 1e-7, 400)  # the same scores on another CPU
    ids, q = [f"u{i:03d}" for i in range(400)], ["q"]

    def order(s: np.ndarray, tol: float) -> list[str]:
        return [u for u, _ in score_run(q, ids, s[None, :], k=400, tolerance=tol)["q"]]

    assert order(scores, TIE_TOLERANCE) == order(moved, TIE_TOLERANCE)
    assert order(scores, 0.0) != order(moved, 0.0)
    a = score_run(q, ids, scores[None, :], k=10, tolerance=TIE_TOLERANCE)
    b = score_run(q, ids, moved[None, :], k=10, tolerance=TIE_TOLERANCE)
    assert top_overlap(a, b, 10) == 1.0


def test_precision_agreement_records_its_tolerance(bed: Testbed) -> None:
    enc = HashEncoder(dimension=64, window=40)
    assert precision_agreement(enc, enc, bed).values()["tolerance"] == TIE_TOLERANCE
    assert precision_agreement(enc, enc, bed, tolerance=0.0).values()["tolerance"] == 0.0
