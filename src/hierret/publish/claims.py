"""Claims tables: every comparative sentence of a decision record tied to its test.

A decision record says things like "passages beat whole units" or "the hybrid
is not established above dense". Each such sentence cites a row of the
record's *Claims and tests* table, ``[C1]``, and the row names the test in the
result record that decides it::

    | id | claim | test | difference (interval) | adjusted p | verdict |
    |---|---|---|---|---|---|
    | C1 | Passages answer first more often | `dr001.hit1_sec` > 0 | +0.140 (...) | 0.0021 | holds |

(each number followed by its marker, ``+0.140<!--@dr001.hit1_sec_diff:+.3f-->``).
The *test* cell is a result-record key ``record.base`` whose values
``base_diff``, ``base_diff_low``, ``base_diff_high`` and ``base_p_holm`` (or
``base_p`` for a test outside any family) must exist, followed by the claimed
direction of the difference:

* ``> 0`` or ``< 0`` — a difference: it *holds* when the p-value is below
  :data:`ALPHA` and the difference has that sign, else it is *not
  established*;
* ``≤ 0`` or ``≥ 0`` — no gain (or no loss): the data are *consistent* with
  it unless the difference is significant in the other direction, which
  *contradicts* it. A test cannot show that two arms are equal; this is the
  honest word for what it can show.

The verdict is computed from the record, never typed: :func:`check` fails when
a row's verdict differs from what its numbers say, when a key does not
resolve, when a record has no claims table, and when a sentence with a
comparative word (:data:`COMPARATIVE`) cites no row, and when a quantity is
written in words ("twice", "an order of magnitude", :data:`QUANTITY`) with no
published-number marker in its clause; :func:`update` rewrites
the verdicts. The numbers in the row are ordinary published-number markers
(:func:`hierret.publish.report.check_markdown`).

Examples
--------
>>> verdict(">", 0.05, 0.01), verdict(">", 0.05, 0.2), verdict("≤", 0.05, 0.2)
('holds', 'not established', 'consistent')
>>> row = ("| C1 | Dense beats BM25 | `dr009.d` > 0 | 0.1<!--@dr009.d_diff:.1f--> "
...        "(0.0<!--@dr009.d_diff_low:.1f--> to 0.2<!--@dr009.d_diff_high:.1f-->) | "
...        "0.01<!--@dr009.d_p_holm:.2f--> | holds |")
>>> text = f'''## DR-009 · A toy
... Dense beats BM25 [C1].
...
... ### Claims and tests
...
... | id | claim | test | difference (interval) | adjusted p | verdict |
... |---|---|---|---|---|---|
... {row}
... '''
>>> values = {"d_diff": 0.1, "d_diff_low": 0.02, "d_diff_high": 0.2, "d_p_holm": 0.01}
>>> check(text, {"dr009": {"values": values}})
[]
>>> values["d_p_holm"] = 0.3
>>> check(text, {"dr009": {"values": values}})
["DR-009 C1: the verdict says 'holds', the record's numbers say 'not established' \
(`dr009.d` > 0: difference 0.1, p 0.3)"]
>>> update(text, {"dr009": {"values": values}}).splitlines()[-1].endswith(
...     "| 0.01<!--@dr009.d_p_holm:.2f--> | not established |")
True
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["ALPHA", "COMPARATIVE", "QUANTITY", "Claim", "check", "claims", "update", "verdict"]

#: The significance level of every verdict (the records' intervals are 95 %).
ALPHA = 0.05
#: Words that make a sentence a comparative claim, which must then cite a row.
COMPARATIVE = re.compile(
    r"\b(beats?|beaten|beating|outperforms?|outscores?|leads?|leading|ahead|above|below|"
    r"hurts?|strongest|weakest|stronger|weaker|better|worse|superior|inferior|"
    r"at least as good|trails?|trailing|improves?|exceeds?|higher|lower|"
    r"more often|less often|collapses?|collapsed|shrinks?|shrank|helps?|helped|"
    r"about what|costs? more|costs? less|on a par|level with)\b",
    re.IGNORECASE,
)
#: Quantities written in words: a sentence with one must carry a marked number (the
#: quantity itself, or the numbers it is read from), so the published-number check
#: holds it to the records like any digit.
QUANTITY = re.compile(
    r"\b(twice|thrice|half as|halved?|doubled?|doubles|(?:two|three|four|five|ten|"
    r"a hundred|a thousand) times|(?:an|one|two|three) orders? of magnitude|"
    r"orders of magnitude|several times|many times)\b",
    re.IGNORECASE,
)
_HEADING = "### Claims and tests"
_RECORD = re.compile(r"^## (DR-\d+)\b.*$", re.MULTILINE)
_TEST = re.compile(r"^`(?P<key>\w+\.\w+)`\s*(?P<dir>[<>≤≥])\s*0$")
_CITE = re.compile(r"\[(C\d+(?:,\s*C\d+)*)\]")
_MARKER = re.compile(r"<!--.*?-->", re.DOTALL)
_SENTENCE = re.compile(r"(?<=[.!?;:])\s+(?=[*(\"A-Z0-9`])")
_DIRECTIONS = {">": 1, "<": -1, "≥": -1, "≤": 1}


@dataclass(frozen=True)
class Claim:
    """One row of a claims table.

    Attributes
    ----------
    record : str
        The record's id, e.g. ``"DR-001"``.
    id : str
        The row's id, ``"C1"``, unique within the record.
    text : str
        The claim, as the row words it.
    key : str
        ``record.base`` in the result records.
    direction : str
        ``">"``, ``"<"``, ``"≥"`` or ``"≤"`` (against 0).
    cells : tuple of str
        The row's cells (difference, p and verdict are the last three).
    line : int
        The row's line in the text (1-based).
    """

    record: str
    id: str
    text: str
    key: str
    direction: str
    cells: tuple[str, ...]
    line: int

    @property
    def written(self) -> str:
        """The verdict as the text gives it."""
        return self.cells[-1]


def verdict(direction: str, diff: float, p: float, alpha: float = ALPHA) -> str:
    """What a test's difference and p-value say about a claimed direction.

    Parameters
    ----------
    direction : {">", "<", "≥", "≤"}
        The claim about the difference (arm minus the arm it is compared with).
    diff, p : float
        The paired difference and its (Holm-adjusted) p-value.
    alpha : float, default :data:`ALPHA`

    Returns
    -------
    str
        ``"holds"`` or ``"not established"`` for ``>`` and ``<``;
        ``"consistent"`` or ``"contradicted"`` for ``≥`` and ``≤``.

    Examples
    --------
    >>> verdict("<", -0.1, 0.001), verdict("≥", -0.1, 0.001), verdict("≥", -0.1, 0.3)
    ('holds', 'contradicted', 'consistent')
    """
    if direction not in _DIRECTIONS:
        raise ValueError(f"a claim's direction is one of {list(_DIRECTIONS)}, got {direction!r}")
    sign = _DIRECTIONS[direction]
    significant = p < alpha and diff * sign > 0
    if direction in "<>":
        return "holds" if significant else "not established"
    return "contradicted" if significant else "consistent"


def _records(text: str) -> list[tuple[str, int, str]]:
    """(record id, first line, section text) of every ``## DR-`` section."""
    starts = list(_RECORD.finditer(text))
    out = []
    for i, m in enumerate(starts):
        end = starts[i + 1].start() if i + 1 < len(starts) else len(text)
        nxt = re.search(r"^## ", text[m.end() : end], re.MULTILINE)
        stop = m.end() + nxt.start() if nxt else end
        out.append((m[1], text.count("\n", 0, m.start()) + 1, text[m.start() : stop]))
    return out


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _table(section: str) -> tuple[int, list[str]] | None:
    """The claims table's first line offset in the section and its row lines."""
    at = section.find(_HEADING)
    if at < 0:
        return None
    lines = section[at:].splitlines()
    rows = [ln for ln in lines[1:] if ln.startswith("|")]
    body = [r for r in rows if re.match(r"\|\s*C\d+\s*\|", r)]
    return section.count("\n", 0, at), body


