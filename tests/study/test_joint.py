"""hierret.study.joint: first stages crossed with rerankers, every one on the same candidates."""

from __future__ import annotations

import time

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pandas as pd
import pytest

from hierret.encoders import HashEncoder
from hierret.encoders.cache import CachedEncoder, VectorCache
from hierret.evaluation.stats import StatsSettings
from hierret.search.profile import Profile
from hierret.search.rerank import EncoderReranker, MaxSimReranker, Selection, TokenEncoder
from hierret.search.searcher import Searcher
from hierret.structure.hierarchy import build_hierarchy
from hierret.structure.units import Corpus, Document, Query
from hierret.study import joint
from hierret.study.experiment import Arm
from hierret.study.measured import Measurements


class Words(TokenEncoder):
    """One hashed vector per word: enough token vectors for MaxSim."""

    def encode_tokens(self, texts, role):  # type: ignore[no-untyped-def]
        enc = HashEncoder(dimension=16)
        return [enc.encode_passages(t.split() or ["."]) for t in texts]


TEXTS = [
    "Cats purr softly at night.",
    "Dogs bark loudly at strangers.",
    "Birds sing at dawn in spring.",
    "Fish swim in cold rivers.",
    "Cats and dogs sleep by the fire.",
]


@pytest.fixture
def setup() -> tuple[Searcher, list[Query]]:
    docs = [Document(f"d{i}", f"D{i}", t) for i, t in enumerate(TEXTS)]
    s = Searcher(build_hierarchy(Corpus("pets", docs)), HashEncoder(dimension=32))
    qs = [
        Query("q1", "do dogs bark", (("d1", 0, 30),)),
        Query("q2", "cats purr", (("d0", 0, 26),)),
        Query("q3", "birds singing", (("d2", 0, 29),)),
    ]
    return s, qs


def _matrix(s: Searcher, **kw: object) -> joint.JointMatrix:
    stages = {"bm25": Arm(Profile(ranker="bm25"), s), "dense": Arm(Profile(), s)}
    rr = {
        "rescore": EncoderReranker(HashEncoder(dimension=64), name="rescore"),
        "same": EncoderReranker(s.encoder, name="same"),
    }
    return joint.JointMatrix(stages, rr, candidates=4, **kw)  # type: ignore[arg-type]


def test_arms_cross_every_stage_with_every_reranker_but_the_redundant_one(setup) -> None:
    s, _ = setup
    m = _matrix(s)
    assert list(m.arms()) == [
        "bm25+none",
        "bm25+rescore",
        "bm25+same",
        "dense+none",
        "dense+rescore",
    ]  # the dense stage's own encoder is left out
    assert m.family() == [
        ("bm25+rescore", "bm25+none"),
        ("bm25+same", "bm25+none"),
        ("dense+rescore", "dense+none"),
    ]
    arm = m.arms()["bm25+rescore"]
    assert arm.searcher is s
    assert arm.profile == Profile(
        "bm25+rescore", ranker="bm25", candidates=4, reranker="rescore", selection=Selection()
    )
    assert joint.JointMatrix(m.stages, m.rerankers, 4, unreranked=None).family() == []


def test_run_equals_each_arm_searched_and_values_follow_the_key_rule(setup) -> None:
    s, qs = setup
    m = _matrix(s)
    result = m.run(
        qs, "passages", metrics=["ndcg@10", "recall@5"], stats=StatsSettings(n_resamples=50)
    )
    for name, arm in m.arms().items():
        assert result.runs[name] == s.run(qs, arm.profile, k=4, rerankers=m.rerankers)
    values = m.values(
        result, "pets", pd.DataFrame([{"reranker": "rescore", "mean ms": 2.0, "p90 ms": 3.0}])
    )
    table = result.table("passages", "ndcg@10")
    assert values["pets_bm25_rescore_ndcg10"] == table.loc["bm25+rescore", "mean"]
    assert (
        values["pets_dense_none_recall5_low"]
        == result.table("passages", "recall@5").loc["dense+none", "low"]
    )
    tests = result.tests("ndcg@10").set_index("arm_a")
    assert (
        values["pets_dense_rescore_vs_first_ndcg10_p_holm"] == tests.loc["dense+rescore", "p_holm"]
    )
    assert values["pets_questions"] == 3
    assert values["pets_units"] == len(s.units("passages"))
    assert values["pets_rescore_cold_ms_p90"] == 3.0
    assert "pets_bm25_rescore_ms_mean" in values
    assert "pets_bm25_none_ms_mean" not in values
    shown = joint.matrix_table(result)
    assert np.isnan(shown.loc["bm25+none", "added ms (mean)"])
    assert shown.loc["bm25+rescore", "ndcg@10"] == table.loc["bm25+rescore", "mean"]
    assert len(joint.plot_matrix({"pets": result}).axes) == 2
    assert m.table(result).equals(shown)  # the matrix's own views, as the notebook calls them
    assert len(joint.JointMatrix.plot({"pets": result}).axes) == 2
    corpora = {"pets": (None, None, "passages")}
    with pytest.raises(TypeError):  # record_identity's own check of what it is handed
        joint.record_identity({}, m.rerankers, corpora, {"pets": result})
    with pytest.raises(TypeError):
        joint.JointMatrix.identity({}, m.rerankers, corpora, {"pets": result})


