"""The run order hierret owns (hierret.search.runs): score descending, ties by unit id ascending."""

from __future__ import annotations

import math
from itertools import pairwise

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hierret.search.runs import rank, tie_keys


def test_rank_orders_by_score_then_id_descending_as_trec_eval() -> None:
    assert rank({"b": 1.0, "c": 3.0, "a": 1.0, "d": -2.0}) == [
        ("c", 3.0),
        ("b", 1.0),
        ("a", 1.0),
        ("d", -2.0),
    ]
    assert rank({}) == []


@given(st.dictionaries(st.text(max_size=4), st.sampled_from([0.0, 0.5, 1.0, -1.0, math.inf])))
def test_rank_is_independent_of_insertion_order(scores: dict[str, float]) -> None:
    ranked = rank(scores)
    assert ranked == rank(dict(reversed(list(scores.items()))))
    assert all(s1 > s2 or (s1 == s2 and u1 > u2) for (u1, s1), (u2, s2) in pairwise(ranked))


@given(st.lists(st.text(max_size=3), unique=True))
def test_tie_keys_order_positions_as_rank_orders_ids(ids: list[str]) -> None:
    keys = tie_keys(ids)
    assert [ids[i] for i in np.argsort(keys)] == [u for u, _ in rank(dict.fromkeys(ids, 1.0))]


def test_rank_rejects_nan() -> None:
    with pytest.raises(ValueError, match="NaN"):
        rank({"a": math.nan})


def test_evaluation_re_exports_the_run_types() -> None:
    import hierret.evaluation as ev
    import hierret.search.lifting
    import hierret.search.runs

    assert (ev.rank, ev.Run, ev.Ranking, ev.Qrels) == (
        hierret.search.runs.rank,
        hierret.search.runs.Run,
        hierret.search.runs.Ranking,
        hierret.search.runs.Qrels,
    )
    assert (ev.lift, ev.ancestors_at) == (
        hierret.search.lifting.lift,
        hierret.search.lifting.ancestors_at,
    )


def test_rank_with_a_tolerance_ties_near_scores_by_id_and_checks_it() -> None:
    ranked = rank({"a": 0.5000003, "b": 0.5, "c": 0.4, "d": 0.39999}, tolerance=1e-4)
    assert ranked == [("b", 0.5000003), ("a", 0.5000003), ("d", 0.4), ("c", 0.4)]
    assert rank({"a": 1.0, "b": 1.0 + 1e-9}) == [("b", 1.0 + 1e-9), ("a", 1.0)]
    for bad in (-1e-5, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="tolerance"):
            rank({"a": 1.0}, tolerance=bad)
