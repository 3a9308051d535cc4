"""Gold coverage reports name the uncovered queries per target."""

from __future__ import annotations

import pytest

from hierret.evaluation import CoverageReport, check_coverage, qrels_from_evidence
from hierret.structure.units import Query, Unit

UNITS = [
    Unit("d", "d", "documents", 0, 100),
    Unit("d#p0", "d", "passages", 0, 10, "d"),
    Unit("d#p1", "d", "passages", 90, 100, "d"),
]
QUERIES = [
    Query("q1", "?", (("d", 0, 8),)),
    Query("q2", "?", (("d", 40, 60),)),  # between passages
    Query("q3", "?", (("gone", 0, 5),)),  # document not in the corpus
]


def _report() -> CoverageReport:
    by_target = {
        level: qrels_from_evidence(QUERIES, [u for u in UNITS if u.level == level])
        for level in ("documents", "passages")
    }
    return check_coverage(QUERIES, by_target)


def test_report_lists_uncovered_queries_per_target() -> None:
    report = _report()
    assert not report.ok
    assert report.n_queries == 3
    assert report.uncovered == {"documents": ("q3",), "passages": ("q2", "q3")}
    assert str(report) == (
        "gold coverage of 3 queries: FAILED\n"
        "  documents: 1 uncovered: q3\n"
        "  passages: 2 uncovered: q2, q3"
    )


def test_raise_if_failed_names_targets_queries_and_fix() -> None:
    with pytest.raises(ValueError, match=r"documents: q3; passages: q2, q3.*quotes.*min_overlap"):
        _report().raise_if_failed()


def test_ok_report_and_zero_grades() -> None:
    report = check_coverage(QUERIES[:1], {"documents": {"q1": {"d": 1}}})
    assert report.ok
    assert "all covered" in str(report)
    report.raise_if_failed()
    assert not check_coverage(QUERIES[:1], {"documents": {"q1": {"d": 0}}}).ok


def test_long_lists_are_shortened() -> None:
    qs = [Query(f"q{i}", "?", ()) for i in range(25)]
    text = str(check_coverage(qs, {"passages": {}}))
    assert "25 uncovered" in text
    assert "q19" in text
    assert "q20," not in text
    assert "and 5 more" in text