def claims(text: str) -> list[Claim]:
    """Every row of every record's claims table.

    Raises
    ------
    ValueError
        A row whose test cell is not ```record.base` <dir> 0``, or with
        fewer than six cells.
    """
    found = []
    for record, first, section in _records(text):
        table = _table(section)
        if table is None:
            continue
        offset, rows = table
        for row in rows:
            cells = _cells(row)
            line = first + offset + section[section.find(_HEADING) :].splitlines().index(row)
            test = _TEST.match(cells[2]) if len(cells) >= 6 else None
            if test is None:
                raise ValueError(
                    f"line {line}: a claims row needs six cells with a test "
                    f"cell like '`dr001.key` > 0' (directions "
                    f"{list(_DIRECTIONS)}), got {row.strip()[:100]!r}"
                )
            found.append(
                Claim(record, cells[0], cells[1], test["key"], test["dir"], tuple(cells), line)
            )
    return found


def _value(results: Mapping[str, Mapping[str, Any]], key: str) -> Any:
    name, _, field = key.partition(".")
    return results.get(name, {}).get("values", {}).get(field)


def _p_key(results: Mapping[str, Mapping[str, Any]], key: str) -> str:
    return f"{key}_p_holm" if _value(results, f"{key}_p_holm") is not None else f"{key}_p"


