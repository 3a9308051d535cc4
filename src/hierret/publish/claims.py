"""Claims tables: every comparative sentence of a decision record tied to its test.

A decision record says things like "passages beat whole units" or "the hybrid
is not established above dense". Each such sentence cites a row of the
record's *Claims and tests* table, ``[C1]``, and the row names the test in the
result record that decides it::

    | id | claim | test | difference (interval) | p | adjusted p · family | verdict |
    |---|---|---|---|---|---|---|
    | C1 | Passages answer first | `dr001.hit1_sec` > 0 | +0.140 (...) | 0.0021 | ... | holds |

The *test* cell is a result-record key ``record.base`` followed by the
claimed direction of the difference (arm minus the arm it is compared with):

* ``> 0`` or ``< 0`` — a difference: it *holds* when the p-value adjusted
  within its family is below :data:`ALPHA` and the difference has that sign,
  is *contradicted* when it is significant the other way, and is otherwise
  *not established*, with the smallest difference the test had 80 % power to
  detect, rounded up ("not established (could detect ≥ 0.06)": not "does not
  hold"); a row that holds says whether it survives a rank test and its family
  pooled across corpora (:mod:`hierret.publish.robustness`): "holds (robust:
  …)" or "holds (fragile: …)";
* ``≥ 0`` or ``≤ 0`` — no loss (or no gain), which a test of no difference
  cannot show: the row names a margin declared in the notebook before the run,
  ``(margin `dr001.margin`)``, and is read by two one-sided tests at
  :data:`ALPHA` (the 90 % interval against ``−δ`` or ``+δ``), outside the
  Holm family: *non-inferior* / *inferior* / *inconclusive* (``≥``),
  *non-superior* / *superior* / *inconclusive* (``≤``).

The last four cells are written by :func:`update` from the records and their
evidence (:mod:`hierret.publish.evidence`), never typed: the difference with
its unadjusted interval, the unadjusted p (``≤`` when it is the smallest value
the test's resamples can give), the adjusted p with the family it was adjusted
in (named, with its size) and the verdict; under each table a line gives the
verdicts that would change were all of the record's tests one Holm family
(:func:`sensitivity`), from the p each row prints (a p at its floor is a bound;
one whose pooled p is within Monte-Carlo error of 0.05 is drawn again).
:func:`check` fails when a row differs from what :func:`update` would write,
when a key does not resolve, when a record has no claims table, when a
sentence with a comparative word (:data:`COMPARATIVE`) cites no row, and when
a quantity is written in words ("twice", "an order of magnitude",
:data:`QUANTITY`) with no published-number marker in its clause.
The numbers in a row are ordinary published-number markers
(:func:`hierret.publish.report.check_markdown`).

Examples
--------
>>> verdict(">", 0.05, 0.01), verdict(">", 0.05, 0.2), verdict("≤", 0.05, 0.2)
('holds', 'not established', 'consistent')
>>> text = '''## DR-009 · A toy
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
>>> fixed = update(text, {"dr009": {"values": values}})
>>> print(fixed.splitlines()[-1].replace("<!--@dr009.", "<").replace("-->", ">"))
| C1 | Dense beats BM25 | `dr009.d` > 0 | +0.100<d_diff:+.3f> (+0.020<d_diff_low:+.3f> to \
+0.200<d_diff_high:+.3f>) | 0.004<d_p:.2g> | 0.012<d_p_holm:.2g> · Holm over (3 tests) | holds |
>>> check(fixed, {"dr009": {"values": values}})
[]
>>> values["d_p_holm"] = 0.3
>>> check(fixed, {"dr009": {"values": values}})[0][:60]
"DR-009 C1: the row says '+0.100 (+0.020 to +0.200) | 0.004 |"
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

import hierret.publish.robustness as robustness
import hierret.publish.wording as wording
from hierret.publish.report import format_value

__all__ = [
    "ALPHA",
    "COLUMNS",
    "COMPARATIVE",
    "NO_SPREAD",
    "QUANTITY",
    "Claim",
    "cells",
    "check",
    "check_prose",
    "claims",
    "judge",
    "round_up",
    "sensitivity",
    "update",
    "verdict",
]

#: The significance level of every verdict (the records' intervals are 95 %).
ALPHA = 0.05
#: What a "not established" says instead of a detectable effect when every question's
#: difference is the same (the test's spread is zero: it sizes no effect).
NO_SPREAD = "no spread across questions"
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
_TEST = re.compile(
    r"^`(?P<key>\w+\.\w+)`\s*(?P<dir>[<>≤≥≈])\s*0"
    r"(?:\s*\(margin\s*`(?P<margin>\w+\.\w+)`\))?(?P<inter>\s*\(interaction\))?$"
)
_CITE = re.compile(r"\[(C\d+(?:,\s*C\d+)*)\]")
_MARKER = re.compile(r"<!--.*?-->", re.DOTALL)
_SENTENCE = re.compile(r"(?<=[.!?;:])\s+(?=[*(\"A-Z0-9`])")
_DIRECTIONS = {">": 1, "<": -1, "≥": -1, "≤": 1, "≈": 0}


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
        The row's cells (difference, p, adjusted p with its family, and
        verdict are the last four, all written by :func:`update`).
    line : int
        The row's line in the text (1-based).
    margin : str
        ``record.key`` of the margin a ``≥``/``≤`` claim is tested against
        (empty for ``>``/``<``).
    """

    record: str
    id: str
    text: str
    key: str
    direction: str
    cells: tuple[str, ...]
    line: int
    margin: str = ""
    interaction: bool = False

    @property
    def written(self) -> str:
        """The verdict as the text gives it."""
        return self.cells[-1]


