"""Experiment tables and the declarative comparison: the study's figures, run as declared."""

from __future__ import annotations

from functools import cache

import matplotlib
import numpy as np
import pytest
from _toy import reference_slice
from pandas import testing as pd_testing

from hierret.encoders import HashEncoder
from hierret.evaluation import evaluate, lift, qrels_from_evidence
from hierret.evaluation.stats import StatsSettings
from hierret.search.profile import Profile
from hierret.search.searcher import Searcher
from hierret.structure.hierarchy import Hierarchy, build_hierarchy
from hierret.structure.units import Corpus, Query
from hierret.study import experiment
from hierret.study.experiment import compare, compare_hits, paired_tests

matplotlib.use("Agg")


def _arms() -> dict[str, dict[str, bool]]:
    # the study's paired counts: both 24, only passages 12, only whole 2, neither 2
    passages = [True] * 24 + [True] * 12 + [False] * 2 + [False] * 2
    whole = [True] * 24 + [False] * 12 + [True] * 2 + [False] * 2
    return {
        "passages": {f"q{i}": v for i, v in enumerate(passages)},
        "whole": {f"q{i}": v for i, v in enumerate(whole)},
    }


def test_compare_hits_reproduces_the_study() -> None:
    t = compare_hits(_arms(), baseline="whole").round(4)
    assert (t.loc["passages", "hits"], t.loc["whole", "hits"]) == (36, 26)
    assert (t.loc["passages", "low"], t.loc["passages", "high"]) == (0.7695, 0.9604)
    assert (t.loc["whole", "low"], t.loc["whole", "high"]) == (0.4951, 0.7787)
    assert t.loc["passages", "diff"] == 0.25
    assert (round(t.loc["passages", "diff_low"], 3), round(t.loc["passages", "diff_high"], 3)) == (
        0.068,
        0.415,
    )
    assert t.loc["passages", "p"] == pytest.approx(0.0129, abs=1e-4)


def test_compare_declares_the_family_and_adjusts() -> None:
    rng = np.random.default_rng(1)
    base = rng.uniform(size=60)
    scores = {
        "base": dict(enumerate(base)),
        "same": dict(enumerate(base)),
        "better": dict(enumerate(np.clip(base + 0.2, 0, 1))),
    }
    scores = {a: {f"q{k}": float(v) for k, v in s.items()} for a, s in scores.items()}
    t = compare(scores, baseline="base", stats=StatsSettings(n_resamples=2000))
    assert t.loc["same", "p"] == 1.0
    assert t.loc["same", "diff"] == 0.0
    assert t.loc["better", "p_holm"] < 0.01
    assert t.loc["better", "p_holm"] >= t.loc["better", "p"]
    assert t.attrs["family"] == ["same", "better"]
    only = compare(
        scores, baseline="base", family=["better"], stats=StatsSettings(n_resamples=2000)
    )
    assert np.isnan(only.loc["same", "p_holm"])
    with pytest.raises(ValueError, match="not an arm"):
        compare(scores, baseline="nope")


def test_unpaired_input_is_refused() -> None:
    with pytest.raises(ValueError, match="same queries"):
        compare({"a": {"q1": 1.0}, "b": {"q2": 1.0}}, baseline="a")


def test_paired_tests_holm_over_pairs() -> None:
    scores = {
        "a": {f"q{i}": 1.0 for i in range(20)},
        "b": {f"q{i}": 0.0 for i in range(20)},
        "c": {f"q{i}": float(i % 2) for i in range(20)},
    }
    t = paired_tests(scores, [("a", "b"), ("c", "b")], stats=StatsSettings(n_resamples=2000))
    assert t.loc["a vs b", "diff"] == 1.0
    assert t.loc["c vs b", "diff"] == 0.5
    assert (t["p_holm"] >= t["p"]).all()
    with pytest.raises(ValueError, match="unknown arms"):
        paired_tests(scores, [("a", "z")])


# --- experiment.run: the declarative comparison ----------------------------------------------

ARMS = {
    "passages": Profile(),
    "sections": Profile(level="sections"),
    "fused, hybrid": Profile(level="fused", ranker="hybrid", pool=40),
}


@cache
def small() -> tuple[Hierarchy, tuple[Query, ...]]:
    corpus, queries = reference_slice(30, 6)
    return build_hierarchy(corpus), queries


@cache
def searcher() -> Searcher:
    return Searcher(small()[0], HashEncoder(dimension=64, window=48))


@cache
def result() -> experiment.Result:
    return experiment.run(
        ARMS,
        list(small()[1]),
        searcher=searcher(),
        targets=["sections", "documents"],
        metrics=["ndcg@10", "hit@1"],
        baseline="passages",
        family=[("sections", "passages")],
        stats=StatsSettings(n_resamples=500),
    )


