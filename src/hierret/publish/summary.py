"""The records at a glance: one row per decision record, its key claim's numbers.

DECISIONS.md opens with a table (the site shows it on its home page too) that
gives, per record, the decision in a few words and the one comparison that
decides it most directly, with that comparison's difference, interval and
verdict. The comparison is *declared*, never typed as numbers: each row names
a row of the record's claims table (``C1``), and :func:`update` writes the
rest from that claim (:func:`hierret.publish.claims.cells`)::

    <!-- results table -->
    | record | decision | key comparison | difference (interval) | verdict | pages |
    |---|---|---|---|---|---|
    | [DR-001](#dr-001--a-toy) | Passages | C1: Dense beats BM25 | +0.100 (...) | holds | ... |
    <!-- /results table -->

:func:`update` writes the record's link (to its heading's anchor, as GitHub
and the site's MyST both spell it: :func:`slug`), the claim's text after its
id, its difference with the unadjusted 95 % interval, and its verdict; the
decision and the links to the record's pages are the author's. :func:`check`
fails when a cell differs from what :func:`update` would write, when a record
has no row (or two), when a row names a record or a claim that does not
exist, and when the table is missing its end marker. The numbers are ordinary
published-number markers, so the published-number check
(:func:`hierret.publish.report.check_markdown`) holds them to the records too.

Examples
--------
>>> slug("DR-001 · Sentence-aware passages of 900 characters, dense by default")
'dr-001--sentence-aware-passages-of-900-characters-dense-by-default'
>>> text = '''# Records
... <!-- results table -->
... | record | decision | key comparison | difference | verdict | pages |
... |---|---|---|---|---|---|
... | DR-009 | Dense | C1 | | | [notebook](nb.ipynb) |
... <!-- /results table -->
...
... ## DR-009 · A toy
... Dense beats BM25 [C1].
...
... ### Claims and tests
...
... | id | claim | test | difference | p | adjusted p | verdict |
... |---|---|---|---|---|---|---|
... | C1 | Dense beats BM25 | `dr009.d` > 0 | | | | |
... '''
>>> values = {"d_diff": 0.1, "d_diff_low": 0.02, "d_diff_high": 0.2, "d_p": 0.004,
...           "d_p_holm": 0.012, "d_family_size": 3, "d_mde": 0.07, "d_margin_low": 0.03,
...           "d_margin_high": 0.18}
>>> results = {"dr009": {"values": values}}
>>> fixed = update(text, results)
>>> row = fixed.splitlines()[4]
>>> print(row.replace("<!--@dr009.", "<").replace("-->", ">"))
| [DR-009](#dr-009--a-toy) | Dense | C1: Dense beats BM25 | +0.100<d_diff:+.3f> \
(+0.020<d_diff_low:+.3f> to +0.200<d_diff_high:+.3f>) | holds | [notebook](nb.ipynb) |
>>> check(fixed, results)
[]
>>> values["d_diff"] = 0.09
>>> check(fixed, results)[0][:57]
"results table, DR-009: the row says '+0.100 (+0.020 to +0"
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import hierret.publish.claims as _claims

__all__ = [
    "COLUMNS",
    "END",
    "START",
    "Row",
    "cells",
    "check",
    "results_table",
    "rows",
    "slug",
    "update",
]

#: The line before the table and the line after it.
START, END = "<!-- results table -->", "<!-- /results table -->"
#: The table's columns; :func:`update` writes the record, the key comparison after its
#: claim id, the difference and the verdict.
COLUMNS = ("record", "decision", "key comparison", "difference (95 % interval, unadjusted)",
           "verdict", "pages")  # fmt: skip
_RECORD = re.compile(r"^(?:\[)?(DR-\d+)\b")
_CLAIM = re.compile(r"^(C\d+)\b")
_MARKER = re.compile(r"<!--.*?-->", re.DOTALL)


@dataclass(frozen=True)
class Row:
    """One row of the results table.

    Attributes
    ----------
    record : str
        The record it summarises, ``"DR-001"``.
    claim : str
        The declared key claim of that record, ``"C1"``.
    cells : tuple of str
        The row's cells, :data:`COLUMNS`.
    line : int
        The row's line in the text (1-based).
    """

    record: str
    claim: str
    cells: tuple[str, ...]
    line: int


def slug(title: str) -> str:
    """A heading's anchor as GitHub and MyST (``github_slugify``) spell it.

    Lower case, everything but word characters, hyphens and spaces dropped, each
    space a hyphen (``"DR-001 · A"`` gives ``"dr-001--a"``).
    """
    return re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")


def _block(text: str) -> tuple[int, list[str]] | None:
    """The index of the results table's first line and its lines; ``None`` without one."""
    lines = text.splitlines()
    if START not in lines:
        return None
    first = lines.index(START) + 1
    if END not in lines[first:]:
        raise ValueError(
            f"line {first}: the results table opens with {START!r} and must close with {END!r}"
        )
    return first, lines[first : lines.index(END, first)]


