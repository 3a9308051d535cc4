"""Relevance-pool audit: top-ranked units that no label marks relevant, for a reader to judge.

Gold labels are written for the answers their authors knew. A ranker that
finds *another* unit that also answers is penalised for it, so a study lists
every unit some arm ranked near the top without a relevant label and has a
person read them: an unlabeled unit that does answer its question is a
labelling error to fix. :func:`unlabeled_top` makes that list (with the
question beside each unit's text), and :func:`pairs` keeps each (question,
unit) pair once.

Reading every pair is long, so a study reads a seeded sample of them:
:func:`pair_list` puts the distinct pairs in one canonical order with the arms
that ranked each, :func:`fingerprint` names that list, :func:`sample` draws
from it, and :func:`read_judgements` reads what a reader decided from a CSV
whose header states the rule, the seed and the fingerprint of the list it was
drawn from (reading it against another list is an error).

Examples
--------
>>> from hierret.structure.hierarchy import build_hierarchy
>>> from hierret.structure.units import Corpus, Document, Query
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

import hashlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from io import StringIO
from pathlib import Path
from typing import TYPE_CHECKING, cast

import numpy as np
import pandas as pd
from pandas.io.formats.style import Styler

from hierret.evaluation.metrics import kind
from hierret.evaluation.stats import DEFAULT_STATS, StatsSettings, wilson_interval
from hierret.evaluation.stats.comparison import SUMMARY
from hierret.publish.record import key, table_values
from hierret.publish.tables import styled
from hierret.search.runs import Qrels, Run
from hierret.structure.hierarchy import Hierarchy
from hierret.structure.units import Level, Query, Unit

if TYPE_CHECKING:
    from hierret.study.experiment import Result

__all__ = [
    "Audit",
    "Reading",
    "add_relevant",
    "fingerprint",
    "judgements_path",
    "missed",
    "pair_list",
    "pairs",
    "read_judgements",
    "read_sample",
    "same_units",
    "sample",
    "sensitivity",
    "sensitivity_table",
    "unlabeled_top",
]

_LEVELS: tuple[Level, ...] = ("passages", "sections", "documents")
COLUMNS = ["question", "arm", "rank", "unit", "level", "section", "text", "asked"]
#: Columns of a judgements file: the pair, who ranked it, the reader's 0/1 and why.
JUDGED = ["question", "unit", "level", "arms", "relevant", "reason"]


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
        u.id: (level, u) for level in _LEVELS for u in hierarchy.units(level)
    }
    to_section = hierarchy.parents("passages", "sections")
    asked = {q.id: q.text for q in queries}
    rows = []
    for arm, run in runs.items():
        for qid, ranking in run.items():
            for rank, (uid, _) in enumerate(ranking[:depth], 1):
                if uid not in units:
                    raise KeyError(
                        f"arm {arm!r} ranks {uid!r}, which is not a unit of the hierarchy given"
                    )
                level, unit = units[uid]
                if level not in qrels:
                    raise KeyError(
                        f"arm {arm!r} ranks {level}, which qrels does not judge "
                        f"(it judges {', '.join(qrels)})"
                    )
                if qrels[level].get(qid, {}).get(uid, 0) > 0:
                    continue
                text = " ".join(hierarchy.text(unit).split())
                rows.append(
                    {
                        "question": qid,
                        "arm": arm,
                        "rank": rank,
                        "unit": uid,
                        "level": level,
                        "section": to_section.get(uid, uid),
                        "text": text[:snippet] + ("…" if len(text) > snippet else ""),
                        "asked": asked.get(qid, ""),
                    }
                )
    return pd.DataFrame(rows, columns=COLUMNS)


def pairs(unlabeled: pd.DataFrame) -> pd.DataFrame:
    """The distinct (question, unit) pairs of :func:`unlabeled_top`'s rows, first rank first."""
    return unlabeled.drop_duplicates(["question", "unit"])


