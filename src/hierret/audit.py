"""Relevance-pool audit: top-ranked units that no label marks relevant, for a reader to judge.

Gold labels are written for the answers their authors knew. A ranker that
finds *another* unit that also answers is penalised for it, so a study lists
every unit some arm ranked near the top without a relevant label and has a
person read them: an unlabeled unit that does answer its question is a
labelling error to fix. :func:`unlabeled_top` makes that list, :func:`pairs`
keeps each (question, unit) pair once, and :func:`review_table` shows the
first pairs to read, with the question beside the unit's text.

Examples
--------
>>> from hierret.hierarchy import build_hierarchy
>>> from hierret.units import Corpus, Document, Query
>>> text = "Cats\\n====\\n\\nCats purr.\\n\\nDogs\\n====\\n\\nDogs bark.\\n"
>>> h = build_hierarchy(Corpus("pets", [Document("d", "Pets", text)]), max_chars=12,
...                     overlap_chars=0)
>>> [h.text(p) for p in h.passages][1:]
['Cats purr.', 'Dogs\\n====', 'Dogs bark.']
>>> q = [Query("q1", "why do dogs bark", (("d", 34, 44),))]
>>> qrels = {"passages": {"q1": {"d#p3": 1}}}
>>> runs = {"dense": {"q1": [("d#p3", 0.9), ("d#p1", 0.5)]}}
>>> unlabeled_top(runs, h, qrels, q)[["question", "arm", "rank", "unit"]].to_dict("records")
[{'question': 'q1', 'arm': 'dense', 'rank': 2, 'unit': 'd#p1'}]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd
from pandas.io.formats.style import Styler

from hierret.hierarchy import Hierarchy
from hierret.runs import Qrels, Run
from hierret.tables import styled
from hierret.units import Level, Query, Unit

__all__ = ["pairs", "review_table", "unlabeled_top"]

_LEVELS: tuple[Level, ...] = ("passages", "sections", "documents")
COLUMNS = ["question", "arm", "rank", "unit", "level", "section", "text", "asked"]


def unlabeled_top(
    runs: Mapping[str, Run],
    hierarchy: Hierarchy,
    qrels: Mapping[Level, Qrels],
    queries: Sequence[Query] = (),
    depth: int = 3,
    snippet: int = 160,
) -> pd.DataFrame:
    """Every unit some arm ranked in its top ``depth`` that no label marks relevant.

    Parameters
    ----------
    runs : mapping of str to Run
        Each arm's rankings, by arm name, of units of ``hierarchy`` (any level;
        a unit's level is read from its id).
    hierarchy : Hierarchy
        The units the runs rank.
    qrels : mapping of level to Qrels
        The judgments of every level the runs rank (e.g.
        ``bundle.qrels(hierarchy, level)``); a grade above 0 is relevant.
    queries : sequence of Query, optional
        The questions, whose text is shown beside each unit.
    depth : int, default 3
        How far down each ranking to read.
    snippet : int, default 160
        Characters of each unit's text shown (white space collapsed).

    Returns
    -------
    pandas.DataFrame
        One row per (arm, question, rank) whose unit is unlabeled: ``question``
        (id), ``arm``, ``rank`` (1-based), ``unit``, ``level``, ``section`` (the
        section holding a passage; the unit itself otherwise), ``text`` and
        ``asked`` (the question's text); arms in the order given, then queries
        in run order, then rank. ``drop_duplicates(["question", "unit"])``
        gives the distinct pairs to read.

    Raises
    ------
    KeyError
        A run ranks a unit that is not in ``hierarchy``, or of a level that
        ``qrels`` does not judge.
    """
    units: dict[str, tuple[Level, Unit]] = {
        u.id: (level, u) for level in _LEVELS for u in hierarchy.units(level)}
    to_section = hierarchy.parents("passages", "sections")
    asked = {q.id: q.text for q in queries}
    rows = []
    for arm, run in runs.items():
        for qid, ranking in run.items():
            for rank, (uid, _) in enumerate(ranking[:depth], 1):
                if uid not in units:
                    raise KeyError(f"arm {arm!r} ranks {uid!r}, which is not a unit of the "
                                   "hierarchy given")
                level, unit = units[uid]
                if level not in qrels:
                    raise KeyError(f"arm {arm!r} ranks {level}, which qrels does not judge "
                                   f"(it judges {', '.join(qrels)})")
                if qrels[level].get(qid, {}).get(uid, 0) > 0:
                    continue
                text = " ".join(hierarchy.text(unit).split())
                rows.append({"question": qid, "arm": arm, "rank": rank, "unit": uid,
                             "level": level, "section": to_section.get(uid, uid),
                             "text": text[:snippet] + ("…" if len(text) > snippet else ""),
                             "asked": asked.get(qid, "")})
    return pd.DataFrame(rows, columns=COLUMNS)


def pairs(unlabeled: pd.DataFrame) -> pd.DataFrame:
    """The distinct (question, unit) pairs of :func:`unlabeled_top`'s rows, first rank first."""
    return unlabeled.drop_duplicates(["question", "unit"])


def review_table(unlabeled: pd.DataFrame, first: int = 15) -> Styler:
    """The first ``first`` pairs to read, captioned with how many there are and per arm.

    Each row shows the question (id and text), the arm and rank that put the
    unit there, and the unit (id and text); both texts wrap in their column.

    Examples
    --------
    >>> rows = pd.DataFrame([{"question": "q1", "arm": a, "rank": 2, "unit": "d#p1",
    ...                       "level": "passages", "section": "d#s1", "text": "Dogs.",
    ...                       "asked": "why?"} for a in ("dense", "bm25")], columns=COLUMNS)
    >>> review_table(rows).caption
    'The first 1 of 1 unlabeled (question, unit) pairs; unlabeled units per arm: dense 1, bm25 1'
    """
    distinct = pairs(unlabeled)
    per_arm = ", ".join(f"{arm} {n}" for arm, n in unlabeled["arm"].value_counts(
        sort=False).items())
    shown = distinct[["question", "asked", "arm", "rank", "unit", "text"]].head(first)
    return styled(shown, f"The first {len(shown)} of {len(distinct)} unlabeled (question, "
                  f"unit) pairs; unlabeled units per arm: {per_arm}", index=False)
