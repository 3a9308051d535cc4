"""Lifting a run of fine units to a coarser target (passages to sections or documents).

Evaluation lifts a run to the level relevance is judged at; fused search lifts
passages to sections before blending them with the sections' own scores. Both
use :func:`lift`, so it lives beside the run types, below both.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from hierret.search.runs import Run, rank
from hierret.structure.units import Level, Unit

__all__ = ["ancestors_at", "lift", "lift_overlapping"]


def lift(run: Run, parent: Mapping[str, str]) -> Run:
    """Score each parent by its best child and rank the parents.

    Parameters
    ----------
    run : Run
        Rankings of fine units (passages, or sections).
    parent : Mapping[str, str]
        Each fine unit's id to the id of the coarser unit it belongs to: its
        section, or its document (see :func:`ancestors_at`).

    Returns
    -------
    Run
        For every query, the parents of its ranked units, each scored by its
        best-scoring child, ranked by :func:`~hierret.search.runs.rank`.

    Raises
    ------
    ValueError
        If a ranked unit has no entry in ``parent``; the message names the
        first few such units and their queries.

    Examples
    --------
    >>> run = {"q": [("d1#p3", 0.9), ("d2#p0", 0.7), ("d1#p1", 0.2)]}
    >>> lift(run, {"d1#p3": "d1", "d1#p1": "d1", "d2#p0": "d2"})
    {'q': [('d1', 0.9), ('d2', 0.7)]}
    """
    return _lift(run, lambda uid: (parent[uid],) if uid in parent else (), "parent")


def lift_overlapping(run: Run, holders: Mapping[str, Sequence[str]]) -> Run:
    """Score each holder by its best child, a child counting for every unit that holds it.

    :func:`lift` with one change: a fine unit may belong to several coarser
    ones (a passage straddling a heading overlaps the sections on both sides,
    :meth:`~hierret.structure.hierarchy.Hierarchy.overlapped_sections`), and its score
    goes to each of them. With one holder per unit it equals :func:`lift`.

    Parameters
    ----------
    run : Run
        Rankings of fine units.
    holders : Mapping[str, Sequence[str]]
        Each fine unit's id to the ids of the coarser units it belongs to
        (at least one).

    Returns
    -------
    Run
        For every query, the holders of its ranked units, each scored by its
        best-scoring child, ranked by :func:`~hierret.search.runs.rank`.

    Raises
    ------
    ValueError
        A ranked unit with no holder (missing, or an empty sequence); the
        message names the first few.

    Examples
    --------
    >>> run = {"q": [("d#p0", 0.9), ("d#p1", 0.4)]}
    >>> lift_overlapping(run, {"d#p0": ("d#s1", "d#s2"), "d#p1": ("d#s3",)})
    {'q': [('d#s2', 0.9), ('d#s1', 0.9), ('d#s3', 0.4)]}
    """
    return _lift(run, lambda uid: holders.get(uid) or (), "holder")


def _lift(run: Run, owners_of: Callable[[str], Sequence[str]], word: str) -> Run:
    """Each owner scored by its best-scoring child, ranked; a unit with no owner is an error."""
    lifted: Run = {}
    missing: list[tuple[str, str]] = []
    for qid, ranking in run.items():
        best: dict[str, float] = {}
        for uid, score in ranking:
            owners = owners_of(uid)
            if not owners:
                missing.append((qid, uid))
            for p in owners:
                if p not in best or score > best[p]:
                    best[p] = score
        lifted[qid] = rank(best)
    if missing:
        shown = ", ".join(f"{uid!r} (query {qid!r})" for qid, uid in missing[:5])
        raise ValueError(
            f"cannot lift: {len(missing)} ranked unit(s) have no {word} in the mapping, "
            f"e.g. {shown}; build the mapping from the same units the run ranks"
        )
    return lifted


def ancestors_at(units: Sequence[Unit], level: Level) -> dict[str, str]:
    """Map every unit at or below ``level`` to its enclosing unit at ``level``.

    Follows :attr:`Unit.parent` links, so passages map to their document
    (``level="documents"``) even when their direct parents are sections. Units
    at ``level`` map to themselves; units whose chain never reaches ``level``
    (coarser ones) are left out.

    Parameters
    ----------
    units : Sequence[Unit]
        All units of the hierarchy, including those at ``level``.
    level : {"documents", "sections", "passages"}
        The target level.

    Returns
    -------
    dict[str, str]
        Unit id to ancestor id, ready for :func:`lift`.

    Raises
    ------
    ValueError
        If a parent link points to a unit not in ``units``, or links form a cycle.

    Examples
    --------
    >>> units = [Unit("d", "d", "documents", 0, 9),
    ...          Unit("d#s1", "d", "sections", 0, 9, "d"),
    ...          Unit("d#p0", "d", "passages", 0, 4, "d#s1")]
    >>> ancestors_at(units, "documents")
    {'d': 'd', 'd#s1': 'd', 'd#p0': 'd'}
    """
    by_id = {u.id: u for u in units}
    result: dict[str, str] = {}
    for unit in units:
        u, steps = unit, 0
        while u.level != level and u.parent is not None:
            if u.parent not in by_id:
                raise ValueError(f"unit {u.id!r} has parent {u.parent!r}, which is not in units")
            u, steps = by_id[u.parent], steps + 1
            if steps > len(by_id):
                raise ValueError(f"parent links of unit {unit.id!r} form a cycle")
        if u.level == level:
            result[unit.id] = u.id
    return result