def pair_list(unlabeled: pd.DataFrame) -> pd.DataFrame:
    """The distinct (question, unit) pairs in one canonical order, with the arms that ranked each.

    Parameters
    ----------
    unlabeled : pandas.DataFrame
        :func:`unlabeled_top`'s rows.

    Returns
    -------
    pandas.DataFrame
        ``question``, ``unit``, ``level`` and ``arms`` (each arm that put the
        unit in its top ranks, as ``arm@rank``, joined by ``"; "`` in the
        order of ``unlabeled``), sorted by question then unit id and indexed
        from 0: the order :func:`fingerprint` and :func:`sample` read.

    Examples
    --------
    >>> rows = pd.DataFrame([("q2", "a", 1, "d#p1", "passages"), ("q1", "b", 3, "d#s0",
    ...                      "sections"), ("q2", "b", 2, "d#p1", "passages")],
    ...                     columns=["question", "arm", "rank", "unit", "level"])
    >>> pair_list(rows).to_dict("records")  # doctest: +NORMALIZE_WHITESPACE
    [{'question': 'q1', 'unit': 'd#s0', 'level': 'sections', 'arms': 'b@3'},
     {'question': 'q2', 'unit': 'd#p1', 'level': 'passages', 'arms': 'a@1; b@2'}]
    """
    named = unlabeled.assign(arms=unlabeled["arm"] + "@" + unlabeled["rank"].astype(str))
    grouped = named.groupby(["question", "unit"], sort=True)
    out = grouped.agg(level=("level", "first"), arms=("arms", "; ".join)).reset_index()
    return out[["question", "unit", "level", "arms"]]


def fingerprint(pairs: pd.DataFrame) -> str:
    """A short digest of the set of (question, unit) pairs (16 hex digits of SHA-256).

    The pairs are sorted first, so any list of the same pairs has the same
    fingerprint, and a pair added, dropped or changed gives another.

    Examples
    --------
    >>> a = pd.DataFrame({"question": ["q1", "q2"], "unit": ["d#p0", "d#s1"]})
    >>> fingerprint(a) == fingerprint(a.iloc[::-1]), fingerprint(a) == fingerprint(a[:1])
    (True, False)
    """
    lines = sorted(f"{q}\t{u}\n" for q, u in zip(pairs["question"], pairs["unit"], strict=True))
    return hashlib.sha256("".join(lines).encode("utf-8")).hexdigest()[:16]


def sample(pairs: pd.DataFrame, n: int, seed: int = 0) -> pd.DataFrame:
    """A seeded simple random sample of ``n`` pairs, without replacement, in list order.

    The pairs are put in :func:`pair_list`'s order (question, then unit id),
    and ``numpy.random.default_rng(seed).choice(len(pairs), n, replace=False)``
    picks the rows, which are returned sorted; so the sample depends only on
    the set of pairs, ``n`` and ``seed``.

    Parameters
    ----------
    pairs : pandas.DataFrame
        Pairs with ``question`` and ``unit`` columns (:func:`pair_list`).
    n : int
        How many to draw, at most ``len(pairs)``.
    seed : int, default 0

    Returns
    -------
    pandas.DataFrame
        The drawn rows, indexed from 0.

    Raises
    ------
    ValueError
        ``n`` is negative or larger than the list.

    Examples
    --------
    >>> p = pd.DataFrame({"question": [f"q{i}" for i in range(10)], "unit": ["d"] * 10})
    >>> list(sample(p, 3, seed=1)["question"]) == list(sample(p[::-1], 3, seed=1)["question"])
    True
    >>> sample(p, 11)
    Traceback (most recent call last):
    ...
    ValueError: cannot draw 11 pairs from a list of 10: pass n <= 10
    """
    if not 0 <= n <= len(pairs):
        raise ValueError(
            f"cannot draw {n} pairs from a list of {len(pairs)}: pass n <= {len(pairs)}"
            if n > 0
            else f"n must be >= 0, got {n}"
        )
    ordered = pairs.sort_values(["question", "unit"], kind="stable").reset_index(drop=True)
    picked = np.sort(np.random.default_rng(seed).choice(len(ordered), n, replace=False))
    return ordered.iloc[picked].reset_index(drop=True)