def verdict(
    direction: str,
    diff: float,
    p: float,
    alpha: float = ALPHA,
    *,
    detectable: float | None = None,
    margin: float | None = None,
    margin_interval: tuple[float, float] | None = None,
) -> str:
    """What a test's numbers say about a claimed direction.

    Parameters
    ----------
    direction : {">", "<", "≥", "≤", "≈"}
        The claim about the difference (arm minus the arm it is compared with).
    diff, p : float
        The paired difference and its (Holm-adjusted) p-value.
    alpha : float, default :data:`ALPHA`
    detectable : float, optional
        The smallest difference the test had 80 % power to find
        (:func:`hierret.evaluation.stats.evidence.detectable`): "not established" says it.
    margin : float, optional
        A ``≥``/``≤`` claim's declared margin ``δ``: the claim is read by two
        one-sided tests at ``alpha`` (the ``1 − 2 alpha`` interval,
        ``margin_interval``, against ``−δ`` or ``+δ``), not by ``p``.
    margin_interval : (float, float), optional
        That interval.

    Returns
    -------
    str
        ``>``/``<``: ``"holds"``, ``"contradicted"`` (significant the other
        way) or ``"not established"`` (with what the test could have
        detected, rounded up: :func:`round_up`, or :data:`NO_SPREAD` when every
        question's difference is the same, so that no effect size can be given:
        a run of a few questions that all tie); ``≥``: ``"non-inferior"``,
        ``"inferior"`` or ``"inconclusive"`` at the margin; ``≈`` (equivalence,
        both one-sided tests): ``"equivalent"``, ``"not equivalent"`` or
        ``"inconclusive"``; ``≤``: ``"non-superior"``,
        ``"superior"`` or ``"inconclusive"``. Without a margin, ``≥``/``≤``
        read ``"consistent"`` or ``"contradicted"`` (all a test of no
        difference can say).

    Examples
    --------
    >>> verdict("<", -0.1, 0.001), verdict(">", 0.02, 0.3, detectable=0.061)
    ('holds', 'not established (could detect ≥ 0.07)')
    >>> verdict("≥", -0.003, 0.5, margin=0.02, margin_interval=(-0.011, 0.005))
    'non-inferior (margin 0.02)'
    >>> verdict("≤", 0.03, 0.9, margin=0.02, margin_interval=(-0.03, 0.09))
    'inconclusive (margin 0.02)'
    >>> verdict("≈", 0.004, 0.6, margin=0.02, margin_interval=(-0.012, 0.015))
    'equivalent (margin 0.02)'
    >>> verdict(">", 0.0, 1.0, detectable=0.0)
    'not established (no spread across questions)'
    >>> verdict("≥", -0.1, 0.001), verdict("≥", -0.1, 0.3)
    ('contradicted', 'consistent')
    """
    if direction not in _DIRECTIONS:
        raise ValueError(f"a claim's direction is one of {list(_DIRECTIONS)}, got {direction!r}")
    sign = _DIRECTIONS[direction]
    significant = p < alpha and diff * sign > 0
    opposite = p < alpha and diff * sign < 0
    if direction in "<>":
        if significant:
            return "holds"
        if opposite:
            return "contradicted"
        if detectable == 0:  # every question differs alike: no spread to size an effect by
            return f"not established ({NO_SPREAD})"
        if detectable is not None and math.isfinite(detectable):
            return f"not established (could detect ≥ {round_up(detectable)})"
        return "not established"
    if margin is None or margin_interval is None:
        return "contradicted" if significant else "consistent"
    low, high = margin_interval
    at = f" (margin {margin:g})"
    if direction == "≈":  # equivalence: both one-sided tests
        return ("equivalent" if -margin < low and high < margin
                else "not equivalent" if low > margin or high < -margin
                else "inconclusive") + at  # fmt: skip
    if direction == "≥":  # no loss of δ or more
        return ("non-inferior" if low > -margin else "inferior" if high < -margin
                else "inconclusive") + at  # fmt: skip
    return ("non-superior" if high < margin else "superior" if low > margin
            else "inconclusive") + at  # fmt: skip


