"""hierret.study.sets: the returned set measured as a metric, a profile against its reorder twin."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hierret.encoders import HashEncoder
from hierret.evaluation import evaluate
from hierret.evaluation.stats import StatsSettings
from hierret.search.profile import Profile
from hierret.search.rerank import EncoderReranker, Selection
from hierret.search.searcher import Searcher
from hierret.structure.hierarchy import build_hierarchy
from hierret.structure.units import Corpus, Document, Query
from hierret.study import sets
from hierret.study.experiment import run
from hierret.study.sets import set_scores

TEXTS = ["Cats purr softly.", "Dogs bark loudly.", "Birds sing at dawn.", "Fish swim fast."]


@pytest.fixture
def searcher() -> Searcher:
    docs = [Document(f"d{i}", f"D{i}", t) for i, t in enumerate(TEXTS)]
    return Searcher(build_hierarchy(Corpus("pets", docs)), HashEncoder(dimension=32))


QUERIES = [Query("q1", "dogs bark", (("d1", 0, 17),)), Query("q2", "cats purr", (("d0", 0, 17),))]
QRELS = {"q1": {"d1#p0": 1}, "q2": {"d0#p0": 1}}


def test_without_selection_runs_the_profile_and_its_twin(searcher: Searcher) -> None:
    rr = {"e": EncoderReranker(HashEncoder(dimension=64))}
    p = Profile(
        "sel",
        ranker="bm25",
        candidates=3,
        reranker="e",
        selection=Selection(min_score=0.0, min_keep=1, top_k=2),
    )
    result = sets.without_selection(
        p,
        searcher,
        QUERIES,
        target="passages",
        qrels=QRELS,
        names=("a", "b"),
        rerankers=rr,
        metrics=["ndcg@10"],
        stats=StatsSettings(n_resamples=20),
    )
    assert result.traces["a"].profile is p
    assert result.traces["b"].profile.selection == Selection()
    assert result.family == [("a", "b")]
    for arm in ("a", "b"):
        profile = result.traces[arm].profile
        final = searcher.run(QUERIES, profile, k=3, rerankers=rr)
        assert result.runs[arm] == final
        expect = set_scores(final, QRELS)
        assert result.scores["passages"]["set kept"][arm] == expect["kept"]
        record = sets.profile_record(result, arm)
        ndcg = evaluate(final, QRELS, ["ndcg@10"])["ndcg@10"]
        assert record["metrics"]["ndcg@10"] == math.fsum(ndcg.values()) / len(ndcg)
        assert record["metrics"]["set precision"] == float(
            np.mean(list(expect["precision"].values()))
        )
        assert record["profile"] == profile.as_dict()
    assert sets.summary(result).loc["b", "set kept"] == 3.0
    tests = sets.paired_by_metric(result, ["ndcg@10", "set kept"])
    assert list(tests.index) == [("ndcg@10", "a"), ("set kept", "a")]
    assert set(tests.arm_b) == {"b"}
    values = sets.record_values(result, "pets_fidelity", ["set kept"])
    assert values == {
        "pets_fidelity_a_set_kept": sets.profile_record(result, "a")["metrics"]["set kept"],
        "pets_fidelity_b_set_kept": 3.0,
    }


def test_set_measures_need_the_arms_own_level(searcher: Searcher) -> None:
    result = run(
        {"p": Profile()},
        QUERIES,
        searcher=searcher,
        targets=["documents"],
        stats=StatsSettings(n_resamples=10),
    )
    with pytest.raises(ValueError, match="ranks passages, not the target 'documents'"):
        sets.with_set_measures(result, {"documents": {"q1": {"d1": 1}}})


def test_the_fidelity_object_is_the_functions_of_its_run(searcher: Searcher) -> None:
    """``SelectionFidelity`` runs the profile and its twin once; its views are the
    module's functions of that run."""
    p = Profile("sel", ranker="bm25", candidates=3, selection=Selection(top_k=1))
    stats = StatsSettings(n_resamples=20)
    f = sets.SelectionFidelity(p, searcher, QUERIES, target="passages", qrels=QRELS, stats=stats)
    again = sets.without_selection(
        p, searcher, QUERIES, target="passages", qrels=QRELS, stats=stats
    )
    assert f.result.arms == again.arms == ["as given", "reorder-only"]
    assert f.table().equals(sets.summary(again))
    assert f.record("as given") == sets.profile_record(again, "as given")
    measures = ["ndcg@10", *f.MEASURES]
    assert f.values("x", measures) == sets.record_values(again, "x", measures)
    assert f.paired(measures).equals(sets.paired_by_metric(again, measures))
    assert f.values("x", ["set kept"])["x_as_given_set_kept"] == 1.0
