"""The reranking study (hierret.study.reranking): set-up, one joint matrix per corpus,
latency with nothing prepared, the shipped profile's fidelity, the record's values."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from pandas import testing as pd_testing

from hierret.search.profile import SHIPPED, Selection
from hierret.study.joint import JointMatrix
from hierret.study.measured import Measurements
from hierret.study.reranking import Reranking

CORPUS = "python-reference"


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Reranking:
    memo = Measurements(tmp_path_factory.mktemp("measurements"))
    out = Reranking.of(
        ["hybrid:hash", "dense:no-such-encoder"],
        ["none", "e5-rescore"],
        maxsim_encoder="hash",
        rescore_encoder="hash",
        min_score={"e5-rescore": 0.4},
        n_resamples=100,
        memo=memo,
        log=None,
    )
    return out.load([CORPUS], max_docs={CORPUS: 8}, max_queries=6, log=None)


def test_what_does_not_load_is_left_out_and_said(study: Reranking) -> None:
    assert list(study.stages) == ["hybrid-hash"]
    assert "no-such-encoder" in study.missing
    assert list(study.rerankers) == ["e5-rescore"]
    assert study.table().loc["e5-rescore", "min_score"] == 0.4
    assert study.min_scores() == {"min_score_e5_rescore": 0.4}
    assert study.corpora_table().loc[CORPUS, "level"] == "passages"
    assert study.stage("dense") == "hybrid-hash"  # no dense stage: the first there is
    assert study.shipped_reranker() == "e5-rescore"


def test_running_before_loading_says_what_to_call_first() -> None:
    empty = Reranking({}, {}, {}, {}, {})
    with pytest.raises(ValueError, match=r"call study.load\(corpora\) before study.run"):
        empty.run(5, ["ndcg@10"])
    with pytest.raises(ValueError, match="no first stage"):
        empty.stage("hybrid")


def test_each_corpus_runs_its_own_joint_matrix(study: Reranking) -> None:
    results = study.run(5, ["ndcg@10", "recall@5"])
    assert list(study.matrices) == [CORPUS]
    b, h, level, qrels = study.data[CORPUS]
    alone = JointMatrix(
        JointMatrix.first_stages(h, level, study.stages, study.encoders),
        study.rerankers,
        5,
        "none",
        study.memo,
    ).run(
        b.queries, level, metrics=["ndcg@10", "recall@5"], qrels={level: qrels}, stats=study.stats
    )
    pd_testing.assert_frame_equal(
        results[CORPUS].table(level, "ndcg@10"), alone.table(level, "ndcg@10")
    )
    paired = study.paired(results[CORPUS], ["ndcg@10"])
    assert paired.index.get_level_values("arm_a").tolist() == ["hybrid-hash+e5-rescore"]


def test_cold_latency_values_fidelity_and_identity(study: Reranking, tmp_path: Path) -> None:
    results = study.run(5, ["ndcg@10"])
    cold = study.cold_latency("hybrid-hash", 3, seed=0)
    assert cold.index.names == ["corpus", ""]
    assert cold.loc[CORPUS, "queries"].tolist() == [3]
    shipped = replace(
        SHIPPED,
        level="passages",
        ranker="hybrid",
        vectors="first-window",
        reranker="e5-rescore",
        candidates=5,
        selection=Selection(0.4, min_keep=1, top_k=3),
    )
    fidelity = {CORPUS: study.fidelity(CORPUS, shipped, "hybrid-hash")}
    assert fidelity[CORPUS].table().index.tolist() == ["shipped", "reorder"]
    values = study.values(results, fidelity, ["ndcg@10"])
    assert values["pyref_questions"] == 6
    assert any(k.startswith("pyref_") and k.endswith("_ms_mean") for k in values)
    assert any(k.startswith("pyref_fidelity") for k in values)
    identity = study.identity(results, fidelity, size="smoke")
    assert list(identity)[-4:] == ["size", "confidence", "n_resamples", "seed"]
    assert identity["encoders_missing"] == study.missing
    with pytest.raises(KeyError):
        study.fidelity("scifact", shipped, "hybrid-hash")
