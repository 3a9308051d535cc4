"""Auto-merging: a section replaces its passages when enough of them were retrieved.

The parent-replaces-children retrieval popularised by LlamaIndex's
``AutoMergingRetriever``: retrieve passages; when **more than** ``threshold``
of a section's passages are among the first ``candidates``, the section is
returned in their place. Where it goes:

``score="best"``
    At the position of its best passage, with that passage's score (the
    rule as usually described). Judged at the SECTION or DOC target, where a
    passage counts through its section (or document) by its best score
    anyway (:func:`~hierret.search.lifting.lift`), this changes nothing: it is the
    passage ranking lifted, a check rather than an arm.
``score="mean"``
    Scored by the mean of the merged passages' scores and ranked again
    (LlamaIndex's rule): a section whose passages match unevenly moves down.

A merged ranking mixes section and passage ids; :func:`merge_parents` maps
both to the target, for lifting and judging.

Examples
--------
>>> ranking = [("d#p0", 0.9), ("e#p0", 0.8), ("d#p1", 0.4)]
>>> parent = {"d#p0": "d#s1", "d#p1": "d#s1", "d#p2": "d#s1", "e#p0": "e#s1"}
>>> sizes = {"d#s1": 3, "e#s1": 2}
>>> auto_merge(ranking, parent, sizes, threshold=0.5)
[('e#p0', 0.8), ('d#s1', 0.65)]
>>> auto_merge(ranking, parent, sizes, threshold=0.5, score="best")
[('d#s1', 0.9), ('e#p0', 0.8)]
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Literal, cast

import numpy as np
import pandas as pd

from hierret._validate import check_count, check_weight
from hierret.evaluation.qrels import qrels_from_evidence
from hierret.evaluation.stats.folds import fold_parts, held_out
from hierret.search.lifting import lift
from hierret.search.runs import Qrels, Ranking, Run, rank
from hierret.structure.hierarchy import Hierarchy
from hierret.structure.units import Level, Query
from hierret.study.experiment import Result, judge

__all__ = [
    "MergeScore",
    "auto_merge",
    "merge_parents",
    "merge_run",
    "section_sizes",
    "tune_automerge",
]

#: Where a merged section goes: its best passage's place, or the mean of its passages.
MergeScore = Literal["best", "mean"]


def auto_merge(
    ranking: Ranking,
    parent: Mapping[str, str],
    sizes: Mapping[str, int],
    threshold: float,
    score: MergeScore = "mean",
) -> Ranking:
    """One ranking of passages with over-``threshold`` sections merged.

    Parameters
    ----------
    ranking : Ranking
        Passages, best first (the candidates).
    parent : mapping
        Passage id to section id.
    sizes : mapping
        Section id to its number of passages (:func:`section_sizes`).
    threshold : float in [0, 1]
        A section merges when the share of its passages in ``ranking`` is
        strictly greater.
    score : {"mean", "best"}, default "mean"
        See the module docstring.

    Returns
    -------
    Ranking
        Sections and the passages not merged. With ``"mean"``, re-ranked by
        :func:`~hierret.search.runs.rank` (the one tie rule); with ``"best"``, the
        input order, each merged section at its best passage's place.

    Examples
    --------
    Exactly at the threshold nothing merges; just above it, the section does:

    >>> auto_merge([("a", 1.0)], {"a": "s"}, {"s": 2}, threshold=0.5)
    [('a', 1.0)]
    >>> auto_merge([("a", 1.0)], {"a": "s"}, {"s": 2}, threshold=0.49)
    [('s', 1.0)]
    """
    threshold = check_weight(threshold, "threshold")
    if score not in ("best", "mean"):
        raise ValueError(f"score must be 'best' or 'mean', got {score!r}")
    found = Counter(parent[p] for p, _ in ranking)
    merged = {s for s, n in found.items() if n / sizes[s] > threshold}
    if score == "mean":
        means = {s: float(np.mean([v for p, v in ranking if parent[p] == s])) for s in merged}
        return rank({**{p: v for p, v in ranking if parent[p] not in merged}, **means})
    out: Ranking = []
    placed: set[str] = set()
    for p, v in ranking:
        s = parent[p]
        if s not in merged:
            out.append((p, v))
        elif s not in placed:
            placed.add(s)
            out.append((s, v))
    return out


def section_sizes(hierarchy: Hierarchy) -> dict[str, int]:
    """Passages per section (each passage belongs to the section holding most of it)."""
    return dict(Counter(p.parent or "" for p in hierarchy.passages))


def merge_run(
    run: Run,
    hierarchy: Hierarchy,
    threshold: float,
    candidates: int = 20,
    score: MergeScore = "mean",
) -> Run:
    """:func:`auto_merge` of every query's first ``candidates`` passages.

    Examples
    --------
    >>> from hierret.structure.hierarchy import build_hierarchy
    >>> from hierret.structure.units import Corpus, Document
    >>> h = build_hierarchy(Corpus("c", [Document("d", "D", "One. Two. Three.")]), 6, 0)
    >>> merge_run({"q": [("d#p0", 0.9), ("d#p2", 0.5)]}, h, 0.5)
    {'q': [('d#s1', 0.7)]}
    """
    candidates = check_count(candidates, "candidates")
    parent = hierarchy.parents("passages", "sections")
    sizes = section_sizes(hierarchy)
    return {q: auto_merge(r[:candidates], parent, sizes, threshold, score) for q, r in run.items()}


def merge_parents(hierarchy: Hierarchy, target: Level) -> dict[str, str]:
    """Passage and section ids to their unit at ``target`` (sections or documents).

    Examples
    --------
    >>> from hierret.structure.hierarchy import build_hierarchy
    >>> from hierret.structure.units import Corpus, Document
    >>> h = build_hierarchy(Corpus("c", [Document("d", "D", "One.")]))
    >>> merge_parents(h, "documents")
    {'d#p0': 'd', 'd#s1': 'd'}
    """
    if target not in ("sections", "documents"):
        raise ValueError(f"merged runs are judged at 'sections' or 'documents', not {target!r}")
    return {**hierarchy.parents("passages", target), **hierarchy.parents("sections", target)}


def tune_automerge(
    result: Result,
    hierarchy: Hierarchy,
    queries: Sequence[Query],
    thresholds: Sequence[float],
    candidates: int = 20,
    *,
    base: str = "chunk",
    name: str = "automerge",
    score: MergeScore = "mean",
    folds: int = 5,
    seed: int = 0,
) -> pd.DataFrame:
    """Auto-merge an arm's passage runs, the threshold chosen out of fold; add it as an arm.

    For every threshold, :func:`merge_run` of ``base``'s runs is judged at
    each target of ``result`` (its first metric); each question is then
    scored with the threshold best on the other folds
    (:func:`hierret.evaluation.stats.held_out`, seeded), and those scores join
    ``result`` as the arm ``name`` (:meth:`~hierret.study.experiment.Result.add`),
    each question with its run at that threshold, lifted to the target.

    Parameters
    ----------
    result : Result
        Holds ``base``, a passage arm run on ``hierarchy``, judged at
        ``"sections"`` and/or ``"documents"``.
    hierarchy : Hierarchy
    queries : sequence of Query
    thresholds : sequence of float
        The grid (shares in [0, 1]; a section merges strictly above).
    candidates : int, default 20
        Passages read per question.
    base, name, score, folds, seed
        The passage arm, the new arm's name, :func:`auto_merge`'s rule, the split.

    Returns
    -------
    DataFrame
        One row per target: ``mean`` (out of fold), ``chosen_min``,
        ``chosen_max``, ``in_sample`` (the threshold best on all questions),
        ``merged`` (sections merged per question, mean, at each question's
        threshold) and ``in_sample_mean``.
    """
    metric = result.metrics[0]
    runs = {t: merge_run(result.runs[base], hierarchy, t, candidates, score) for t in thresholds}
    sections = set(hierarchy.parents("sections", "sections"))
    counts = pd.DataFrame(
        {
            t: {q: sum(u in sections for u, _ in r) for q, r in run.items()}
            for t, run in runs.items()
        }
    )
    rows, added = [], {}
    ranked: dict[str, tuple[Run, Qrels]] = {}  # each question's run at its fold's threshold
    for target in result.targets:
        wanted = result.per_query(target, metric).index
        level = cast(Level, target)
        units, parents = hierarchy.units(level), merge_parents(hierarchy, level)
        frame = pd.DataFrame(
            {t: judge(run, queries, units, parents, [metric])[metric] for t, run in runs.items()}
        ).loc[wanted]
        held, chosen = held_out(frame, folds, seed)
        added[target] = {str(q): float(v) for q, v in held.items()}
        pick = [chosen[f] for f in _fold_of(len(frame), folds, seed)]
        lifted = {t: lift(runs[t], parents) for t in set(pick)}
        ranked[target] = (
            {str(q): lifted[t].get(str(q), []) for q, t in zip(frame.index, pick, strict=True)},
            qrels_from_evidence(queries, list(units)),
        )
        merged = [counts.loc[q, t] for q, t in zip(frame.index, pick, strict=True)]
        best = frame.mean().idxmax()
        rows.append(
            {
                "target": target,
                "mean": float(held.mean()),
                "chosen_min": min(chosen),
                "chosen_max": max(chosen),
                "in_sample": best,
                "in_sample_mean": float(frame[best].mean()),
                "merged": float(np.mean(merged)),
            }
        )
    result.add(name, added, metric, ranked)
    return pd.DataFrame(rows).set_index("target")


def _fold_of(n: int, folds: int, seed: int) -> list[int]:
    out = [0] * n
    for i, part in enumerate(fold_parts(n, folds, seed)):
        for row in part:
            out[int(row)] = i
    return out