def _read(
    path: str | os.PathLike[str], columns: Sequence[str]
) -> tuple[pd.DataFrame, dict[str, str]]:
    file = Path(path)
    text = file.read_text(encoding="utf-8").splitlines(keepends=True)
    header = dict(line[2:].rstrip("\n").split(": ", 1) for line in text if line.startswith("# "))
    body = "".join(line for line in text if not line.startswith("# "))
    frame = pd.read_csv(StringIO(body), dtype=str, keep_default_na=False)
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(
            f"{file.name} lacks the columns {missing}: it should have {', '.join(columns)}"
        )
    return frame, header


def read_judgements(
    path: str | os.PathLike[str], pairs: pd.DataFrame | None = None, strict: bool = True
) -> tuple[pd.DataFrame, dict[str, str]]:
    """Read a judgements file, checked against the pair list it claims to be drawn from.

    Parameters
    ----------
    path : path-like
        A CSV of the :data:`JUDGED` columns (``relevant`` 0 or 1, ``reason``
        text) under ``# key: value`` header lines: what a reader needs to trust
        the file, i.e. the rule, the seed, the sample size ``n``, the source
        list's size and ``fingerprint`` (:func:`fingerprint`).
    pairs : pandas.DataFrame, optional
        The pair list the code produces now (:func:`pair_list`). When given,
        its :func:`fingerprint` must be the header's ``fingerprint``, and the
        file's pairs must be ``sample(pairs, n, seed)`` with the header's ``n``
        and ``seed``.
    strict : bool, default True
        With ``False``, ``pairs`` is not checked; only the judged pairs that
        are among ``pairs`` are kept (a run on a sample of the corpus, such as
        the smoke runs, meets only some of the judged pairs).

    Returns
    -------
    (pandas.DataFrame, dict)
        The judged pairs (:data:`JUDGED` columns, ``relevant`` as int) and the
        header.

    Raises
    ------
    ValueError
        A missing column, a judgement other than 0 or 1, a missing reason, or
        (with ``pairs``) a list whose fingerprint or sample differs: the
        judgements were made on another list, so re-draw and re-read them.

    Examples
    --------
    >>> import tempfile
    >>> p = pd.DataFrame({"question": ["q1", "q2"], "unit": ["d#p0", "d#s1"],
    ...                   "level": ["passages", "sections"], "arms": ["dense@1", "bm25@2"]})
    >>> rows = sample(p, 1, seed=0).assign(relevant=1, reason="states the answer")
    >>> path = Path(tempfile.mkdtemp()) / "judged.csv"
    >>> head = f"# seed: 0\\n# n: 1\\n# fingerprint: {fingerprint(p)}\\n"
    >>> _ = path.write_text(head + rows[JUDGED].to_csv(index=False), encoding="utf-8")
    >>> judged, header = read_judgements(path, p)
    >>> judged[["question", "unit", "relevant"]].to_dict("records"), header["n"]
    ([{'question': 'q2', 'unit': 'd#s1', 'relevant': 1}], '1')
    >>> read_judgements(path, p[:1])
    Traceback (most recent call last):
    ...
    ValueError: judged.csv was drawn from a pair list with fingerprint ... (the pairs \
given have ...): the audit list changed; draw a new sample and read it again
    """
    file = Path(path)
    judged, header = _read(file, JUDGED)
    bad = judged[~judged["relevant"].isin(["0", "1"]) | (judged["reason"].str.strip() == "")]
    if len(bad):
        first = bad.iloc[0]
        raise ValueError(
            f"{file.name}: pair ({first['question']}, {first['unit']}) needs a "
            "judgement of 0 or 1 and a reason; fill both for every row"
        )
    judged = judged.astype({"relevant": int})
    if pairs is not None and not strict:
        keep = set(zip(pairs["question"], pairs["unit"], strict=True))
        inside = [p in keep for p in zip(judged["question"], judged["unit"], strict=True)]
        return judged[inside].reset_index(drop=True), header
    if pairs is not None:
        have = fingerprint(pairs)
        if header.get("fingerprint") != have:
            raise ValueError(
                f"{file.name} was drawn from a pair list with fingerprint "
                f"{header.get('fingerprint')} (the pairs given have {have}): the "
                "audit list changed; draw a new sample and read it again"
            )
        drawn = sample(pairs, int(header["n"]), int(header["seed"]))
        if list(zip(drawn["question"], drawn["unit"], strict=True)) != list(
            zip(judged["question"], judged["unit"], strict=True)
        ):
            raise ValueError(
                f"{file.name}'s pairs are not sample(pairs, n={header['n']}, "
                f"seed={header['seed']}): draw the sample with audit.sample"
            )
    return judged, header


