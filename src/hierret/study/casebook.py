"""The questions that decide a comparison: a casebook of discordant questions, and its pages.

A paired comparison of hit@1 turns on its **discordant** questions: those
one arm answers first (an answer-bearing unit at rank 1 at the target) and
the other does not. McNemar's test reads only their counts; a reader wants
to see them. :func:`build` takes a record's results (what
:func:`hierret.study.experiment.run` returned) and, for every declared comparison
``(a, b)`` at every target, counts the questions each way (both, only
``a``, only ``b``, neither) and keeps the discordant ones as :class:`Case`\\ s:
the question, its gold evidence, and each arm's top hits with their section
path, score and a snippet in which the evidence is marked.

Which questions are shown: when more than ``max_cases`` questions go one
way, a seeded sample of ``max_cases`` of them (``numpy.random.default_rng``
seeded with ``seed``, drawn from the question ids in sorted order), shown
in question-id order; the counts are always of all of them. Hits are the
arm's ranking at the target, in :func:`hierret.search.runs.rank` order.

:meth:`Casebook.markdown` renders the page (Markdown headings, an HTML
block per comparison, each case folded in a ``<details>``),
:meth:`Casebook.explorer` every question's rankings under every arm for the
site's question explorer, :meth:`Casebook.values` the counts as record
values; :func:`write` does all three for a notebook in one call, and
:func:`explorer_script` gathers the explorers' files into the script the
explorer page loads.

Examples
--------
>>> from hierret.encoders import HashEncoder
>>> from hierret.study.experiment import run
>>> from hierret.structure.hierarchy import build_hierarchy
>>> from hierret.search.profile import Profile
>>> from hierret.search.searcher import Searcher
>>> from hierret.structure.units import Corpus, Document, Query
>>> text = "Cats\\n====\\n\\nCats purr.\\n\\nDogs\\n====\\n\\nDogs bark.\\n"
>>> h = build_hierarchy(Corpus("pets", [Document("d", "Pets", text)]))
>>> q = [Query("q1", "why do dogs bark", (("d", 28, 38),)),
...      Query("q2", "do cats purr", (("d", 12, 22),))]
>>> result = run({"passages": Profile(), "sections": Profile(level="sections")}, q,
...              searcher=Searcher(h, HashEncoder(dimension=16)), targets=["sections"],
...              metrics=["hit@1"], family=[("sections", "passages")])
>>> book = build("dr0", {"pets": result})
>>> c = book.comparisons[0]
>>> c.a, c.b, c.both, c.only_a, c.only_b, c.neither
('sections', 'passages', 1, 1, 0, 0)
>>> [case.query_id for case in c.cases_a]
['q1']
>>> book.values()
{'case_pets_sections_sections_vs_passages_both': 1, \
'case_pets_sections_sections_vs_passages_only_a': 1, \
'case_pets_sections_sections_vs_passages_only_b': 0, \
'case_pets_sections_sections_vs_passages_neither': 0}
"""

from __future__ import annotations

import html
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import numpy as np

from hierret._files import atomic_write
from hierret.publish.record import key
from hierret.search.runs import Ranking
from hierret.structure.hierarchy import Hierarchy
from hierret.structure.units import Query, Span, Unit
from hierret.study.experiment import Result

__all__ = [
    "Case",
    "Casebook",
    "Comparison",
    "Hit",
    "build",
    "explorer_link",
    "explorer_script",
    "write",
]

#: The global the explorer's data script assigns (a ``<script>``, so ``file://`` works).
EXPLORER_GLOBAL = "HIERRET_EXPLORER"
#: The explorer page as a casebook page (``notebooks/figures/casebook-*``) reaches it on
#: the built site; its state (record, result, target, arms, question) goes in the hash.
EXPLORER_PAGE = "../../explorer.html"

Pairs = Sequence[tuple[str, str]]


@dataclass(frozen=True)
class Hit:
    """One ranked unit: its id, section path, score, whether it is relevant, a snippet.

    ``snippet`` is HTML: the unit's text around the evidence, escaped, with
    the evidence marked by ``<mark>``.
    """

    unit_id: str
    path: str
    score: float
    relevant: bool
    snippet: str


