"""Auto-merging (hierret.study.merging): the threshold rule and what it does to lifted runs."""

from __future__ import annotations

import pytest

from hierret.search.lifting import lift
from hierret.structure.hierarchy import build_hierarchy
from hierret.structure.units import Corpus, Document, Query
from hierret.study.experiment import judge
from hierret.study.merging import auto_merge, merge_parents, merge_run, section_sizes

PARENT = {"a1": "A", "a2": "A", "a3": "A", "b1": "B", "b2": "B"}
SIZES = {"A": 3, "B": 2}
RANKING = [("a1", 0.9), ("b1", 0.8), ("a2", 0.6), ("b2", 0.1)]


@pytest.mark.parametrize("score", ["mean", "best"])
def test_merges_exactly_above_the_threshold_not_at_it(score: str) -> None:
    # A has 2 of 3 passages in the candidates, B 2 of 2
    at_a = auto_merge(RANKING, PARENT, SIZES, 2 / 3, score)  # A at its threshold: stays
    assert {u for u, _ in at_a} == {"a1", "a2", "B"}
    above = auto_merge(RANKING, PARENT, SIZES, 2 / 3 - 1e-9, score)
    assert {u for u, _ in above} == {"A", "B"}
    assert {u for u, _ in auto_merge(RANKING, PARENT, SIZES, 1.0, score)} == set(
        dict(RANKING)
    )  # a share is never above 1: nothing merges
    half = auto_merge([("b1", 0.5)], PARENT, SIZES, 0.5, score)
    assert half == [("b1", 0.5)]  # 1 of 2 is not more than a half


def test_scores_of_merged_sections() -> None:
    best = auto_merge(RANKING, PARENT, SIZES, 0.5, "best")
    assert best == [("A", 0.9), ("B", 0.8)]  # at the place of the best passage
    mean = auto_merge(RANKING, PARENT, SIZES, 0.5, "mean")
    assert mean == [("A", pytest.approx(0.75)), ("B", pytest.approx(0.45))]


def test_best_rule_is_the_lifted_passage_run_at_sections_and_documents() -> None:
    text = "One\n===\n\nCats purr. Cats nap.\n\nTwo\n===\n\nDogs bark. Dogs dig. Dogs run.\n"
    h = build_hierarchy(
        Corpus("c", [Document("d", "D", text), Document("e", "E", text)]),
        max_chars=12,
        overlap_chars=0,
    )
    ids = [p.id for p in h.passages]
    run = {"q": [(u, 1.0 - i / 10) for i, u in enumerate(ids[::-1])]}
    q = [Query("q", "dogs", (("d", 40, 48),))]
    for target in ("sections", "documents"):
        merged = merge_run(run, h, 0.3, candidates=len(ids), score="best")
        lifted = lift(run, h.parents("passages", target))
        assert lift(merged, merge_parents(h, target)) == lifted
        mean = merge_run(run, h, 0.3, candidates=len(ids), score="mean")
        units = h.units(target)
        assert judge(mean, q, units, merge_parents(h, target))["ndcg@10"]["q"] <= 1.0
    assert sum(section_sizes(h).values()) == len(ids)


def test_bad_threshold_and_score() -> None:
    with pytest.raises(ValueError, match="threshold"):
        auto_merge(RANKING, PARENT, SIZES, 1.5)
    with pytest.raises(ValueError, match="score must be"):
        auto_merge(RANKING, PARENT, SIZES, 0.5, "max")  # type: ignore[arg-type]
