"""Span-overlap qrels match a brute-force definition and scale to large unit sets."""

from __future__ import annotations

import random
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hierret.evaluation import Qrels, qrels_from_evidence
from hierret.structure.units import Query, Unit


def _brute(queries: list[Query], units: list[Unit], min_overlap: float) -> Qrels:
    qrels: Qrels = {}
    for q in queries:
        rel = {
            u.id
            for doc, s, e in q.evidence
            for u in units
            if u.doc_id == doc
            and (ov := min(e, u.end) - max(s, u.start)) > 0
            and ov >= min_overlap * min(e - s, len(u))
        }
        if rel:
            qrels[q.id] = dict.fromkeys(sorted(rel), 1)
    return qrels


def _hierarchy(doc: str, length: int, passage: int) -> list[Unit]:
    units = [Unit(doc, doc, "documents", 0, length, None, doc)]
    half = length // 2
    units += [
        Unit(f"{doc}#s1", doc, "sections", 0, half, doc),
        Unit(f"{doc}#s2", doc, "sections", half, length, doc),
    ]
    units += [
        Unit(
            f"{doc}#p{i}", doc, "passages", s, min(s + passage, length), f"{doc}#s{1 + (s >= half)}"
        )
        for i, s in enumerate(range(0, length, passage))
    ]
    return units


def test_worked_example_and_threshold() -> None:
    units = _hierarchy("d", 100, 10)
    # evidence [15, 32): p1 overlaps 5 of 10 (0.5), p2 10 of 10, p3 2 of 10
    q = Query("q", "?", (("d", 15, 32),))
    assert qrels_from_evidence([q], units) == {"q": {"d": 1, "d#p1": 1, "d#p2": 1, "d#s1": 1}}
    assert "d#p1" not in qrels_from_evidence([q], units, min_overlap=0.6)["q"]
    assert "d#p3" in qrels_from_evidence([q], units, min_overlap=0.2)["q"]


def test_document_unit_relevant_whenever_it_holds_evidence() -> None:
    units = _hierarchy("a", 1000, 50) + _hierarchy("b", 1000, 50)
    qs = [Query(f"q{i}", "?", (("b", i * 90, i * 90 + 7),)) for i in range(11)]
    for judged in qrels_from_evidence(qs, units, min_overlap=1.0).values():
        assert "b" in judged
        assert "a" not in judged


def test_unmatched_queries_left_out_and_bad_arguments_raise() -> None:
    units = _hierarchy("d", 100, 10)
    assert qrels_from_evidence([Query("q", "?", (("other", 0, 5),))], units) == {}
    with pytest.raises(ValueError, match="min_overlap"):
        qrels_from_evidence([], units, min_overlap=0.0)
    with pytest.raises(ValueError, match="empty evidence span"):
        qrels_from_evidence([Query("q", "?", (("d", 5, 5),))], units)


_span = st.tuples(st.integers(0, 200), st.integers(1, 60)).map(lambda t: (t[0], t[0] + t[1]))


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from("xy"), st.sampled_from(["passages", "sections"]), _span),
        max_size=25,
    ),
    st.lists(
        st.lists(st.tuples(st.sampled_from("xyz"), _span), min_size=1, max_size=3), max_size=5
    ),
    st.sampled_from([0.1, 0.5, 0.75, 1.0]),
)
def test_matches_brute_force(
    raw_units: list[tuple[str, str, tuple[int, int]]],
    raw_queries: list[list[tuple[str, tuple[int, int]]]],
    min_overlap: float,
) -> None:
    units = [Unit(f"u{i}", d, lvl, s, e) for i, (d, lvl, (s, e)) in enumerate(raw_units)]  # type: ignore[arg-type]
    queries = [
        Query(f"q{i}", "?", tuple((d, s, e) for d, (s, e) in ev))
        for i, ev in enumerate(raw_queries)
    ]
    assert qrels_from_evidence(queries, units, min_overlap) == _brute(queries, units, min_overlap)


def test_scales_to_1e5_units_and_1e3_queries() -> None:
    rng = random.Random(3)
    units = [u for d in range(100) for u in _hierarchy(f"d{d}", 100_000, 100)]
    assert len(units) > 100_000
    queries = []
    for i in range(1000):
        s = rng.randrange(99_000)
        queries.append(
            Query(f"q{i}", "?", ((f"d{rng.randrange(100)}", s, s + rng.randint(20, 900)),))
        )
    start = time.process_time()  # CPU time: a busy machine slows the clock, not the work
    qrels = qrels_from_evidence(queries, units)
    elapsed = time.process_time() - start
    assert len(qrels) == 1000
    assert elapsed < 2.0, elapsed