@dataclass(frozen=True)
class Case:
    """One discordant question: its text, gold evidence and each arm's top hits.

    Attributes
    ----------
    query_id, question : str
    evidence : list of (str, str)
        Each gold evidence span as (section path, HTML snippet); for
        judgements without spans (e.g. BEIR), the judged units' paths.
    hits : dict[str, list[Hit]]
        Each of the two arms' top hits at the target.
    first : dict[str, int or None]
        Each arm's rank (1-based) of its first answer-bearing unit, ``None``
        when none is ranked.
    """

    query_id: str
    question: str
    evidence: list[tuple[str, str]]
    hits: dict[str, list[Hit]]
    first: dict[str, int | None]


@dataclass(frozen=True)
class Comparison:
    """One declared pair at one target: the counts each way and the cases shown.

    ``only_a`` counts the questions ``a`` answers first and ``b`` does not
    (McNemar's ``b``), ``only_b`` the reverse; ``cases_a`` and ``cases_b``
    are the questions shown of each (see the module's note on sampling).
    """

    title: str
    target: str
    a: str
    b: str
    both: int
    only_a: int
    only_b: int
    neither: int
    cases_a: list[Case]
    cases_b: list[Case]


@dataclass(frozen=True)
class Casebook:
    """A record's comparisons, and every question's rankings for the explorer.

    Attributes
    ----------
    record : str
        The record's name (``"dr001"``): the page's title and file names.
    comparisons : list of Comparison
    sets : list of dict
        One explorer set per result and target (see :meth:`explorer`).
    """

    record: str
    comparisons: list[Comparison]
    sets: list[dict[str, object]]

    @classmethod
    def of(cls, record: str, results: Results, **options: Any) -> Casebook:
        """The casebook of a record's results (:func:`build`, which takes ``options``)."""
        return build(record, results, **options)

    def save(self, folder: str | os.PathLike[str] | None) -> dict[str, int]:
        """Write the page and the explorer's data into ``folder``, return :meth:`values`.

        Writes ``casebook-{record}.md`` and ``explorer-{record}.json`` (a notebook's
        ``figures_dir``, where the site build collects them); with no folder,
        writes nothing.
        """
        if folder:
            out = Path(folder)
            out.mkdir(parents=True, exist_ok=True)
            atomic_write(out / f"casebook-{self.record}.md", self.markdown().encode())
            data = json.dumps(self.explorer(), ensure_ascii=False, separators=(",", ":"))
            atomic_write(out / f"explorer-{self.record}.json", data.encode())
        return self.values()

    def values(self) -> dict[str, int]:
        """The counts of every comparison as record values.

        Keys are :func:`hierret.publish.record.key` of ``case``, the result's title,
        the target, ``a``, ``vs``, ``b`` and ``both``, ``only_a``,
        ``only_b`` or ``neither``.
        """
        out: dict[str, int] = {}
        for c in self.comparisons:
            for col in ("both", "only_a", "only_b", "neither"):
                out[key("case", c.title, c.target, c.a, "vs", c.b, col)] = getattr(c, col)
        return out

    def markdown(self) -> str:
        """The casebook page: a Markdown title, then one section per comparison."""
        name = self.record.upper().replace("DR", "DR-", 1)
        parts = [
            f"# Casebook {name}: the questions that decide it\n",
            _INTRO.format(record=self.record),
        ]
        for title in dict.fromkeys(c.title for c in self.comparisons):
            pairs = list(
                dict.fromkeys(f"{c.a} against {c.b}" for c in self.comparisons if c.title == title)
            )
            what = "; ".join(pairs) if len(pairs) <= 2 else f"{len(pairs)} comparisons"
            parts.append(f"## {title}: {what}\n")  # the result's key, in words
            parts += [
                _comparison_html(c, self.record) for c in self.comparisons if c.title == title
            ]
        if not self.comparisons:
            parts.append("No comparison was declared in this run.\n")
        return "\n".join(parts)

    def explorer(self) -> dict[str, object]:
        """Every question's rankings under every arm, as JSON-ready data.

        ``{"record": ..., "sets": [...]}``; each set (one result at one
        target) has ``title``, ``target``, ``arms``, ``metrics``, ``units``
        (unit id to section path), ``questions`` (id, text, evidence paths)
        and ``rows``: ``rows[query_id][arm]`` with ``first`` (rank of the
        first answer-bearing unit, or ``None``), ``metrics`` (the arm's
        score on each metric) and ``hits`` (``[unit_id, score, relevant]``).
        """
        return {"record": self.record, "sets": self.sets}