def round_up(value: float, decimals: int = 2) -> str:
    """``value`` to ``decimals`` places, rounded up: a detectable effect printed shorter
    must not claim more power than the test had (0.0712 prints 0.08, not 0.07).

    Examples
    --------
    >>> round_up(0.0712), round_up(0.07), round_up(0.131, 1)
    ('0.08', '0.07', '0.2')
    """
    return format_value(value, f"up.{decimals}f")


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
            test = _TEST.match(cells[2]) if len(cells) == len(COLUMNS) else None
            if test is None:
                raise ValueError(
                    f"line {line}: a claims row needs {len(COLUMNS)} cells "
                    f"({' | '.join(COLUMNS)}) with a test cell like '`dr001.key` > 0' "
                    f"or '`dr001.key` ≥ 0 (margin `dr001.margin`)' (directions "
                    f"{list(_DIRECTIONS)}), got {row.strip()[:100]!r}"
                )
            found.append(
                Claim(
                    record,
                    cells[0],
                    cells[1],
                    test["key"],
                    test["dir"],
                    tuple(cells),
                    line,
                    test["margin"] or "",
                    bool(test["inter"]),
                )
            )
    return found


def _value(results: Mapping[str, Mapping[str, Any]], key: str) -> Any:
    name, _, field = key.partition(".")
    return results.get(name, {}).get("values", {}).get(field)


def _p_key(results: Mapping[str, Mapping[str, Any]], key: str) -> str:
    return f"{key}_p_holm" if _value(results, f"{key}_p_holm") is not None else f"{key}_p"


def _num(results: Mapping[str, Mapping[str, Any]], key: str, spec: str) -> str:
    """A published number with its marker, as the published-number check reads it."""
    text = format_value(_value(results, key), spec)
    return f"{'−' + text[1:] if text.startswith('-') else text}<!--@{key}:{spec}-->"


def _evidence_row(results: Mapping[str, Mapping[str, Any]], key: str) -> Any:
    name, _, field = key.partition(".")
    tests = results.get(name, {}).get("evidence")
    if tests is None:
        return None
    rows = tests[tests["key"] == field]
    return None if rows.empty else rows.iloc[0]