def test_prepare_fills_a_maxsim_cache_with_every_distinct_candidate(setup) -> None:
    s, qs = setup
    rr = MaxSimReranker(Words(), cache_size=None)
    m = joint.JointMatrix({"bm25": Arm(Profile(ranker="bm25"), s)}, {"maxsim": rr}, candidates=2)
    n = m.prepare(qs)
    assert n == len({u for r in s.run(qs, Profile(ranker="bm25"), k=2).values() for u, _ in r})
    assert rr._cache_info().size >= n


def test_cold_latency_times_unprepared_copies_on_a_seeded_sample(setup) -> None:
    s, qs = setup
    m = _matrix(s)
    table = m.cold_latency("bm25", qs, sample=2, rng=np.random.default_rng(0))
    assert list(table.reranker) == ["rescore", "same"]
    assert set(table.queries) == {2}
    assert joint.latency_values(table, "p")["p_rescore_cold_ms_mean"] == table["mean ms"][0]


def test_unprepared_copies_keep_nothing() -> None:
    raw = HashEncoder(dimension=8)
    cold = joint.unprepared(EncoderReranker(CachedEncoder(raw, VectorCache(None)), name="e"))
    assert isinstance(cold, EncoderReranker)
    assert cold.encoder is raw
    maxsim = joint.unprepared(MaxSimReranker(Words(), reduce="mean", name="m"))
    assert isinstance(maxsim, MaxSimReranker)
    assert maxsim.cache_size == 0
    assert maxsim.reduce == "mean"
    assert maxsim.identity.name == "m"


def test_timed_rerankers_never_cache_queries() -> None:
    enc = HashEncoder(dimension=8)
    m = joint.timed_reranker("maxsim", Words(), "m", reduce="mean")
    assert isinstance(m, MaxSimReranker)
    assert m.cache_size is None
    assert not m.cache_queries
    e = joint.timed_reranker("encoder", enc, "e")
    assert isinstance(e, EncoderReranker)
    assert not e.cache_queries
    with pytest.raises(ValueError, match="unknown reranker kind 'cross'"):
        joint.timed_reranker("cross", enc, "c")


class SlowQueries(HashEncoder):
    """A hash encoder whose every query encoding takes 20 ms, and that counts them."""

    def __init__(self) -> None:
        super().__init__(dimension=64)
        self.queries: list[str] = []

    def encode(self, texts, role="passage"):  # type: ignore[no-untyped-def]
        if role == "query":
            time.sleep(0.02)
            self.queries += list(texts)
        return super().encode(texts, role)


def test_every_arm_pays_for_the_query_encoding_its_reranker_did_once(setup) -> None:
    """A timed reranker encodes each question once; every arm's latency still holds it."""
    s, qs = setup
    slow = SlowQueries()
    stages = {"bm25": Arm(Profile(ranker="bm25"), s), "dense": Arm(Profile(), s)}
    rr = {"slow": joint.timed_reranker("encoder", slow, "slow")}
    matrix = joint.JointMatrix(stages, rr, candidates=4)
    result = matrix.run(qs, "passages", metrics=["ndcg@10"], stats=StatsSettings(n_resamples=100))
    # the untimed warm-up, then each question once (the warm-up's encoding is not kept)
    assert slow.queries == [qs[0].text, *(q.text for q in qs)]
    for arm in ("bm25+slow", "dense+slow"):
        seconds = result.traces[arm].rerank_seconds
        assert min(seconds.values()) >= 0.02, arm  # the encoding is in every arm's latency