def by_hand(target: str, metric: str) -> dict[str, dict[str, float]]:
    """Per-query scores computed here: run, lift to the target, judge from the evidence."""
    h, queries = small()
    qrels = qrels_from_evidence(queries, h.units(target))  # type: ignore[arg-type]
    out = {}
    for arm, profile in ARMS.items():
        run = searcher().run(queries, profile, k=100)
        level = "sections" if profile.level == "fused" else profile.level
        if level != target:
            run = lift(run, h.parents(level, target))  # type: ignore[arg-type]
        out[arm] = evaluate(run, qrels, [metric])[metric]
    return out


@pytest.mark.parametrize("target", ["sections", "documents"])
def test_run_table_equals_compare_by_hand(target: str) -> None:
    scores = by_hand(target, "ndcg@10")
    assert result().scores[target]["ndcg@10"] == scores
    expected = compare(
        scores, baseline="passages", family=["sections"], stats=StatsSettings(n_resamples=500)
    )
    pd_testing.assert_frame_equal(result().table(target, "ndcg@10"), expected)
    hits = {a: {q: v > 0 for q, v in s.items()} for a, s in by_hand(target, "hit@1").items()}
    expected_hits = compare_hits(hits, baseline="passages", family=["sections"])
    # the tests record the settings they ran with (the run's 500 resamples, the default's
    # here), which McNemar's exact p does not use: the numbers agree, the tests' records not
    got = result().table(target, "hit@1")
    pd_testing.assert_frame_equal(got.drop(columns="test"), expected_hits.drop(columns="test"))
    assert got.loc["sections", "test"].p == expected_hits.loc["sections", "test"].p


def test_lifting_is_applied_and_runs_are_kept() -> None:
    h, queries = small()
    run = result().runs["passages"]
    assert next(iter(run.values()))[0][0].split("#")[1].startswith("p")  # passages, unlifted
    docs = lift(run, h.parents("passages", "documents"))
    qrels = qrels_from_evidence(queries, h.units("documents"))
    assert (
        result().scores["documents"]["ndcg@10"]["passages"]
        == evaluate(docs, qrels, ["ndcg@10"])["ndcg@10"]
    )
    frame = result().frame()
    assert set(frame.columns) == {"arm", "target", "metric", "query", "value"}
    assert len(frame) == 2 * 2 * 3 * len(result().per_query("sections", "ndcg@10"))


def test_only_declared_pairs_are_tested() -> None:
    table = result().table("sections", "ndcg@10")
    assert np.isnan(table.loc["fused, hybrid", "p"])  # undeclared: no test
    assert not np.isnan(table.loc["sections", "p_holm"])
    tests = result().tests("ndcg@10")
    assert list(tests.index) == [
        "sections@sections vs passages@sections",
        "sections@documents vs passages@documents",
    ]
    assert (tests["p_holm"] >= tests["p"]).all()
    direct = paired_tests(
        {
            f"{a}@{t}": result().scores[t]["ndcg@10"][a]
            for t in ("sections", "documents")
            for a in ARMS
        },
        [("sections@sections", "passages@sections"), ("sections@documents", "passages@documents")],
        stats=StatsSettings(n_resamples=500),
    )
    pd_testing.assert_frame_equal(tests.drop(columns=["target", "arm_a", "arm_b"]), direct)


def test_a_second_family_is_tested_and_adjusted_on_its_own() -> None:
    second = [("fused, hybrid", "passages"), ("fused, hybrid", "sections")]
    tests = result().tests("ndcg@10", family=second)
    direct = paired_tests(
        {
            f"{a}@{t}": result().scores[t]["ndcg@10"][a]
            for t in ("sections", "documents")
            for a in ARMS
        },
        [(f"{a}@{t}", f"{b}@{t}") for t in ("sections", "documents") for a, b in second],
        stats=StatsSettings(n_resamples=500),
    )
    pd_testing.assert_frame_equal(tests.drop(columns=["target", "arm_a", "arm_b"]), direct)
    assert len(result().tests("ndcg@10")) == 2  # the declared family is unchanged
    with pytest.raises(ValueError, match="not arms of the result"):
        result().tests("ndcg@10", family=[("nope", "passages")])


def test_values_have_stable_keys_and_plot_draws_each_target() -> None:
    values = result().values("dr9")
    assert values["dr9_sections_fused_hybrid_ndcg10"] == pytest.approx(
        float(np.mean(list(by_hand("sections", "ndcg@10")["fused, hybrid"].values())))
    )
    assert "dr9_documents_sections_hit1_p_holm" in values
    assert "dr9_documents_fused_hybrid_hit1_p" not in values
    assert "dr9_sections_sections_vs_passages_ndcg10_p_holm" in values
    assert values["dr9_sections_n"] == len(result().per_query("sections", "ndcg@10"))
    fig = result().plot("ndcg@10")
    assert len(fig.axes) == 2


