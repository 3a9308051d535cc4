"""Lifting runs to coarser targets: best child's score, id tie-break, clear errors."""

from __future__ import annotations

import random

import pytest

from hierret.search.lifting import ancestors_at, lift
from hierret.search.runs import rank
from hierret.structure.units import Unit

UNITS = [
    Unit("a", "a", "documents", 0, 100),
    Unit("a#s1", "a", "sections", 0, 50, "a"),
    Unit("a#s2", "a", "sections", 50, 100, "a"),
    Unit("a#p0", "a", "passages", 0, 50, "a#s1"),
    Unit("a#p1", "a", "passages", 50, 75, "a#s2"),
    Unit("a#p2", "a", "passages", 75, 100, "a#s2"),
    Unit("b", "b", "documents", 0, 10),
    Unit("b#p0", "b", "passages", 0, 10, "b"),  # a passage straight under its document
]
RUN = {"q": [("a#p1", 0.9), ("b#p0", 0.8), ("a#p0", 0.8), ("a#p2", 0.1)], "empty": []}


def test_chunks_to_sections() -> None:
    to_sections = ancestors_at(UNITS, "sections")
    assert to_sections == {
        "a#s1": "a#s1",
        "a#s2": "a#s2",
        "a#p0": "a#s1",
        "a#p1": "a#s2",
        "a#p2": "a#s2",
    }
    lifted = lift({"q": [u for u in RUN["q"] if u[0] != "b#p0"]}, to_sections)
    assert lifted == {"q": [("a#s2", 0.9), ("a#s1", 0.8)]}


def test_chunks_and_sections_to_documents() -> None:
    to_docs = ancestors_at(UNITS, "documents")
    assert lift(RUN, to_docs) == {"q": [("a", 0.9), ("b", 0.8)], "empty": []}
    section_run = {"q": [("a#s2", 0.3), ("a#s1", 0.5)]}
    assert lift(section_run, to_docs) == {"q": [("a", 0.5)]}


def test_ties_broken_by_id() -> None:
    run = {"q": [("a#p2", 0.7), ("b#p0", 0.7)]}
    assert lift(run, {"a#p2": "z", "b#p0": "m"}) == {"q": [("z", 0.7), ("m", 0.7)]}


def test_matches_rank_of_max_on_random_runs() -> None:
    rng = random.Random(0)
    parent = {f"c{i}": f"p{i % 17}" for i in range(300)}
    for _ in range(50):
        children = rng.sample(sorted(parent), 60)
        ranking = rank({c: float(rng.randint(0, 20)) for c in children})
        best: dict[str, float] = {}
        for c, s in ranking:
            best[parent[c]] = max(best.get(parent[c], s), s)
        assert lift({"q": ranking}, parent)["q"] == rank(best)


def test_missing_parent_raises_clearly() -> None:
    with pytest.raises(ValueError, match=r"no parent.*'a#p9' \(query 'q'\)"):
        lift({"q": [("a#p9", 1.0)]}, ancestors_at(UNITS, "documents"))


def test_broken_or_cyclic_parent_links_raise() -> None:
    with pytest.raises(ValueError, match="not in units"):
        ancestors_at([Unit("x#p0", "x", "passages", 0, 1, "x#s1")], "documents")
    cyclic = [Unit("s1", "x", "sections", 0, 1, "s2"), Unit("s2", "x", "sections", 0, 1, "s1")]
    with pytest.raises(ValueError, match="cycle"):
        ancestors_at(cyclic, "documents")