_INTRO = """For every comparison the record declared, at every target: how many
questions each arm answers first (an answer-bearing unit at rank 1) where the
other does not, the discordant counts McNemar's test reads, and those
questions themselves, each with its gold evidence and both arms' top hits
(<mark>marked</mark>: the evidence in a snippet; ✓: an answer-bearing unit).
When more than a few questions go one way, a seeded sample of them is shown,
in question order; the counts are of all. Generated by `hierret.study.casebook`
from the run this site was built from ({record}); the
[question explorer](../../explorer.md) shows every question.
"""


class _Units:
    """Units of each hierarchy and level by id, and their section paths."""

    def __init__(self) -> None:
        self._by: dict[tuple[int, str], dict[str, Unit]] = {}

    def get(self, h: Hierarchy, level: str) -> dict[str, Unit]:
        if (id(h), level) not in self._by:
            self._by[id(h), level] = {u.id: u for u in h.units(level)}  # type: ignore[arg-type]
        return self._by[id(h), level]

    def path(self, h: Hierarchy, unit_id: str, level: str) -> str:
        unit = self.get(h, level).get(unit_id)
        if unit is None:
            return unit_id
        title = h.corpus[unit.doc_id].title or unit.doc_id
        if level == "documents":
            return title
        section = unit if level == "sections" else self.get(h, "sections").get(unit.parent or "")
        heads = section.title.split(" > ") if section and section.title else []
        return " › ".join(heads if heads and heads[0] == title else [title, *heads])


def _first(ranking: Ranking, gold: Mapping[str, int]) -> int | None:
    return next((i for i, (u, _) in enumerate(ranking, 1) if gold.get(u, 0) > 0), None)