def test_arms_with_their_own_searcher_and_explicit_qrels() -> None:
    h, queries = small()
    coarse = Searcher(
        build_hierarchy(Corpus(h.corpus.name, list(h.corpus)), max_chars=1800, overlap_chars=360),
        HashEncoder(dimension=64, window=48),
    )
    qrels = {"documents": {q.id: dict.fromkeys(q.evidence_docs, 1) for q in queries}}
    r = experiment.run(
        {
            "900": Profile(),
            "1800": experiment.Arm(Profile(), coarse, k=50),
            "1800 bm25": (coarse, Profile(ranker="bm25")),
        },
        list(queries),
        searcher=searcher(),
        targets=["documents"],
        metrics=["mrr"],
        qrels=qrels,
        stats=StatsSettings(n_resamples=200),
    )
    assert r.baseline == "900"
    assert all(len(ranking) <= 50 for ranking in r.runs["1800"].values())
    expected = evaluate(
        lift(
            coarse.run(queries, Profile(), k=50), coarse.hierarchy.parents("passages", "documents")
        ),
        qrels["documents"],
        ["mrr"],
    )["mrr"]
    assert r.scores["documents"]["mrr"]["1800"] == expected


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"baseline": "dense"}, ValueError, r"baseline 'dense' is not an arm; arms: \['passages'"),
        ({"family": [("sections", "bm25")]}, ValueError, r"family names unknown arms \['bm25'\]"),
        ({"family": [("sections", "sections")]}, ValueError, "family pairs must be"),
        ({"targets": ["chunks"]}, ValueError, "unknown target 'chunks'"),
        (
            {"targets": ["passages"]},
            ValueError,
            "arm 'sections' ranks sections, coarser than the target 'passages'",
        ),
    ],
)
def test_bad_declarations_are_refused(
    kwargs: dict[str, object], error: type[Exception], message: str
) -> None:
    arms = {"passages": Profile(), "sections": Profile(level="sections")}
    with pytest.raises(error, match=message):
        experiment.run(arms, list(small()[1]), searcher=searcher(), **kwargs)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="has no searcher"):
        experiment.run(arms, list(small()[1]))
    with pytest.raises(TypeError, match="must be a Profile, an Arm"):
        experiment.run({"x": "dense"}, list(small()[1]), searcher=searcher())  # type: ignore[dict-item]


def test_between_pairs_one_arm_across_runs() -> None:
    from hierret.study.experiment import Result, between, paired_tests

    rng = np.random.default_rng(0)
    qs = [f"q{i}" for i in range(40)]

    def result(shift: float) -> Result:
        per_q = {q: float(v) for q, v in zip(qs, rng.random(40) + shift, strict=True)}
        return Result(
            {},
            {t: {"mrr": {"chunk": per_q}} for t in ("sections", "documents")},
            "chunk",
            [],
            ["sections", "documents"],
            ["mrr"],
            stats=StatsSettings(n_resamples=500),
        )

    runs = {900: result(0.0), 1800: result(-0.3), 2700: result(0.0)}
    t = between(runs, "chunk", "mrr")
    assert list(t.index) == [
        "1800@sections vs 900@sections",
        "2700@sections vs 900@sections",
        "1800@documents vs 900@documents",
        "2700@documents vs 900@documents",
    ]
    scores = {
        f"{s}@{tg}": runs[s].scores[tg]["mrr"]["chunk"]
        for s in runs
        for tg in ("sections", "documents")
    }
    ref = paired_tests(
        scores,
        [(a.split(" vs ")[0], a.split(" vs ")[1]) for a in t.index],
        stats=StatsSettings(n_resamples=500),
    )
    np.testing.assert_allclose(t["p_holm"], ref["p_holm"])
    assert t.loc["1800@sections vs 900@sections", "diff"] < 0
    assert t["arm_a"].tolist()[:2] == ["chunk-1800", "chunk-2700"]
    assert between({900: runs[900]}, "chunk", "mrr").empty
    other = Result(
        {}, {"sections": {"mrr": {"chunk": {"x": 1.0}}}}, "chunk", [], ["sections"], ["mrr"]
    )
    with pytest.raises(ValueError, match="not a paired comparison"):
        between({900: runs[900], 1: other}, "chunk", "mrr", targets=["sections"])


def test_paired_tests_pair_each_comparison_on_its_own_questions() -> None:
    """Two targets may judge different questions (one names a whole document); each pair is
    still paired, and a pair whose arms score different questions is refused."""
    scores = {
        "a@documents": {"q1": 1.0, "q2": 0.5, "q3": 0.0},
        "b@documents": {"q1": 0.5, "q2": 0.5, "q3": 0.0},
        "a@sections": {"q1": 1.0, "q2": 0.0},
        "b@sections": {"q1": 0.0, "q2": 0.0},
    }
    pairs = [("a@documents", "b@documents"), ("a@sections", "b@sections")]
    t = paired_tests(scores, pairs, StatsSettings(n_resamples=100))
    assert t["mean_a"].tolist() == [0.5, 0.5]
    assert t["diff"].tolist() == [pytest.approx(1 / 6), 0.5]
    with pytest.raises(ValueError, match="do not score every query"):
        paired_tests(scores, [("a@documents", "b@sections")], StatsSettings(n_resamples=100))