def missed(
    unlabeled: pd.DataFrame, judged: pd.DataFrame, stats: StatsSettings = DEFAULT_STATS
) -> pd.DataFrame:
    """How many relevant units the labels miss in each arm's top ranks, estimated from a sample.

    Each arm's unlabeled pairs that fell in the sample are a simple random
    sample of that arm's unlabeled pairs, so the share judged relevant
    estimates the share among all of them (Wilson interval; the finite-list
    correction is left out, which widens the interval a little), and scaling
    by the arm's number of unlabeled pairs estimates how many relevant units
    its top ranks hold that no label marks.

    Parameters
    ----------
    unlabeled : pandas.DataFrame
        :func:`unlabeled_top`'s rows (``arm``, ``question``, ``unit``).
    judged : pandas.DataFrame
        The judged sample (``question``, ``unit``, ``relevant``), drawn from
        the distinct pairs of ``unlabeled`` (:func:`sample`).
    stats : StatsSettings, optional
        The level of the Wilson intervals (``stats.confidence``).

    Returns
    -------
    pandas.DataFrame
        One row per arm (in the order of ``unlabeled``) and a last row ``any
        arm`` for the distinct pairs: ``unlabeled`` (pairs), ``sampled``,
        ``relevant`` (judged so), ``share`` with ``share_low``/``share_high``,
        and ``missed`` = ``share`` × ``unlabeled`` with ``missed_low``/``missed_high``.

    Raises
    ------
    ValueError
        A judged pair that is not among ``unlabeled``'s pairs.

    Examples
    --------
    >>> rows = pd.DataFrame({"arm": ["a", "a", "b"], "question": ["q1", "q2", "q1"],
    ...                      "unit": ["x", "y", "x"]})
    >>> judged = pd.DataFrame({"question": ["q1"], "unit": ["x"], "relevant": [1]})
    >>> missed(rows, judged)[["unlabeled", "sampled", "relevant", "missed"]]
    ... # doctest: +NORMALIZE_WHITESPACE
             unlabeled  sampled  relevant  missed
    a                2        1         1     2.0
    b                1        1         1     1.0
    any arm          2        1         1     2.0
    """
    verdict = {
        (q, u): int(r)
        for q, u, r in zip(judged["question"], judged["unit"], judged["relevant"], strict=True)
    }
    known = set(zip(unlabeled["question"], unlabeled["unit"], strict=True))
    foreign = sorted(set(verdict) - known)
    if foreign:
        raise ValueError(
            f"judged pairs {foreign[:3]} are not among the unlabeled pairs: "
            "judge a sample drawn from this list (audit.sample)"
        )
    groups = {
        arm: set(zip(g["question"], g["unit"], strict=True))
        for arm, g in unlabeled.groupby("arm", sort=False)
    }
    rows = {}
    for arm, pairs_ in {**groups, "any arm": known}.items():
        seen = [verdict[p] for p in pairs_ if p in verdict]
        row: dict[str, float] = {
            "unlabeled": len(pairs_),
            "sampled": len(seen),
            "relevant": sum(seen),
        }
        if seen:
            ci = wilson_interval(sum(seen), len(seen), stats.confidence)
            row |= {"share": ci.estimate, "share_low": ci.low, "share_high": ci.high}
            row |= {
                f"missed{s}": v * len(pairs_)
                for s, v in (("", ci.estimate), ("_low", ci.low), ("_high", ci.high))
            }
        rows[arm] = row
    table = pd.DataFrame.from_dict(rows, orient="index").astype(
        {"unlabeled": int, "sampled": int, "relevant": int}
    )
    table.attrs.update(confidence=stats.confidence)
    return table


