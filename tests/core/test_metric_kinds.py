"""Metric kinds are declared once, beside the metrics, and decide how arms are compared."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hierret.evaluation.metrics import KINDS, evaluate, is_binary, kind
from hierret.evaluation.stats import StatsSettings
from hierret.evaluation.stats.comparison import SUMMARY, compare, compare_hits, compare_metric

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "hierret"
STATS = StatsSettings(n_resamples=50)
SCORES = {
    "base": {"q1": 1.0, "q2": 0.0, "q3": 0.0, "q4": 1.0},
    "arm": {"q1": 1.0, "q2": 1.0, "q3": 1.0, "q4": 0.0},
}


def test_no_module_decides_a_kind_by_the_name() -> None:
    """Whether a metric is binary is read from KINDS, never from how its name starts."""
    pattern = re.compile(r"""startswith\(\s*["'](hit|ndcg|recall|mrr|map|p|rprec)(@|["'])""")
    found = [
        f"{p.relative_to(PACKAGE)}:{n}"
        for p in sorted(PACKAGE.rglob("*.py"))
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line)
    ]
    assert found == []


@pytest.mark.parametrize(
    ("metric", "expected"),
    [("hit@1", "binary"), ("hit@10", "binary"), ("ndcg@10", "graded"), ("recall@5", "graded"),
     ("mrr", "graded"), ("mrr@10", "graded"), ("map", "graded"), ("p@1", "graded"),
     ("rprec", "graded")],
)  # fmt: skip
def test_every_metric_evaluate_knows_has_a_kind(metric: str, expected: str) -> None:
    assert kind(metric) == expected
    assert is_binary(metric) == (expected == "binary")
    evaluate({"q": [("a", 1.0)]}, {"q": {"a": 1}}, [metric])  # a name evaluate accepts


def test_every_kind_has_a_summary_column() -> None:
    assert set(SUMMARY) == set(KINDS.values()) == {"binary", "graded"}


def test_a_studys_own_measure_is_graded() -> None:
    """A per-question measure evaluate does not compute (sets' "set precision") is
    compared as means, as every study has compared it."""
    assert kind("set precision") == kind("hit") == "graded"  # hit without a cutoff: not hit@k
    assert not is_binary("hits@1")


def test_a_binary_metric_is_compared_as_hits_and_a_graded_one_as_means() -> None:
    hits = compare_metric(SCORES, "hit@1", "base", stats=STATS)
    expected = compare_hits(
        {a: {q: v > 0 for q, v in s.items()} for a, s in SCORES.items()}, "base", stats=STATS
    )
    assert hits.equals(expected)
    assert {"rate", "only_arm"} <= set(hits.columns)
    means = compare_metric(SCORES, "ndcg@10", "base", stats=STATS)
    assert means.equals(compare(SCORES, "base", stats=STATS))
    assert "mean" in means.columns
    assert "rate" not in means.columns