def _row_problems(c: Claim, results: Mapping[str, Mapping[str, Any]]) -> list[str]:
    where = f"{c.record} {c.id}"
    need = [f"{c.key}_diff", f"{c.key}_diff_low", f"{c.key}_diff_high", _p_key(results, c.key)]
    missing = [k for k in need if _value(results, k) is None]
    if missing:
        return [
            f"{where}: the result records hold no {', '.join(missing)} (the test "
            f"`{c.key}` of this claim); rerun the notebook, or fix the key"
        ]
    problems = []
    diff_cell, p_cell = c.cells[-3], c.cells[-2]
    for k in need[:3]:
        if f"<!--@{k}" not in diff_cell:
            problems.append(f"{where}: the difference cell does not quote {k}")
    if f"<!--@{need[3]}" not in p_cell:
        problems.append(f"{where}: the p cell does not quote {need[3]}")
    diff, p = float(_value(results, need[0])), float(_value(results, need[3]))
    want = verdict(c.direction, diff, p)
    if c.written != want:
        problems.append(
            f"{where}: the verdict says {c.written!r}, the record's numbers say "
            f"{want!r} (`{c.key}` {c.direction} 0: difference {diff:.3g}, "
            f"p {p:.3g})"
        )
    return problems


def _prose(section: str, *, markers: bool = False) -> list[str]:
    """The sentences of a record outside its claims table, headings and code (with
    their published-number markers when ``markers``)."""
    at = section.find(_HEADING)
    if at >= 0:
        rest = section[at + len(_HEADING) :]
        nxt = re.search(r"^### ", rest, re.MULTILINE)
        section = section[:at] + (rest[nxt.start() :] if nxt else "")
    section = re.sub(r"```.*?```", "", section, flags=re.DOTALL)
    paragraphs = re.split(
        r"\n\s*\n|\n(?=\s*[*|#-] )", section if markers else _MARKER.sub("", section)
    )
    out = []
    for para in paragraphs:
        para = " ".join(para.split())
        if para.startswith(("#", "|")) or not para:
            continue
        out += [s for s in _SENTENCE.split(para) if s]
    return out


def _unheld_quantities(sentence: str) -> list[str]:
    """The quantity words of ``sentence`` whose clause (between commas, semicolons,
    colons and brackets) holds no published-number marker.

    Examples
    --------
    >>> _unheld_quantities("It trails by 0.1<!--@dr9.d-->, for embedding twice as fast.")
    ['twice']
    >>> _unheld_quantities("It costs 0.69<!--@dr9.r:.2f--> times, not twice, the time (twice")
    ['twice', 'twice']
    >>> _unheld_quantities("late costs twice<!--@dr9.ratio:.0f--> the plain time")
    []
    """
    clauses = re.split(r"[,;:()]", _MARKER.sub("\0", sentence))
    return [w[0] for c in clauses if "\0" not in c for w in QUANTITY.finditer(c)]


def check(text: str, results: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Every way the records' claims and their tests disagree; empty when they agree.

    Each ``## DR-`` record must have a claims table; every row's test must
    resolve in ``results`` (a record name to ``{"values": {...}}``), quote its
    difference, interval and p-value, and carry the verdict its numbers give;
    ids are unique within a record; every sentence of the record's prose with
    a comparative word cites a row (``[C1]`` or ``[C1, C2]``), and every cited
    row exists.
    """
    problems = []
    rows = claims(text)
    for record, _, section in _records(text):
        mine = [c for c in rows if c.record == record]
        if not mine:
            problems.append(
                f"{record}: no '{_HEADING}' table with rows like "
                "'| C1 | claim | `drNNN.key` > 0 | ... |'"
            )
        ids = [c.id for c in mine]
        problems += [
            f"{record}: the claim id {i} is used twice"
            for i in sorted({i for i in ids if ids.count(i) > 1})
        ]
        for sentence in _prose(section):
            cited = [i.strip() for m in _CITE.finditer(sentence) for i in m[1].split(",")]
            problems += [
                f"{record}: {sentence[:70]!r} cites {i}, which its claims table does not have"
                for i in cited
                if i not in ids
            ]
            word = COMPARATIVE.search(sentence)
            if word and not cited:
                problems.append(
                    f"{record}: a comparative sentence ({word[0]!r}) cites no "
                    f"claim: {sentence[:160]!r}"
                )
        for sentence in _prose(section, markers=True):
            problems += [
                f"{record}: a quantity in words ({word!r}) with no marked number in its "
                f"clause: {_MARKER.sub('', sentence)[:160]!r}; quote the numbers it is "
                "read from, each with its marker"
                for word in _unheld_quantities(sentence)
            ]
    for c in rows:
        problems += _row_problems(c, results)
    return problems


def update(text: str, results: Mapping[str, Mapping[str, Any]]) -> str:
    """``text`` with every claims row's verdict rewritten from ``results``.

    Rows whose test does not resolve are left as they are (:func:`check`
    reports them).
    """
    lines = text.splitlines(keepends=True)
    for c in claims(text):
        p = _value(results, _p_key(results, c.key))
        diff = _value(results, f"{c.key}_diff")
        if p is None or diff is None:
            continue
        row = lines[c.line - 1]
        head, _, _tail = row.rstrip("\n").rstrip().rstrip("|").rpartition("|")
        lines[c.line - 1] = f"{head}| {verdict(c.direction, float(diff), float(p))} |" + (
            "\n" if row.endswith("\n") else ""
        )
    return "".join(lines)