def add_relevant(
    qrels: Mapping[Level, Qrels], judged: pd.DataFrame, hierarchy: Hierarchy
) -> dict[Level, Qrels]:
    """The qrels with the pairs judged relevant added, at their level and every coarser one.

    A unit that answers makes the section and the document holding it
    answer too (as evidence spans judge every level), so a judged-relevant
    passage also marks its section and document relevant, and a section its
    document, at each level ``qrels`` judges. Added units get grade 1; the
    given judgements are kept as they are.

    Parameters
    ----------
    qrels : mapping of level to Qrels
    judged : pandas.DataFrame
        ``question``, ``unit``, ``level`` and ``relevant`` (1 adds the pair).
    hierarchy : Hierarchy
        The units the pairs name.

    Returns
    -------
    dict of level to Qrels
        New mappings; ``qrels`` is not changed.

    Examples
    --------
    >>> from hierret.structure.units import Corpus, Document
    >>> from hierret.structure.hierarchy import build_hierarchy
    >>> h = build_hierarchy(Corpus("c", [Document("d", "D", "Cats purr. Dogs bark.")]))
    >>> judged = pd.DataFrame({"question": ["q"], "unit": ["d#p0"], "level": ["passages"],
    ...                        "relevant": [1]})
    >>> add_relevant({"passages": {}, "documents": {"q": {"e": 1}}}, judged, h)
    {'passages': {'q': {'d#p0': 1}}, 'documents': {'q': {'e': 1, 'd': 1}}}
    """
    out: dict[Level, Qrels] = {t: {q: dict(g) for q, g in qr.items()} for t, qr in qrels.items()}
    for q, uid, level in judged.loc[
        judged["relevant"].astype(int) == 1, ["question", "unit", "level"]
    ].itertuples(index=False):
        for target in _LEVELS[_LEVELS.index(level) :]:
            if target in out:
                holder = uid if target == level else hierarchy.parents(level, target)[uid]
                out[target].setdefault(q, {}).setdefault(holder, 1)
    return out


def sensitivity(
    decided: Mapping[str, Result | tuple[Result, str]], qrels: Mapping[Level, Qrels]
) -> pd.DataFrame:
    """Each arm's score and each declared comparison, before and after a change of judgements.

    Every result is :meth:`~hierret.study.experiment.Result.rejudge`-d with
    ``qrels`` (the same runs, other judgements), and its table at each of its
    targets for the given metric is set beside the original's.

    Parameters
    ----------
    decided : mapping of str to Result or (Result, metric)
        The study's decided comparisons, by a name for the table: a result of
        :func:`hierret.study.experiment.run` and the metric its family was decided on
        (default: the result's first metric).
    qrels : mapping of level to Qrels
        The new judgements (e.g. :func:`add_relevant`); each result is
        rejudged at the targets it has.

    Returns
    -------
    pandas.DataFrame
        Index (``comparison``, ``target``, ``arm``); columns ``before`` and
        ``after`` (the mean, or the hit rate of a ``hit@k`` metric), and for
        the arms of the declared family ``diff_before``/``diff_after`` (against
        the baseline) and ``p_before``/``p_after`` (Holm-adjusted within the
        table, as :meth:`~hierret.study.experiment.Result.table` gives it). Baselines
        have no difference.

    Examples
    --------
    >>> from hierret.encoders import HashEncoder
    >>> from hierret.study.experiment import run
    >>> from hierret.structure.hierarchy import build_hierarchy
    >>> from hierret.search.profile import Profile
    >>> from hierret.search.searcher import Searcher
    >>> from hierret.structure.units import Corpus, Document
    >>> text = "Cats\\n====\\n\\nCats purr.\\n\\nDogs\\n====\\n\\nDogs bark.\\n"
    >>> h = build_hierarchy(Corpus("pets", [Document("d", "Pets", text)]))
    >>> q = [Query("q1", "why do dogs bark", (("d", 28, 38),)),
    ...      Query("q2", "do cats purr", (("d", 12, 22),))]
    >>> r = run({"passages": Profile(), "sections": Profile(level="sections")}, q,
    ...         searcher=Searcher(h, HashEncoder(dimension=16)), targets=["sections"],
    ...         metrics=["hit@1"], baseline="passages", family=[("sections", "passages")])
    >>> every = {x.id: {s.id: 1 for s in h.units("sections")} for x in q}
    >>> table = sensitivity({"units": (r, "hit@1")}, {"sections": every})
    >>> table[["before", "after", "diff_after"]].round(2).to_dict("index")
    ... # doctest: +NORMALIZE_WHITESPACE
    {('units', 'sections', 'passages'): {'before': 0.5, 'after': 1.0, 'diff_after': nan},
     ('units', 'sections', 'sections'): {'before': 1.0, 'after': 1.0, 'diff_after': 0.0}}
    """
    rows = []
    for name, given in decided.items():
        result, metric = given if isinstance(given, tuple) else (given, given.metrics[0])
        targets = cast("list[Level]", result.targets)
        after = result.rejudge({t: qrels[t] for t in targets if t in qrels})
        value = SUMMARY[kind(metric)]
        for target in result.targets:
            old, new = result.table(target, metric), after.table(target, metric)
            for arm in old.index:
                row = {
                    "comparison": name,
                    "target": target,
                    "arm": arm,
                    "before": old.loc[arm, value],
                    "after": new.loc[arm, value],
                }
                for col, label in (("diff", "diff"), ("p_holm", "p")):
                    if col in old.columns:
                        row |= {
                            f"{label}_before": old.loc[arm, col],
                            f"{label}_after": new.loc[arm, col],
                        }
                rows.append(row)
    table = pd.DataFrame(rows).set_index(["comparison", "target", "arm"])
    return table