def _at_floor(results: Mapping[str, Mapping[str, Any]], key: str) -> bool:
    """Whether the test's p-value is the smallest its resamples can give."""
    row = _evidence_row(results, key)
    if row is None or row["kind"] != "mean" or int(row["n_resamples"]) >= 2 ** int(row["n"]):
        return False
    return bool(float(row["p"]) <= 2.0 / (int(row["n_resamples"]) + 1))


#: The columns of a claims table; :func:`update` writes the last four from the records.
COLUMNS = ("id", "claim", "test", "difference (95 % interval, unadjusted)", "p",
           "adjusted p · family", "verdict")  # fmt: skip
#: The evidence values every row's test must have in its record.
NEEDED = ("diff", "diff_low", "diff_high", "p", "family_size", "mde", "margin_low",
          "margin_high")  # fmt: skip


def judge(c: Claim, results: Mapping[str, Mapping[str, Any]]) -> str:
    """The verdict ``results`` give claim ``c`` (:func:`verdict` on its numbers)."""
    val = partial(_value, results)
    margin = val(c.margin) if c.margin else None
    return verdict(
        c.direction, float(val(f"{c.key}_diff")), float(val(_p_key(results, c.key))),
        detectable=float(val(f"{c.key}_mde")), margin=margin,
        margin_interval=(float(val(f"{c.key}_margin_low")),
                         float(val(f"{c.key}_margin_high"))),
    )  # fmt: skip


def cells(c: Claim, results: Mapping[str, Mapping[str, Any]]) -> tuple[str, str, str, str]:
    """The four cells :func:`update` writes for claim ``c``: difference with its
    unadjusted interval, unadjusted p (``≤`` at the resampling floor), adjusted p
    with the family it was adjusted in, and the verdict."""
    k, floor = c.key, "≤ " if _at_floor(results, c.key) else ""
    diff = (f"{_num(results, f'{k}_diff', '+.3f')} ({_num(results, f'{k}_diff_low', '+.3f')}"
            f" to {_num(results, f'{k}_diff_high', '+.3f')})")  # fmt: skip
    p = floor + _num(results, f"{k}_p", ".2g")
    size = int(_value(results, f"{k}_family_size"))
    row = _evidence_row(results, k)
    if size == 1:
        family = "— (one test)"
    else:
        name = f"`{row['family_name']}` " if row is not None else ""
        family = (f"{floor}{_num(results, f'{k}_p_holm', '.2g')} · Holm over {name}"
                  f"({size} tests)")  # fmt: skip
    if c.margin:
        family += "; read against the margin"
    robust = robustness.of(results, k, c.direction)  # a "holds" says whether it is fragile
    return diff, p, family, robustness.mark(judge(c, results), robust)


def _row_problems(c: Claim, results: Mapping[str, Mapping[str, Any]]) -> list[str]:
    where = f"{c.record} {c.id}"
    need = [f"{c.key}_{n}" for n in NEEDED] + ([c.margin] if c.margin else [])
    missing = [k for k in need if _value(results, k) is None]
    if missing:
        return [
            f"{where}: the result records hold no {', '.join(missing)} (the test "
            f"`{c.key}` of this claim); rerun the notebook, or fix the key"
        ]
    if c.direction in "≥≤≈" and not c.margin:
        return [
            f"{where}: a claim of no loss or no gain needs a margin declared before the "
            f"run: write the test as '`{c.key}` {c.direction} 0 (margin `record.margin`)'"
        ]
    want = cells(c, results)
    if tuple(c.cells[-4:]) != want:
        got = " | ".join(_MARKER.sub("", x) for x in c.cells[-4:])
        return [
            f"{where}: the row says {got!r}, the records say "
            f"{' | '.join(_MARKER.sub('', x) for x in want)!r}; run "
            "`python docs/check_decisions.py --update` (or `nox -s reproduce -- "
            "--update-decisions`) and review the diff"
        ]
    return []


