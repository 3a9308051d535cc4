"""Min-max fusion (hierret.search.rankers.fusion): ties, tiny and constant pools, the
weight's ends."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hierret.search.rankers.fusion import minmax_fuse, minmax_normalize
from hierret.search.runs import Ranking, rank


def ranking(scores: dict[str, float]) -> Ranking:
    return rank(scores)


def test_normalize_spans_zero_to_one() -> None:
    assert minmax_normalize([("a", 0.8), ("b", 0.5), ("c", 0.2)]) == pytest.approx(
        {"a": 1.0, "b": 0.5, "c": 0.0}
    )
    assert minmax_normalize([]) == {}


def test_pool_of_one_scores_one() -> None:
    assert minmax_normalize([("a", -3.0)]) == {"a": 1.0}
    fused = minmax_fuse([("a", 0.2)], [("b", 0.9)], weight=0.65)
    assert fused == [("b", 0.65), ("a", pytest.approx(0.35))]


def test_constant_pool_scores_one_everywhere() -> None:
    assert minmax_normalize([("a", 0.4), ("b", 0.4)]) == {"a": 1.0, "b": 1.0}
    fused = minmax_fuse([("a", 0.4), ("b", 0.4)], [("b", 0.9), ("c", 0.1)], weight=0.5)
    assert fused == [("b", 1.0), ("a", 0.5), ("c", 0.0)]


def test_ties_are_broken_by_unit_id() -> None:
    a = [("x", 0.9), ("y", 0.1)]
    b = [("y", 0.9), ("x", 0.1)]
    assert minmax_fuse(a, b, weight=0.5) == [("y", 0.5), ("x", 0.5)]  # ids descending
    assert minmax_fuse(b, a, weight=0.5) == [("y", 0.5), ("x", 0.5)]


def test_missing_leg_counts_like_the_bottom_of_the_pool() -> None:
    # the lowest candidate of a pool normalises to 0, the same as being absent from it
    fused = dict(minmax_fuse([("a", 0.9), ("b", 0.3)], [("c", 0.5), ("b", 0.1)], weight=0.5))
    assert fused == {"a": 0.5, "c": 0.5, "b": 0.0}


def test_empty_legs() -> None:
    assert minmax_fuse([], [], weight=0.3) == []
    assert minmax_fuse([], [("a", 0.2), ("b", 0.1)], weight=0.3) == [
        ("a", pytest.approx(0.3)),
        ("b", 0.0),
    ]


@pytest.mark.parametrize("weight", [-0.1, 1.01])
def test_weight_outside_unit_interval_raises(weight: float) -> None:
    with pytest.raises(ValueError, match="weight"):
        minmax_fuse([("a", 1.0)], [("a", 1.0)], weight)


pools = st.dictionaries(st.sampled_from("abcdefgh"), st.integers(-20, 20).map(float), max_size=8)


@settings(max_examples=80, deadline=None)
@given(pools, pools)
def test_weight_zero_and_one_reproduce_each_leg(sa: dict[str, float], sb: dict[str, float]) -> None:
    a, b = ranking(sa), ranking(sb)
    only_a = [u for u, _ in minmax_fuse(a, b, 0.0) if u in sa]
    only_b = [u for u, _ in minmax_fuse(a, b, 1.0) if u in sb]
    assert only_a == [u for u, _ in a]
    assert only_b == [u for u, _ in b]
    fused = minmax_fuse(a, b, 0.4)
    assert {u for u, _ in fused} == set(sa) | set(sb)
    assert all(0.0 <= s <= 1.0 + 1e-12 for _, s in fused)
    assert fused == rank(dict(fused))