def sensitivity_table(moved: pd.DataFrame, added: int | None = None) -> Styler:
    """:func:`sensitivity`'s table for the page, captioned.

    ``added`` (how many judged-relevant pairs were added) goes in the caption.
    """
    what = f"the {added} judged-relevant pairs" if added is not None else "further judgements"
    return styled(
        moved,
        f"Sensitivity: each arm's score and each declared comparison with "
        f"{what} added to the labels, before and after (diff against the "
        "baseline; p Holm-adjusted within each comparison's family)",
        formats=dict.fromkeys(("p_before", "p_after"), "{:.4f}"),
    )


def judgements_path(study: str) -> Path:
    """The judged sample ``data/audit/{study}-sample.csv`` shipped with the repository.

    Raises
    ------
    FileNotFoundError
        Outside a checkout of the repository (pass the file's path to
        :func:`read_judgements` instead).
    """
    name = f"{study}-sample.csv"
    for parent in Path(__file__).resolve().parents:
        if (parent / "data" / "audit" / name).is_file():
            return parent / "data" / "audit" / name
    raise FileNotFoundError(
        f"no data/audit/{name} above {Path(__file__).parent}: run from a "
        "checkout of the hierret repository, or pass the file's path"
    )


@dataclass(frozen=True)
class Reading:
    """A judged sample of an audit list, and what follows from it (:func:`read_sample`).

    Attributes
    ----------
    unlabeled : pandas.DataFrame
        :func:`unlabeled_top`'s rows the sample was drawn from.
    judged : pandas.DataFrame
        The judged pairs (:func:`read_judgements`).
    header : dict
        The judgements file's header: rule, seed, ``n``, fingerprint.
    qrels : dict of level to Qrels
        The study's qrels with the judged-relevant pairs added (:func:`add_relevant`).
    scope : {"drawn", "met", "other units"}
        How the sample bears on this run (:func:`read_sample`): it was drawn
        from this very list; this run cuts the same units but lists other
        pairs (a sample of the corpus), so the judged pairs it meets apply; or
        this run cuts other units, and nothing read applies.
    """

    unlabeled: pd.DataFrame
    judged: pd.DataFrame
    header: dict[str, str]
    qrels: dict[Level, Qrels]
    scope: str = "drawn"

    @property
    def applies(self) -> bool:
        """Whether any judged pair bears on this run's units."""
        return self.scope != "other units" and len(self.judged) > 0

    @property
    def note(self) -> str:
        """One sentence for the page: what was read, and what of it applies to this run."""
        head = {k: _grouped(self.header.get(k, "?")) for k in ("n", "seed", "pairs", "max_chars")}
        drawn = (
            f"The hand-read sample ({head['n']} pairs, seed {head['seed']}) was drawn from "
            f"the reference run's {head['pairs']} unlabeled pairs"
        )
        if self.scope == "drawn":
            return drawn + ": this run lists exactly those pairs, so every judgement applies."
        if self.scope == "met":
            return (
                f"{drawn}; this run cuts the same units but lists other pairs, so the "
                f"{len(self.judged)} judged pairs it meets apply, and the estimates below "
                "rest on them alone."
            )
        return (
            f"{drawn} of {self.header.get('corpus', 'another corpus')} cut at "
            f"{head['max_chars']} characters ("
            f"{self.header.get('overlap_chars', '?')} of overlap); this run cuts other "
            "units, whose text nobody has read, so the audit steps aside: its tables "
            "belong to the reference run."
        )

    @property
    def added(self) -> int:
        """How many judged pairs are relevant (added to :attr:`qrels`)."""
        return int(self.judged["relevant"].sum())

    def missed(self, stats: StatsSettings = DEFAULT_STATS) -> pd.DataFrame:
        """:func:`missed` of this sample."""
        return missed(self.unlabeled, self.judged, stats)

    def table(self, stats: StatsSettings = DEFAULT_STATS) -> Styler:
        """:meth:`missed` for the page, captioned with the sample, its seed and its rule."""
        return styled(
            self.missed(stats),
            f"Relevant units the labels miss in each arm's "
            f"top ranks: {len(self.judged)} of the {len(pairs(self.unlabeled))} "
            f"unlabeled pairs read (seed {self.header.get('seed')}); share judged "
            f"relevant with its Wilson {stats.confidence:.0%} interval, and that share of "
            "the arm's unlabeled pairs. Rule: " + self.header.get("rule", ""),
        )

    def values(self, prefix: str = "audit") -> dict[str, int | float]:
        """Record values: every cell of :meth:`missed` and ``{prefix}_pairs`` (the list's size)."""
        return {key(prefix, "pairs"): len(pairs(self.unlabeled))} | table_values(
            self.missed(), prefix
        )