def sensitivity(record: str, results: Mapping[str, Mapping[str, Any]], rows: list[Claim]) -> str:
    """The line under a claims table: the verdicts if all of the record's tests were one
    Holm family (its ``≥``/``≤`` rows are read against their margins, so unchanged)."""
    name = record.replace("-", "").lower()
    tests = results.get(name, {}).get("evidence")
    if tests is None or tests.empty:
        return ""
    high, low, near = _pooled(name, tests, results)
    moved = []
    for c in rows:
        field = c.key.partition(".")[2]
        if c.margin or c.key.partition(".")[0] != name or field not in high:
            continue
        diff = float(_value(results, f"{c.key}_diff"))
        before = verdict(c.direction, diff, float(_value(results, _p_key(results, c.key))))
        after = verdict(c.direction, diff, high[field])
        if after == before:
            continue
        resamples, unsettled = near[field]
        at = f" (at {resamples:,} resamples)" if resamples else ""
        if verdict(c.direction, diff, low[field]) != after:
            moved.append(f"{c.id} could read {after} (a p at its resampling floor is a bound)")
        elif unsettled:
            moved.append(f"{c.id} could read {after} (pooled {high[field]:.2g}, within "
                         f"Monte-Carlo error of {ALPHA} at {resamples:,} resamples)")  # fmt: skip
        else:
            moved.append(f"{c.id} would read {after}{at}")
    change = "; ".join(moved) if moved else "no verdict would change"
    return f"*If all {len(tests)} tests of this record were one Holm family:* {change}."


def _pooled(
    name: str, tests: Any, results: Mapping[str, Mapping[str, Any]]
) -> tuple[dict[str, float], dict[str, float], dict[str, tuple[int, bool]]]:
    """Every test of record ``name`` Holm-adjusted as one family, by key (its test id
    when unpublished), from the p each row prints (the record's ``K_p``): with a p at
    its resampling floor as given (an upper bound) and at 0 (a lower bound). A
    published test whose verdict would move has its p drawn again while its pooled p
    lies within Monte-Carlo error of :data:`ALPHA`
    (:func:`hierret.publish.robustness.settle`): with it, the resamples it was drawn
    with and whether it is still within that error."""
    by_id = {str(r["test"]): r for _, r in tests.iterrows()}
    keys = {str(t): str(k) or str(t) for k, t in zip(tests["key"], tests["test"], strict=True)}
    p = {}
    for t, r in by_id.items():
        printed = _value(results, f"{name}.{keys[t]}_p")
        p[t] = float(printed) if printed is not None else float(r["p"])
    floor = {t for t, r in by_id.items() if robustness.at_floor(r)}
    high, low = robustness.bounds(p, floor)
    questions = results.get(name, {}).get("questions")
    drawn: dict[str, int] = {}
    unsettled: dict[str, bool] = {}
    for t, r in by_id.items():
        given = _value(results, _p_key(results, f"{name}.{keys[t]}"))
        if questions is None or given is None or (float(given) < ALPHA) == (high[t] < ALPHA):
            continue  # unpublished, or its verdict does not move: its error does not matter
        h, lo, drawn[t], unsettled[t] = robustness.settle(dict(p), floor, t, r, questions)
        high[t], low[t] = h[t], lo[t]
    return ({keys[t]: v for t, v in high.items()}, {keys[t]: v for t, v in low.items()},
            {keys[t]: (drawn.get(t, 0), unsettled.get(t, False)) for t in by_id})  # fmt: skip


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
    every = {f"{c.record} {c.id}": c.written for c in rows}
    interactions = {f"{c.record} {c.id}" for c in rows if c.interaction}
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
        verdicts = {**every, **{c.id: c.written for c in mine}}
        inter = interactions | {c.id for c in mine if c.interaction}
        for sentence in _prose(section):
            problems += [
                f"{record}: {p}: {sentence[:160]!r}"
                for p in wording.problems(sentence, verdicts, inter)
            ]
        for sentence in _prose(section, markers=True):
            problems += [
                f"{record}: a quantity in words ({word!r}) with no marked number in its "
                f"clause: {_MARKER.sub('', sentence)[:160]!r}; quote the numbers it is "
                "read from, each with its marker"
                for word in _unheld_quantities(sentence)
            ]
    for c in rows:
        problems += _row_problems(c, results)
    lines = text.splitlines()
    for record in dict.fromkeys(c.record for c in rows):
        want = sensitivity(record, results, rows)
        at = _sensitivity_at(lines, max(c.line for c in rows if c.record == record) - 1)
        got = lines[at] if at is not None else ""
        if want and got != want:
            problems.append(
                f"{record}: the line under the claims table should read {want!r}, it reads {got!r}"
            )
    return problems