def rows(text: str) -> list[Row]:
    """The rows of the results table (none when the text has no table).

    Raises
    ------
    ValueError
        A row without :data:`COLUMNS`' cells, a record id first and a claim id
        opening its key comparison.
    """
    block = _block(text)
    if block is None:
        return []
    first, lines = block
    found = []
    for i, line in enumerate(lines):
        if not line.startswith("|") or set(line) <= set("|-: "):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[0] == COLUMNS[0]:
            continue
        record = _RECORD.match(cells[0])
        claim = _CLAIM.match(cells[2]) if len(cells) == len(COLUMNS) else None
        if record is None or claim is None:
            raise ValueError(
                f"line {first + i + 1}: a results row needs {len(COLUMNS)} cells "
                f"({' | '.join(COLUMNS)}), the record's id first ('DR-001') and its key "
                f"claim's id opening the third ('C1'), got {line.strip()[:100]!r}"
            )
        found.append(Row(record[1], claim[1], tuple(cells), first + i + 1))
    return found


def _headings(text: str) -> dict[str, str]:
    """Each record's id to its heading's title (``## DR-001 · ...``)."""
    return {m[1]: m[0][3:] for m in re.finditer(r"^## (DR-\d+)\b.*$", text, re.MULTILINE)}


def cells(
    row: Row, claim: _claims.Claim, title: str, results: Mapping[str, Mapping[str, Any]]
) -> tuple[str, ...]:
    """The cells :func:`update` writes for ``row``: its record's link to ``title``'s
    anchor, the claim's id and text, its difference with the interval, its verdict; the
    decision and the pages are the row's own."""
    diff, _, _, verdict = _claims.cells(claim, results)
    return (
        f"[{row.record}](#{slug(title)})",
        row.cells[1],
        f"{claim.id}: {claim.text}",
        diff,
        verdict,
        row.cells[5],
    )


def _problems(
    text: str, results: Mapping[str, Mapping[str, Any]]
) -> list[tuple[Row, tuple[str, ...] | None, str]]:
    """(row, the cells it should have or None, what is wrong) for every row."""
    found = rows(text)
    titles = _headings(text)
    by_id = {(c.record, c.id): c for c in _claims.claims(text)}
    out: list[tuple[Row, tuple[str, ...] | None, str]] = []
    for row in found:
        claim = by_id.get((row.record, row.claim))
        if row.record not in titles:
            out.append((row, None, f"names {row.record}, which has no '## {row.record}' record"))
        elif claim is None:
            out.append((row, None, f"names {row.claim}, which {row.record}'s claims table lacks"))
        elif any(_claims._value(results, f"{claim.key}_{n}") is None for n in _claims.NEEDED):
            out.append((row, None, f"its claim {row.claim} does not resolve in the records"))
        elif row.cells != (want := cells(row, claim, titles[row.record], results)):
            differ = [i for i, (a, b) in enumerate(zip(row.cells, want, strict=True)) if a != b]
            got = " | ".join(_MARKER.sub("", row.cells[i]) for i in differ)
            should = " | ".join(_MARKER.sub("", want[i]) for i in differ)
            out.append((row, want, f"the row says {got!r}, the records say {should!r}"))
    return out


def check(text: str, results: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Every way the results table disagrees with the records; empty when it agrees (or
    when the text has no results table)."""
    if _block(text) is None:
        return []
    found = rows(text)
    problems = [
        f"results table, {row.record}: {what}"
        + ("; run `python docs/check_decisions.py --update` and review the diff" if want else "")
        for row, want, what in _problems(text, results)
    ]
    listed = [r.record for r in found]
    for record in _headings(text):
        if listed.count(record) != 1:
            problems.append(
                f"results table: {record} has {listed.count(record)} rows, it needs one "
                f"naming its key claim ('| {record} | decision | C1 | | | pages |')"
            )
    return problems


def update(text: str, results: Mapping[str, Mapping[str, Any]]) -> str:
    """``text`` with every results row's record link, key comparison, difference and
    verdict rewritten from its declared claim (rows naming a missing record or claim
    are left as they are: :func:`check` reports them)."""
    lines = text.splitlines(keepends=True)
    for row, want, _ in _problems(text, results):
        if want is not None:
            end = "\n" if lines[row.line - 1].endswith("\n") else ""
            lines[row.line - 1] = "| " + " | ".join(want) + " |" + end
    return "".join(lines)


def results_table(text: str) -> str | None:
    """The results table of ``text`` (DECISIONS.md), the lines between :data:`START` and
    :data:`END`; ``None`` when the text has none.

    Examples
    --------
    >>> results_table(f"intro\\n{START}\\n| a |\\n{END}\\n")
    '| a |'
    >>> results_table("no table") is None
    True
    """
    lines = text.splitlines()
    if START not in lines:
        return None
    first = lines.index(START) + 1
    return "\n".join(lines[first : lines.index(END, first)])