def _grouped(value: str) -> str:
    """A count from a header as a page prints it (``1092`` → ``1,092``)."""
    return f"{int(value):,}" if value.isdigit() else value


def same_units(header: Mapping[str, str], hierarchy: Hierarchy) -> bool:
    """Whether ``hierarchy`` cuts the units a judgements file was read on.

    The file's header names the corpus and the chunking it was drawn with
    (``corpus``, ``max_chars``, ``overlap_chars``, ``heading_styles``); a
    hierarchy of the same corpus cut the same way gives every unit id the same
    text, so a judgement of a (question, unit) pair still holds. A header that
    does not say is taken as another cut.

    Examples
    --------
    >>> from hierret.structure.hierarchy import build_hierarchy
    >>> from hierret.structure.units import Corpus, Document
    >>> h = build_hierarchy(Corpus("pets", [Document("d", "Pets", "Cats purr.")]),
    ...                     max_chars=900, overlap_chars=180)
    >>> head = {"corpus": "pets", "max_chars": "900", "overlap_chars": "180",
    ...         "heading_styles": h.params["heading_styles"]}
    >>> same_units(head, h), same_units({**head, "max_chars": "600"}, h)
    (True, False)
    """
    cut = {"corpus": hierarchy.corpus.name} | {
        k: str(hierarchy.params.get(k)) for k in ("max_chars", "overlap_chars", "heading_styles")
    }
    return all(header.get(k) == v for k, v in cut.items())