def check_prose(text: str, rows: list[Claim], *, record: str | None = None) -> list[str]:
    """The wording problems of prose outside the records (README, a notebook's summary).

    Every sentence is read by :func:`hierret.publish.wording.problems` against
    the rows of every record, cited as ``[DR-001 C4]``; with ``record``, that
    record's rows may be cited bare (``[C4]``), as in its own notebook.

    Examples
    --------
    >>> rows = [Claim("DR-001", "C4", "The hybrid beats dense", "dr001.h", ">",
    ...               ("C4", "", "", "", "", "", "not established (could detect ≥ 0.07)"), 1)]
    >>> check_prose("The hybrid beats dense [DR-001 C4].", rows)[0][:60]
    "'beats' is directional, but DR-001 C4 is not established (co"
    >>> check_prose("Its gain is not established (could detect ≥ 0.07) [C4].", rows,
    ...             record="DR-001")
    []
    """
    verdicts = {f"{c.record} {c.id}": c.written for c in rows}
    inter = {f"{c.record} {c.id}" for c in rows if c.interaction}
    if record:
        verdicts |= {c.id: c.written for c in rows if c.record == record}
        inter |= {c.id for c in rows if c.record == record and c.interaction}
    return [
        f"{p}: {sentence[:160]!r}"
        for sentence in _prose(text)
        for p in wording.problems(sentence, verdicts, inter)
    ]


def _sensitivity_at(lines: list[str], last_row: int) -> int | None:
    """The index of the sensitivity line after a table ending at line index ``last_row``."""
    for i in range(last_row + 1, min(last_row + 4, len(lines))):
        if lines[i].startswith(_SENSITIVITY):
            return i
    return None


#: How the line under each claims table begins (:func:`sensitivity`).
_SENSITIVITY = "*If all "


def update(text: str, results: Mapping[str, Mapping[str, Any]]) -> str:
    """``text`` with every claims row's computed cells, and the line under each table,
    rewritten from ``results``.

    Rows whose test does not resolve are left as they are (:func:`check`
    reports them).
    """
    lines = text.splitlines(keepends=True)
    rows = claims(text)
    for c in rows:
        if _row_problems(c, results) and any(
            _value(results, f"{c.key}_{n}") is None for n in NEEDED
        ):
            continue
        if c.direction in "≥≤≈" and not c.margin:
            continue
        row = lines[c.line - 1]
        first = _cells(row)[: len(COLUMNS) - 4]
        lines[c.line - 1] = (
            "| "
            + " | ".join([*first, *cells(c, results)])
            + " |"
            + ("\n" if row.endswith("\n") else "")
        )
    inserted = 0
    for record in dict.fromkeys(c.record for c in rows):
        mine = [c for c in rows if c.record == record]
        line = sensitivity(record, results, rows)
        if not line:
            continue
        last = max(c.line for c in mine) - 1 + inserted
        at = _sensitivity_at(lines, last)
        if at is not None:
            lines[at] = line + "\n"
        else:
            lines[last + 1 : last + 1] = ["\n", line + "\n"]
            inserted += 2
    return "".join(lines)
