"""Gold coverage: every query's evidence must resolve to a unit at every target."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from hierret.search.runs import Qrels
from hierret.structure.units import Query

__all__ = ["CoverageReport", "check_coverage"]

_SHOWN = 20


def _ids(qids: Sequence[str]) -> str:
    more = f" and {len(qids) - _SHOWN} more" if len(qids) > _SHOWN else ""
    return ", ".join(qids[:_SHOWN]) + more


@dataclass(frozen=True)
class CoverageReport:
    """Which queries have no relevant unit, per target.

    Parameters
    ----------
    n_queries : int
        How many queries were checked.
    uncovered : Mapping[str, tuple[str, ...]]
        Target name (``"documents"``, ``"sections"``, ...) to the ids of the
        queries with no relevant unit there, in query order; every checked
        target has an entry, empty when all queries are covered.
    """

    n_queries: int
    uncovered: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """True when every query has a relevant unit at every target."""
        return not any(self.uncovered.values())

    def __str__(self) -> str:
        """One status line, then one line per target."""
        lines = [f"gold coverage of {self.n_queries} queries: {'ok' if self.ok else 'FAILED'}"]
        for target, qids in self.uncovered.items():
            status = f"{len(qids)} uncovered: {_ids(qids)}" if qids else "all covered"
            lines.append(f"  {target}: {status}")
        return "\n".join(lines)

    def raise_if_failed(self) -> None:
        """Raise if a query has no relevant unit at some target.

        Raises
        ------
        ValueError
            Naming each failing target and its uncovered query ids.
        """
        if self.ok:
            return
        failed = "; ".join(
            f"{target}: {_ids(qids)}" for target, qids in self.uncovered.items() if qids
        )
        raise ValueError(
            f"gold evidence of some queries resolves to no unit ({failed}). Check that "
            "their evidence spans (quotes) are found in the document texts, or lower "
            "min_overlap in qrels_from_evidence."
        )


def check_coverage(
    queries: Sequence[Query], qrels_by_target: Mapping[str, Qrels]
) -> CoverageReport:
    """Find the queries whose evidence resolved to no relevant unit, per target.

    Parameters
    ----------
    queries : Sequence[Query]
        The queries that should all be judged.
    qrels_by_target : Mapping[str, Qrels]
        Target name to its qrels, e.g. ``{"documents": ..., "passages": ...}``.

    Returns
    -------
    CoverageReport
        A query counts as covered at a target when its qrels hold a grade above 0;
        a query whose evidence names a coarser unit (:attr:`~hierret.structure.units.Query.level`)
        is not asked for at finer targets.

    Examples
    --------
    >>> qs = [Query("q1", "?", (("d", 0, 5),)), Query("q2", "?", (("d", 7, 9),))]
    >>> report = check_coverage(qs, {"documents": {"q1": {"d": 1}, "q2": {"d": 1}},
    ...                              "passages": {"q1": {"d#p0": 1}}})
    >>> report.ok
    False
    >>> print(report)
    gold coverage of 2 queries: FAILED
      documents: all covered
      passages: 1 uncovered: q2
    """
    uncovered = {
        target: tuple(
            q.id
            for q in queries
            if q.judged_at(target) and not any(g > 0 for g in qrels.get(q.id, {}).values())
        )
        for target, qrels in qrels_by_target.items()
    }
    return CoverageReport(len(queries), uncovered)
