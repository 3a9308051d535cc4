"""Metrics agree with trec_eval (through pytrec_eval) on random runs and qrels."""

from __future__ import annotations

import logging
import random
from pathlib import Path

import pytest
import pytrec_eval
from hypothesis import given, settings
from hypothesis import strategies as st

from hierret.evaluation import (
    Qrels,
    Run,
    average_precision,
    evaluate,
    hit_at,
    mean_scores,
    mrr,
    ndcg_at,
    precision_at,
    r_precision,
    rank,
    read_run,
    recall_at,
    write_run,
)

TREC = {"ndcg_cut_1", "ndcg_cut_5", "ndcg_cut_10", "recall_5", "recall_10", "recip_rank"}
TREC |= {"P_1", "P_5", "P_10", "success_1", "success_5", "success_10", "map", "map_cut_10", "Rprec"}
OURS_TO_TREC = {
    "ndcg@1": "ndcg_cut_1",
    "ndcg@5": "ndcg_cut_5",
    "ndcg@10": "ndcg_cut_10",
    "recall@5": "recall_5",
    "recall@10": "recall_10",
    "mrr": "recip_rank",
    "hit@1": "success_1",
    "hit@5": "success_5",
    "hit@10": "success_10",
    "p@1": "P_1",
    "p@5": "P_5",
    "p@10": "P_10",
    "map": "map",
    "map@10": "map_cut_10",
    "rprec": "Rprec",
}


def _random_case(rng: random.Random, n_queries: int) -> tuple[Run, Qrels]:
    """Runs with distinct descending scores; qrels graded 0/1/2 over a shared pool."""
    run: Run = {}
    qrels: Qrels = {}
    for q in range(n_queries):
        qid = f"q{q}"
        pool = [f"u{i}" for i in range(rng.randint(1, 80))]
        kind = rng.random()
        n_judged = rng.randint(1, len(pool))
        judged = rng.sample(pool, n_judged)
        # a quarter of the queries: many relevant (often more than k); a tenth: only grade 0
        weights = (0.1, 0.45, 0.45) if kind < 0.25 else (1.0, 0.0, 0.0) if kind < 0.35 else None
        qrels[qid] = {u: rng.choices((0, 1, 2), weights or (0.6, 0.25, 0.15))[0] for u in judged}
        retrieved = rng.sample(pool, rng.randint(1, len(pool)))
        if kind > 0.9:  # nothing relevant retrieved
            retrieved = [u for u in retrieved if qrels[qid].get(u, 0) <= 0] or [f"x{q}"]
        scores = sorted(rng.sample(range(1, 10**6), len(retrieved)), reverse=True)
        run[qid] = [(u, s / 997.0) for u, s in zip(retrieved, scores, strict=True)]
    return run, qrels


def _trec(run: Run, qrels: Qrels) -> dict[str, dict[str, float]]:
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, TREC)
    result: dict[str, dict[str, float]] = evaluator.evaluate(
        {qid: dict(ranking) for qid, ranking in run.items()}
    )
    return result


def _assert_agree(run: Run, qrels: Qrels) -> None:
    ours = evaluate(run, qrels, list(OURS_TO_TREC))
    theirs = _trec(run, qrels)
    assert set(theirs) == set(qrels)
    for name, trec_name in OURS_TO_TREC.items():
        for qid, measures in theirs.items():
            assert abs(ours[name][qid] - measures[trec_name]) <= 1e-9, (name, qid)
    for qid, measures in theirs.items():
        assert ours["hit@1"][qid] == float(measures["P_1"] > 0)


def test_agrees_with_trec_eval_on_seeded_random_runs() -> None:
    run, qrels = _random_case(random.Random(20240601), 400)
    relevant = {q: {u for u, g in j.items() if g > 0} for q, j in qrels.items()}
    assert sum(len(r) > 10 for r in relevant.values()) > 20  # more relevant than k
    assert sum(not r for r in relevant.values()) > 10  # nothing relevant at all
    missed = [q for q in run if not relevant[q] & {u for u, _ in run[q]}]
    assert len(missed) > 30  # nothing relevant retrieved
    _assert_agree(run, qrels)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.integers(0, 2), min_size=1, max_size=30),
    st.randoms(use_true_random=False),
    st.integers(1, 30),
)
def test_agrees_with_trec_eval_property(grades: list[int], rnd: random.Random, n: int) -> None:
    pool = [f"u{i}" for i in range(len(grades) + 5)]
    qrels = {"q": {f"u{i}": g for i, g in enumerate(grades)}}
    retrieved = rnd.sample(pool, min(n, len(pool)))
    run = {"q": [(u, float(len(retrieved) - i)) for i, u in enumerate(retrieved)]}
    _assert_agree(run, qrels)


def test_query_missing_from_run_scores_zero_and_unjudged_are_left_out(
    caplog: pytest.LogCaptureFixture,
) -> None:
    run = {"q1": [("a", 1.0)], "extra": [("a", 1.0)]}
    with caplog.at_level(logging.WARNING, logger="hierret.evaluation.metrics"):
        result = evaluate(run, {"q1": {"a": 1}, "q2": {"b": 2}})
    assert set(result) == {"ndcg@10", "recall@10", "mrr", "hit@1"}
    assert all(per_query == {"q1": 1.0, "q2": 0.0} for per_query in result.values())
    assert "1 run queries have no qrels" in caplog.text
    assert "'extra'" in caplog.text