def read_sample(
    study: str,
    unlabeled: pd.DataFrame,
    hierarchy: Hierarchy,
    qrels: Mapping[Level, Qrels],
) -> Reading:
    """Read a study's judged sample against the audit list the code produces now.

    Parameters
    ----------
    study : str
        The sample is ``data/audit/{study}-sample.csv`` (:func:`judgements_path`).
    unlabeled : pandas.DataFrame
        :func:`unlabeled_top`'s rows, made as when the sample was drawn.
    hierarchy : Hierarchy
    qrels : mapping of level to Qrels
        The judgements the audit list was made with.

    Returns
    -------
    Reading
        Its :attr:`~Reading.scope` says how the sample bears on this run: the
        list it was drawn from, on the same units (the reference run: every
        judgement applies, and the sample must be the one the header's seed
        draws); the same units listed otherwise, e.g. a sample of the corpus
        (:func:`same_units`: the judged pairs found in the list apply); or
        other units (another corpus or cut: nothing applies, whatever the ids,
        and the page says so instead of failing).

    Raises
    ------
    ValueError
        The list is the one the sample was drawn from, but the file's pairs
        are not the sample its header's seed draws (the file was edited).
    """
    path = judgements_path(study)
    listed = pair_list(unlabeled)
    _, header = _read(path, JUDGED)
    if not same_units(header, hierarchy):  # ids may coincide; the text under them does not
        judged, scope = pd.DataFrame(columns=list(JUDGED)), "other units"
    elif header.get("fingerprint") == fingerprint(listed):
        judged, header = read_judgements(path, listed, strict=True)
        scope = "drawn"
    else:
        judged, header = read_judgements(path, listed, strict=False)
        scope = "met"
    return Reading(unlabeled, judged, header, add_relevant(qrels, judged, hierarchy), scope)


class Audit:
    """One study's audit: the unlabelled units its arms rank high, a reader's sample of
    them and, where that reading applies, how its judgements move the comparisons.

    Parameters
    ----------
    study : str
        The study's name: its judged sample is ``data/audit/{study}-sample.csv``
        (:func:`judgements_path`).
    runs : mapping of str to Run
        Each arm's rankings (:func:`unlabeled_top`).
    hierarchy : Hierarchy
    qrels : mapping of level to Qrels
        The labels as loaded.
    queries : sequence of Query, optional
        For the questions' text.
    depth : int, default 3
        How deep in each arm's ranking an unlabelled unit is listed.

    Attributes
    ----------
    unlabeled : pandas.DataFrame
        :func:`unlabeled_top`'s rows.
    reading : Reading
        The judged sample read against them (:func:`read_sample`).
    moved : pandas.DataFrame or None
        :meth:`sensitivity`'s table, once it ran.

    Examples
    --------
    >>> from hierret.structure.hierarchy import build_hierarchy
    >>> from hierret.structure.units import Corpus, Document
    >>> h = build_hierarchy(Corpus("pets", [Document("d", "Pets", "Cats purr. Dogs bark.")]))
    >>> a = Audit("dr001", {"arm": {"q": [("d#p0", 1.0)]}}, h, {"passages": {"q": {}}})
    >>> len(a.unlabeled), a.applies, a.values()
    (1, False, {})
    """

    def __init__(
        self,
        study: str,
        runs: Mapping[str, Run],
        hierarchy: Hierarchy,
        qrels: Mapping[Level, Qrels],
        queries: Sequence[Query] = (),
        depth: int = 3,
    ) -> None:
        self.unlabeled = unlabeled_top(runs, hierarchy, qrels, queries, depth=depth)
        self.reading = read_sample(study, self.unlabeled, hierarchy, qrels)
        self.moved: pd.DataFrame | None = None

    @property
    def note(self) -> str:
        """What was read, and what of it bears on this run's units (:attr:`Reading.note`)."""
        return self.reading.note

    @property
    def applies(self) -> bool:
        """Whether the reading was made on these units (:attr:`Reading.applies`)."""
        return self.reading.applies

    def sensitivity(self, decided: Mapping[str, Result | tuple[Result, str]]) -> pd.DataFrame:
        """The decided comparisons before and after the reader's judgements
        (:func:`sensitivity`), kept as :attr:`moved`."""
        self.moved = sensitivity(decided, self.reading.qrels)
        return self.moved

    def table(self) -> list[Styler]:
        """The reading's table and, once :meth:`sensitivity` ran, its table
        (:func:`sensitivity_table`)."""
        tables = [self.reading.table()]
        if self.moved is not None:
            tables.append(sensitivity_table(self.moved, self.reading.added))
        return tables

    def values(self) -> dict[str, int | float]:
        """What the record keeps once :meth:`sensitivity` ran: the reading's counts and
        each comparison's move (``audit_*``); nothing before."""
        if self.moved is None:
            return {}
        return self.reading.values() | table_values(self.moved, "audit")