def _marked(text: str, start: int, marks: Iterable[tuple[int, int]], width: int) -> str:
    """``text`` (starting at offset ``start``) cut to ``width`` around the first mark."""
    spans = sorted((max(s, start), min(e, start + len(text))) for s, e in marks)
    spans = [(s, e) for s, e in spans if s < e]
    lo = max(start, spans[0][0] - width // 4) if spans else start
    hi = min(start + len(text), lo + width)
    out, at = [], lo
    for s, e in spans:
        s, e = max(s, at), min(e, hi)
        if s < e:
            out += [
                html.escape(text[at - start : s - start]),
                "<mark>",
                html.escape(text[s - start : e - start]),
                "</mark>",
            ]
            at = e
    out.append(html.escape(text[at - start : hi - start]))
    body = " ".join("".join(out).split())  # one line: no blank line ends the HTML block
    return ("… " if lo > start else "") + body + (" …" if hi < start + len(text) else "")


def _snippet(h: Hierarchy, unit: Unit | None, evidence: Sequence[Span], width: int) -> str:
    if unit is None:
        return ""
    marks = [(s, e) for d, s, e in evidence if d == unit.doc_id]
    return _marked(h.text(unit), unit.start, marks, width)


@dataclass(frozen=True)
class _Source:
    """One result at one target, with what its cases are cut from."""

    title: str
    target: str
    result: Result
    units: _Units

    def ranking(self, arm: str, qid: str) -> Ranking:
        return self.result.rankings[self.target][arm].get(qid, [])

    def gold(self, arm: str, qid: str) -> dict[str, int]:
        return self.result.judgements[self.target][arm].get(qid, {})

    def hits(self, arm: str, query: Query, depth: int, width: int) -> list[Hit]:
        h, gold = self.result.hierarchies[arm], self.gold(arm, query.id)
        by_id = self.units.get(h, self.target)
        return [
            Hit(
                u,
                self.units.path(h, u, self.target),
                float(s),
                gold.get(u, 0) > 0,
                _snippet(h, by_id.get(u), query.evidence, width),
            )
            for u, s in self.ranking(arm, query.id)[:depth]
        ]

    def evidence(self, arm: str, query: Query, width: int) -> list[tuple[str, str]]:
        h = self.result.hierarchies[arm]
        if not query.evidence:  # judged units only (BEIR qrels)
            judged = sorted(u for u, g in self.gold(arm, query.id).items() if g > 0)
            return [(self.units.path(h, u, self.target), "") for u in judged[:3]]
        out = []
        for doc_id, s, e in query.evidence:
            span = Unit(f"{doc_id}:{s}", doc_id, "passages", s, e)
            inner = [
                u
                for u in self.units.get(h, "sections").values()
                if u.doc_id == doc_id and u.start <= s < max(u.end, u.start + 1)
            ]
            path = self.units.path(h, inner[-1].id, "sections") if inner else doc_id
            out.append((path, _snippet(h, span, query.evidence, width)))
        return out

    def case(self, qid: str, arms: tuple[str, str], depth: int, width: int) -> Case:
        query = self.result.queries[qid]
        return Case(
            qid,
            query.text,
            self.evidence(arms[0], query, width),
            {a: self.hits(a, query, depth, width) for a in arms},
            {a: _first(self.ranking(a, qid), self.gold(a, qid)) for a in arms},
        )


def _sample(ids: list[str], n: int, seed: int) -> list[str]:
    if len(ids) <= n:
        return ids
    picked = np.random.default_rng(seed).choice(len(ids), size=n, replace=False)
    return [ids[i] for i in sorted(picked)]


def _comparison(
    src: _Source, a: str, b: str, max_cases: int, depth: int, width: int, seed: int
) -> Comparison:
    qids = sorted(src.result.rankings[src.target][a])
    won = {
        arm: {q for q in qids if _first(src.ranking(arm, q), src.gold(arm, q)) == 1}
        for arm in (a, b)
    }
    only_a, only_b = sorted(won[a] - won[b]), sorted(won[b] - won[a])
    both = len(won[a] & won[b])
    cases = [
        [src.case(q, (a, b), depth, width) for q in _sample(ids, max_cases, seed)]
        for ids in (only_a, only_b)
    ]
    return Comparison(
        src.title,
        src.target,
        a,
        b,
        both,
        len(only_a),
        len(only_b),
        len(qids) - both - len(only_a) - len(only_b),
        cases[0],
        cases[1],
    )


def _explorer_set(src: _Source, depth: int) -> dict[str, object]:
    r, t = src.result, src.target
    # arms scored outside the searcher (Result.add) have scores but no rankings to show
    arms = [a for a in r.arms if a in r.rankings.get(t, {})]
    qids = sorted(r.rankings[t][arms[0]]) if arms else []
    units: dict[str, str] = {}
    rows: dict[str, dict[str, object]] = {}
    for q in qids:
        rows[q] = {}
        for arm in arms:
            top = src.ranking(arm, q)[:depth]
            gold, h = src.gold(arm, q), r.hierarchies[arm]
            units |= {u: src.units.path(h, u, t) for u, _ in top if u not in units}
            rows[q][arm] = {
                "first": _first(src.ranking(arm, q), gold),
                "metrics": {m: r.scores[t][m][arm][q] for m in r.metrics},
                "hits": [[u, round(float(s), 4), gold.get(u, 0) > 0] for u, s in top],
            }
    questions = [
        {
            "id": q,
            "text": r.queries[q].text,
            "evidence": [p for p, _ in src.evidence(arms[0], r.queries[q], 0)],
        }
        for q in qids
    ]
    return {
        "title": src.title,
        "target": t,
        "arms": arms,
        "metrics": r.metrics,
        "units": units,
        "questions": questions,
        "rows": rows,
    }


#: What :func:`build` takes: results by title, with their pairs, in tuples or nested.
Results = Mapping[object, object]


def _title(label: object) -> str:
    return " · ".join(map(str, label)) if isinstance(label, tuple) else str(label)


def _flat(item: object, title: tuple[str, ...] = ()) -> list[tuple[str, Result, Pairs | None]]:
    """``(title, result, pairs or None)`` for every result in ``item``, in the order given."""
    name = " · ".join(title)
    if isinstance(item, Result):
        return [(name, item, None)]
    if (
        isinstance(item, tuple)
        and len(item) == 2
        and isinstance(item[0], Result)
        and not isinstance(item[1], Result)
    ):
        return [(name, item[0], list(item[1]))]
    if isinstance(item, Mapping):
        return [e for label, x in item.items() for e in _flat(x, (*title, _title(label)))]
    if isinstance(item, tuple | list):
        return [e for x in item for e in _flat(x, title)]
    if item is None:
        return []
    raise TypeError(
        f"{name!r} is a {type(item).__name__}: give a Result, a (Result, "
        "pairs) pair, or a mapping or tuple of them"
    )


def build(
    record: str,
    results: Results,
    *,
    pairs: Pairs | None = None,
    max_cases: int = 3,
    depth: int = 3,
    width: int = 320,
    explore: int = 5,
    seed: int = 0,
) -> Casebook:
    """The casebook of a record: every declared comparison's discordant questions.

    Parameters
    ----------
    record : str
        The record's name (``"dr001"``).
    results : mapping
        The record's results by a short title (a section of the page, a part
        of the record keys): each a :class:`~hierret.study.experiment.Result`, a
        ``(Result, pairs)`` pair, a tuple of results (sharing the title), a
        nested mapping (titles joined by ``" · "``; a tuple key is joined the
        same way) or ``None`` (left out: a part that did not run).
    pairs : sequence of (str, str), optional
        The comparisons of every result that has both arms, instead of each
        result's declared ``family`` (several families asked of the same
        arms, as :meth:`~hierret.study.experiment.Result.tests` takes them). A pair
        given with a result wins over both.
    max_cases : int, default 3
        Questions shown each way per comparison (a seeded sample when more).
    depth : int, default 3
        Top hits shown per arm in a case.
    width : int, default 320
        Characters of each snippet.
    explore : int, default 5
        Top hits per arm and question kept for the explorer.
    seed : int, default 0
        Seed of the sample of questions shown.

    Returns
    -------
    Casebook

    Raises
    ------
    ValueError
        A result without the rankings :func:`hierret.study.experiment.run` keeps
        (one built by hand), pairs naming arms their result does not have, or
        a pair in ``pairs`` that no result has.
    TypeError
        A value that is not a result, a pair, a mapping or a tuple of them.
    """
    units = _Units()
    comparisons: list[Comparison] = []
    sets: list[dict[str, object]] = []
    flat = _flat(results)
    used: set[tuple[str, str]] = set()
    for title, result, own in flat:
        if not result.rankings:
            raise ValueError(
                f"result {title!r} keeps no rankings: build a casebook from "
                "what hierret.study.experiment.run returns"
            )
        chosen = (
            own
            if own is not None
            else result.family
            if pairs is None
            else [p for p in pairs if set(p) <= set(result.arms)]
        )
        used |= {tuple(p) for p in chosen}  # type: ignore[misc]
        unknown = sorted({a for pair in chosen for a in pair} - set(result.arms))
        if unknown:
            raise ValueError(
                f"result {title!r}: pairs name unknown arms {unknown}; arms: {result.arms}"
            )
        for target in result.targets:
            src = _Source(title, target, result, units)
            comparisons += [
                _comparison(src, a, b, max_cases, depth, width, seed)
                for a, b in dict.fromkeys(tuple(p) for p in chosen)
            ]
            sets.append(_explorer_set(src, explore))
    unused = [p for p in pairs or () if tuple(p) not in used]
    if unused:
        raise ValueError(f"pairs {unused} name arms that no result has together")
    return Casebook(record, comparisons, sets)


def write(
    record: str, folder: str | os.PathLike[str] | None, results: Results, **options: object
) -> dict[str, int]:
    """Build a record's casebook, write its page and explorer data, return its counts.

    Writes ``casebook-{record}.md`` and ``explorer-{record}.json`` into
    ``folder`` (a notebook's ``figures_dir``, where the site build collects
    them); with no folder, writes nothing. ``results`` and ``options`` go to
    :func:`build`.

    Returns
    -------
    dict
        :meth:`Casebook.values`, for the record.
    """
    return Casebook.of(record, results, **options).save(folder)


def explorer_script(folder: str | os.PathLike[str]) -> str:
    """The explorer's data script: every ``explorer-*.json`` in ``folder``, one global.

    A script assigning ``window.HIERRET_EXPLORER`` (loaded by a ``<script>``
    element, so the page works from ``file://`` without a server), records
    in file-name order.

    Examples
    --------
    >>> explorer_script("no-such-folder")
    'window.HIERRET_EXPLORER = {"records":[]};\\n'
    """
    records = [
        json.loads(p.read_text(encoding="utf-8"))
        for p in sorted(Path(folder).glob("explorer-*.json"))
    ]
    data = json.dumps({"records": records}, ensure_ascii=False, separators=(",", ":"))
    safe = data.replace("</", "<\\/")  # no "</script>" inside a script
    return f"window.{EXPLORER_GLOBAL} = {safe};\n"


def _hit_html(hit: Hit) -> str:
    tick = "✓ " if hit.relevant else ""
    return (
        f'<li><span class="hr-path">{tick}{html.escape(hit.path)}</span> '
        f'<span class="hr-score">{hit.score:.3f}</span>'
        f'<div class="hr-snippet">{hit.snippet}</div></li>'
    )


def explorer_link(record: str, title: str, target: str, arms: Sequence[str], qid: str) -> str:
    """The question explorer's address showing question ``qid`` of ``record``'s result
    ``title`` at ``target``, in the set that holds ``arms`` (from a casebook page).

    Examples
    --------
    >>> explorer_link("dr004", "qasper · 900", "sections", ["chunk", "late"], "q 7")
    '../../explorer.html#r=dr004&t=qasper%20%C2%B7%20900&g=sections&a=chunk%2Clate&q=q%207'
    """
    state = {"r": record, "t": title, "g": target, "a": ",".join(arms), "q": qid}
    return EXPLORER_PAGE + "#" + urlencode(state, quote_via=quote)


def _case_html(case: Case, arms: tuple[str, str], link: str = "") -> str:
    ranks = ", ".join(f"{html.escape(a)}: {case.first[a] or '—'}" for a in arms)
    ev = "".join(
        f'<li><span class="hr-path">{html.escape(p)}</span><div class="hr-snippet">{s}</div></li>'
        for p, s in case.evidence
    )
    qid = f"<code>{html.escape(case.query_id)}</code>"
    if link:  # the question under every arm, in the explorer
        qid = f'<a href="{html.escape(link)}" title="this question in the explorer">{qid}</a>'
    cols = "".join(
        f'<div class="hr-arm"><strong>{html.escape(a)}</strong>'
        f"<ol>{''.join(map(_hit_html, case.hits[a]))}</ol></div>"
        for a in arms
    )
    return (
        f'<details class="hr-case"><summary>{qid} '
        f"{html.escape(case.question)} <small>(first answer at rank {ranks})</small>"
        f'</summary><p class="hr-label">Gold evidence</p><ul>{ev}</ul>'
        f'<div class="hr-arms">{cols}</div></details>'
    )


def _comparison_html(c: Comparison, record: str = "") -> str:
    a, b = html.escape(c.a), html.escape(c.b)
    counts = (
        f"<table class='hr-counts'><tr><th></th><th>{b} first</th><th>{b} not</th>"
        f"</tr><tr><th>{a} first</th><td>{c.both}</td><td>{c.only_a}</td></tr>"
        f"<tr><th>{a} not</th><td>{c.only_b}</td><td>{c.neither}</td></tr></table>"
    )
    parts = [
        f'<div class="hr-comparison"><p class="hr-title"><strong>{a}</strong> vs '
        f"<strong>{b}</strong>, {html.escape(c.target)} target: {c.only_a} only "
        f"{a}, {c.only_b} only {b} (hit@1)</p>{counts}"
    ]
    for arm, cases, n in ((c.a, c.cases_a, c.only_a), (c.b, c.cases_b, c.only_b)):
        shown = f"{len(cases)} of {n} shown" if n > len(cases) else f"all {n}" if n else "none"
        parts.append(f"<p class='hr-label'>Only {html.escape(arm)} answers first ({shown})</p>")
        parts += [
            _case_html(
                case,
                (c.a, c.b),
                explorer_link(record, c.title, c.target, (c.a, c.b), case.query_id)
                if record
                else "",
            )
            for case in cases
        ]
    return "".join(parts) + "</div>\n"