def test_first_stages_share_one_searcher_per_encoder(setup) -> None:
    s, _ = setup
    arms = joint.first_stages(
        s.hierarchy, "documents", {"a": ("dense", "x"), "b": ("bm25", "x")}, {"x": s.encoder}
    )
    assert arms["a"].searcher is arms["b"].searcher
    assert arms["a"].profile == Profile(level="documents", vectors="first-window")
    again = joint.JointMatrix.first_stages(
        s.hierarchy, "documents", {"a": ("dense", "x"), "b": ("bm25", "x")}, {"x": s.encoder}
    )
    assert {k: v.profile for k, v in again.items()} == {k: v.profile for k, v in arms.items()}


def _slow_matrix(s: Searcher, memo: Measurements | None) -> tuple[joint.JointMatrix, SlowQueries]:
    slow = SlowQueries()
    stages = {"bm25": Arm(Profile(ranker="bm25"), s), "dense": Arm(Profile(), s)}
    rr = {
        "slow": joint.timed_reranker("encoder", slow, "slow"),
        "maxsim": joint.timed_reranker("maxsim", Words(), "maxsim"),
    }
    return joint.JointMatrix(stages, rr, candidates=4, memo=memo), slow


def test_a_rerun_reuses_the_timed_query_encodings_and_ranks_the_same(setup, tmp_path) -> None:
    """Warm reruns embed no question: the kept vectors and times stand in, bit for bit."""
    s, qs = setup
    options = {"metrics": ["ndcg@10"], "stats": StatsSettings(n_resamples=100)}
    plain, _ = _slow_matrix(s, None)
    expected = plain.run(qs, "passages", **options)
    first, slow = _slow_matrix(s, Measurements(tmp_path))
    measured = first.run(qs, "passages", **options)
    assert slow.queries == [qs[0].text, *(q.text for q in qs)]  # warm-up, then each once
    memo = Measurements(tmp_path)
    again, slow = _slow_matrix(s, memo)
    rerun = again.run(qs, "passages", **options)
    assert slow.queries == []  # nothing embedded
    assert memo.reused == 2  # the encoder's and the maxsim's
    for result in (measured, rerun):
        for arm, trace in expected.traces.items():
            assert trace.reranked == result.traces[arm].reranked, arm
    for arm in ("bm25+slow", "dense+slow"):  # the kept time is in every arm's latency
        assert min(rerun.traces[arm].rerank_seconds.values()) >= 0.02, arm
    remeasured, slow = _slow_matrix(s, Measurements(tmp_path, remeasure=True))
    remeasured.prepare(qs)
    assert slow.queries == [qs[0].text, *(q.text for q in qs)]


def test_kept_query_encodings_follow_the_questions_and_the_model(tmp_path) -> None:
    memo = Measurements(tmp_path)
    enc = EncoderReranker(HashEncoder(dimension=8), cache_queries=False)
    assert joint.kept_query_encodings(enc, ["a", "b"], memo) == 2
    assert joint.kept_query_encodings(enc, ["a", "c"], memo) == 2
    other = EncoderReranker(HashEncoder(dimension=16), cache_queries=False)
    assert joint.kept_query_encodings(other, ["a", "b"], memo) == 2
    assert (memo.measured, memo.reused) == (3, 0)
    kept = other.query_clock.kept()  # type: ignore[union-attr]
    assert np.array_equal(kept["a"][0], other.encode_query("a"))
    assert kept["a"][0].dtype == np.float32
    cached = EncoderReranker(HashEncoder(dimension=8))  # caches its queries: no clock
    assert joint.kept_query_encodings(cached, ["a"], memo) == 0


def test_cold_latency_is_kept_until_the_candidates_change(setup, tmp_path) -> None:
    s, qs = setup
    first, slow = _slow_matrix(s, Measurements(tmp_path))
    table = first.cold_latency("bm25", qs, sample=2, rng=np.random.default_rng(0))
    assert len(slow.queries) > 0
    again, slow = _slow_matrix(s, Measurements(tmp_path))
    kept = again.cold_latency("bm25", qs, sample=2, rng=np.random.default_rng(0))
    assert slow.queries == []
    pd.testing.assert_frame_equal(kept, table)
    assert list(kept.columns) == ["reranker", "first stage", "mean ms", "p90 ms", "queries"]
    other, slow = _slow_matrix(s, Measurements(tmp_path))
    other.cold_latency("dense", qs, sample=2, rng=np.random.default_rng(0))
    assert len(slow.queries) > 0  # other candidates: measured again