def test_hand_computed_values() -> None:
    ranked, grades = ["c", "a", "b"], {"a": 1, "b": 2, "c": 0, "z": 1}
    assert ndcg_at(ranked, grades, 2) == pytest.approx(
        (1 / 1.584962500721156) / (2 + 1 / 1.5849625)
    )
    assert recall_at(ranked, grades, 2) == pytest.approx(1 / 3)
    assert mrr(ranked, grades) == 0.5
    assert mrr(ranked, grades, k=1) == 0.0
    assert hit_at(ranked, grades, 1) == 0.0
    assert hit_at(ranked, grades, 2) == 1.0
    assert ndcg_at([], grades, 10) == recall_at([], grades, 10) == mrr([], grades) == 0.0


def test_mrr_at_k_and_mean_scores() -> None:
    result = evaluate({"q": [("x", 2.0), ("a", 1.0)]}, {"q": {"a": 1}}, ["mrr@1", "mrr@2"])
    assert result == {"mrr@1": {"q": 0.0}, "mrr@2": {"q": 0.5}}
    assert mean_scores({"m": {"a": 1.0, "b": 0.0}}) == {"m": 0.5}
    with pytest.raises(ValueError, match="no queries"):
        mean_scores({"m": {}})


@pytest.mark.parametrize(
    "name", ["ndcg", "recall@0", "p", "rprec@5", "hit@", "mrr@x", "map@0", "NDCG@10"]
)
def test_unknown_metric_names_raise(name: str) -> None:
    with pytest.raises(ValueError, match="unknown metric"):
        evaluate({}, {"q": {"a": 1}}, [name])


def test_bad_inputs_raise() -> None:
    with pytest.raises(ValueError, match="more than once"):
        evaluate({"q": [("a", 2.0), ("a", 1.0)]}, {"q": {"a": 1}})
    with pytest.raises(ValueError, match="at least 1"):
        ndcg_at(["a"], {"a": 1}, 0)


def test_agrees_with_trec_eval_per_query_on_runs_full_of_ties(tmp_path: Path) -> None:
    """trec_eval re-sorts a run (ties by id descending); hierret's rank() is that order."""
    rng = random.Random(3)
    run: Run = {}
    qrels: Qrels = {}
    for q in range(300):
        pool = [f"d{i:03d}" for i in range(rng.randint(2, 60))]
        qrels[f"q{q}"] = {u: rng.choice((0, 1, 1, 2)) for u in rng.sample(pool, len(pool) // 2)}
        retrieved = rng.sample(pool, len(pool) // 2 + 1)
        scores = {u: float(rng.choice((0.0, 0.5, 1.0))) for u in retrieved}
        run[f"q{q}"] = rank(scores)  # three score values: most units tie
    assert sum(len({s for _, s in r}) < len(r) for r in run.values()) > 250
    write_run(run, tmp_path / "run.trec")
    for candidate in (run, read_run(tmp_path / "run.trec")):
        ours = evaluate(candidate, qrels, list(OURS_TO_TREC))
        theirs = _trec(run, qrels)
        for name, trec_name in OURS_TO_TREC.items():
            for qid, measures in theirs.items():
                assert abs(ours[name][qid] - measures[trec_name]) <= 1e-9, (name, qid)


#: Each metric name of evaluate() as its single-metric function.
SINGLE = {
    "ndcg@1": lambda r, g: ndcg_at(r, g, 1),
    "ndcg@10": lambda r, g: ndcg_at(r, g, 10),
    "ndcg@200": lambda r, g: ndcg_at(r, g, 200),
    "recall@3": lambda r, g: recall_at(r, g, 3),
    "recall@200": lambda r, g: recall_at(r, g, 200),
    "hit@1": lambda r, g: hit_at(r, g, 1),
    "hit@7": lambda r, g: hit_at(r, g, 7),
    "p@1": lambda r, g: precision_at(r, g, 1),
    "p@200": lambda r, g: precision_at(r, g, 200),
    "mrr": mrr,
    "mrr@3": lambda r, g: mrr(r, g, k=3),
    "map": average_precision,
    "map@5": lambda r, g: average_precision(r, g, k=5),
    "rprec": r_precision,
}


def _ties_case(rng: random.Random, n_queries: int) -> tuple[Run, Qrels]:
    """Rankings by rank() over three score values; grades -1 to 2, some judged units unretrieved."""
    run: Run = {}
    qrels: Qrels = {}
    for q in range(n_queries):
        pool = [f"d{i:03d}" for i in range(rng.randint(1, 60))]
        judged = rng.sample(pool, rng.randint(0, len(pool)))
        qrels[f"q{q}"] = {u: rng.choice((-1, 0, 1, 1, 2)) for u in judged}
        retrieved = rng.sample(pool, rng.randint(0, len(pool)))
        run[f"q{q}"] = rank({u: float(rng.choice((0.0, 0.5, 1.0))) for u in retrieved})
    return run, qrels


@pytest.mark.parametrize("case", ["random", "ties"])
def test_evaluate_is_bit_identical_to_the_single_metric_functions(case: str) -> None:
    """evaluate()'s one pass per query gives exactly (==) each metric function's value."""
    rng = random.Random(11)
    run, qrels = _random_case(rng, 300) if case == "random" else _ties_case(rng, 300)
    run["q0"] = []  # an empty ranking, and a judged query missing from the run
    del run["q1"]
    names = [*SINGLE, "mrr"]  # a name twice
    ours = evaluate(run, qrels, names)
    assert list(ours) == list(SINGLE)
    for name, fn in SINGLE.items():
        assert list(ours[name]) == sorted(qrels)
        for qid, grades in qrels.items():
            expected = fn([u for u, _ in run.get(qid, [])], grades)
            assert ours[name][qid] == expected, (name, qid)
            assert type(ours[name][qid]) is float, (name, qid)
    assert evaluate(run, qrels, []) == {}
    assert evaluate(run, {}, ["map"]) == {"map": {}}
