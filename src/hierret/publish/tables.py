"""Result tables as a page shows them: each with its own caption, every number at its precision.

:func:`styled` is how every notebook shows a table. It returns a pandas
:class:`~pandas.io.formats.style.Styler` whose caption travels with the table
(a printed label would be gathered, with every other line the cell prints,
into one block above all of the cell's tables), and whose cells read the same
in every notebook:

- **counts** as integers (``79``, not ``79.000000`` or ``90.0``): the count
  columns of :data:`hierret.publish.record.COUNT_COLUMNS`, integer columns, and
  columns of whole numbers that are not estimates;
- **estimates** to three decimals (one decimal in a column that reaches 100:
  milliseconds, texts per second);
- **p-values** to four decimals, and below the test's resolution as
  ``< 0.0001``: a resampling test with ``n_resamples`` resamples cannot give
  less than ``1 / (n_resamples + 1)``, and nothing smaller than the printed
  precision is shown as a number; a two-sided p at the smallest value the
  resamples can give (``2 / (n_resamples + 1)``, :func:`at_floor`) is a bound,
  and reads ``≤ 0.0002``, as do the row's other p-values (its Holm-adjusted p
  is then a bound too);
- **empty cells** (the baseline's difference with itself, a metric an arm
  does not have) blank, not ``NaN``;
- in a column of several kinds (a record's values), an ``int`` as a count and
  a ``float`` as an estimate, whatever its value;
- long text wraps inside its column instead of pushing the table past the
  page.

:func:`fields` turns a nested mapping (a recorded profile, an identity) into a
two-column table of dotted names and values, for :func:`styled` to show.

Examples
--------
>>> import pandas as pd
>>> t = pd.DataFrame({"n": [30.0, 30.0], "mean": [0.8123, 0.7], "p": [0.0000999, None]},
...                  index=pd.Index(["hybrid", "dense"], name="arm"))
>>> cells(t, n_resamples=10_000).to_dict("index")
{'hybrid': {'n': '30', 'mean': '0.812', 'p': '< 0.0001'}, 'dense': {'n': '30', 'mean': '0.700', \
'p': ''}}
>>> styled(t, "nDCG@10 at the passage target", n_resamples=10_000).caption
'nDCG@10 at the passage target'
"""

from __future__ import annotations

import html
import math
import numbers
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from pandas.io.formats.style import Styler

from hierret.evaluation.stats.evidence import TEST_COLUMN
from hierret.publish.record import COUNT_COLUMNS

__all__ = [
    "COLUMN_FORMATS",
    "ESTIMATE_WORDS",
    "at_floor",
    "cells",
    "column_kind",
    "fields",
    "p_limit",
    "styled",
]

#: Words that mark a column as an estimate (never shown as a count, even when whole).
ESTIMATE_WORDS = (
    "mean",
    "rate",
    "low",
    "high",
    "diff",
    "share",
    "median",
    "cos",
    "min",
    "max",
    "@",
    "ms",
    "/s",
    "p90",
    "precision",
    "recall",
    "ndcg",
    "weight",
    "score",
    "overlap",
    "delta",
    "1/n",
    "est",
    "norm",
    "kept",
)
#: Count columns by name, beyond :data:`hierret.publish.record.COUNT_COLUMNS`.
_COUNT_NAMES = frozenset(
    {
        "questions",
        "queries",
        "documents",
        "units",
        "passages",
        "sections",
        "pairs",
        "pooled",
        "max windows",
        "windows",
        "straddling a heading",
        "rank",
        "dims",
        "window",
        "candidates",
        "over_window",
        "max_chars",
        "overlap_chars",
        "top_k",
        "min_keep",
        "characters",
    }
)

Format = str | Callable[[Any], str]

#: Columns whose numbers the rules would misstate, by name, with the format they take:
#: run-to-run differences are far below 0.001, cosines differ from 1 in the sixth decimal
#: (:func:`hierret.study.variation.embedding_variation`).
COLUMN_FORMATS: dict[str, str] = {"max_abs_diff": "{:.2e}", "min_cosine": "{:.6f}"}


def _name(column: Hashable) -> str:
    """The name a column is judged by: the last level of a multi-level label, lower case."""
    label = column[-1] if isinstance(column, tuple) else column
    return str(label).strip().lower()


def _is_p(name: str) -> bool:
    return name in {"p", "p-value", "p value"} or name.startswith("p_") or name.endswith("_p")


def _is_number(value: object) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool | np.bool_)


def _empty(value: object) -> bool:
    if value is None:
        return True
    try:
        return bool(pd.isna(value))  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return False


def column_kind(series: pd.Series) -> str:
    """How a column is shown: ``"p"``, ``"count"``, ``"estimate"`` or ``"mixed"``.

    ``"mixed"`` columns (text, or numbers of several kinds in one column,
    such as a record's values) are formatted cell by cell: whole numbers
    as integers, other numbers as estimates, text as it is.

    Examples
    --------
    >>> column_kind(pd.Series([0.01, 0.2], name="p_holm"))
    'p'
    >>> column_kind(pd.Series([18.0, 156.0], name="passages"))
    'count'
    >>> column_kind(pd.Series([1.0, 0.0], name="mean"))
    'estimate'
    >>> column_kind(pd.Series([79, 0.175, "x"], dtype=object, name="value"))
    'mixed'
    """
    name = _name(series.name)
    if _is_p(name):
        return "p"
    values = [v for v in series if not _empty(v)]
    if not all(_is_number(v) for v in values):
        return "mixed"
    if name in COUNT_COLUMNS or name in _COUNT_NAMES or pd.api.types.is_integer_dtype(series):
        return "count"
    if series.dtype == object:  # numbers of several kinds (a record's values): cell by cell
        return "mixed"
    if any(word in name for word in ESTIMATE_WORDS):
        return "estimate"
    whole = values and all(float(v).is_integer() for v in values)
    return "count" if whole else "estimate"


def p_limit(n_resamples: int | None = None, decimals: int = 4) -> float:
    """The smallest p-value shown as a number; below it a table says ``< limit``.

    The larger of the printed precision (``10**-decimals``) and the resolution
    of a resampling test, ``1 / (n_resamples + 1)``, rounded to one
    significant digit.

    Examples
    --------
    >>> p_limit(), p_limit(10_000), p_limit(1000)
    (0.0001, 0.0001, 0.001)
    """
    floor = 10.0**-decimals
    if n_resamples:
        floor = max(floor, 1.0 / (n_resamples + 1))
    return float(f"{floor:.1g}")


def at_floor(p: Any, n_resamples: int | None) -> bool:
    """Whether ``p`` is the smallest two-sided p ``n_resamples`` sign flips can give.

    Examples
    --------
    >>> at_floor(2 / 10_001, 10_000), at_floor(0.0004, 10_000), at_floor(0.0002, None)
    (True, False, False)
    >>> at_floor(0.00005, 10_000)  # below what the resamples can give: an exact test's
    False
    """
    if not n_resamples or _empty(p) or not _is_number(p):
        return False  # a p below it is an exact test's (McNemar's), not a bound
    return math.isclose(float(p), 2.0 / (n_resamples + 1), rel_tol=1e-9)


def _estimate(value: float, decimals: int) -> str:
    if not math.isfinite(value):
        return _infinite(value)
    return f"{value:.1f}" if abs(value) >= 100 else f"{value:.{decimals}f}"


def _infinite(value: float) -> str:
    """``inf`` as a reader writes it (a threshold of -inf keeps everything): ∞, −∞, or blank."""
    return "" if math.isnan(value) else "∞" if value > 0 else "\u2212∞"


def _count(value: Any) -> str:
    """A whole number, with thousands separated from 10,000 on (``464,970``)."""
    n = round(float(value))
    return f"{n:,d}" if abs(n) >= 10_000 else str(n)


def _decimals(series: pd.Series, decimals: int) -> int:
    """One decimal for a column that reaches 100 (milliseconds, texts per second), so that
    every cell of a column has the same precision; ``decimals`` otherwise."""
    values = [abs(float(v)) for v in series if _is_number(v) and math.isfinite(float(v))]
    return 1 if values and max(values) >= 100 else decimals


def _formatter(kind: str, decimals: int, limit: float, p_decimals: int) -> Callable[[Any], str]:
    def count(v: Any) -> str:
        if _empty(v):
            return ""
        return _count(v) if math.isfinite(float(v)) else _infinite(float(v))

    def estimate(v: Any) -> str:
        if _empty(v):
            return ""
        return _infinite(float(v)) if not math.isfinite(float(v)) else f"{float(v):.{decimals}f}"

    def p(v: Any) -> str:
        if _empty(v):
            return ""
        return f"< {limit:g}" if float(v) < limit else f"{float(v):.{p_decimals}f}"

    def mixed(v: Any) -> str:
        if _empty(v):
            return ""
        if isinstance(v, int | np.integer) and not isinstance(v, bool):
            return count(v)  # an int stays one; a float, even 1.0, is an estimate
        if _is_number(v):  # a record's values: a large one to one decimal (784.9)
            return _estimate(float(v), decimals)
        if isinstance(v, list | tuple):
            return ", ".join(map(str, v))
        return str(v)

    return {"count": count, "estimate": estimate, "p": p, "mixed": mixed}[kind]


def _formatters(
    frame: pd.DataFrame,
    formats: Mapping[Hashable, Format] | None,
    decimals: int,
    limit: float,
    p_decimals: int,
) -> dict[Hashable, Callable[[Any], str]]:
    out: dict[Hashable, Callable[[Any], str]] = {}
    for column in frame.columns:
        given = (formats or {}).get(column, COLUMN_FORMATS.get(_name(column)))
        if isinstance(given, str):
            out[column] = (lambda spec: lambda v: "" if _empty(v) else spec.format(v))(given)
        elif given is not None:
            out[column] = given
        else:
            kind = column_kind(frame[column])
            places = _decimals(frame[column], decimals) if kind == "estimate" else decimals
            out[column] = _formatter(kind, places, limit, p_decimals)
    return out


def _frame(table: pd.DataFrame | pd.Series) -> pd.DataFrame:
    if isinstance(table, pd.Series):
        return table.to_frame(table.name if table.name is not None else "value")
    return table


def cells(
    table: pd.DataFrame | pd.Series,
    *,
    n_resamples: int | None = None,
    decimals: int = 3,
    p_decimals: int = 4,
    formats: Mapping[Hashable, Format] | None = None,
) -> pd.DataFrame:
    """The table's cells as the page shows them, as text (see the module).

    Parameters
    ----------
    table : DataFrame or Series
    n_resamples : int, optional
        Resamples of the test behind the p-value columns; sets their
        resolution (:func:`p_limit`).
    decimals : int, default 3
        Decimals of an estimate below 100.
    p_decimals : int, default 4
        Decimals of a p-value.
    formats : mapping, optional
        Column to a format string (``"{:.2e}"``) or function, for columns the
        rules do not fit.

    Returns
    -------
    pandas.DataFrame
        The same labels, every cell a string.
    """
    frame = _frame(table)
    limit = p_limit(n_resamples, p_decimals)
    out = frame.copy().astype(object)
    for column, fmt in _formatters(frame, formats, decimals, limit, p_decimals).items():
        out[column] = [fmt(v) for v in frame[column]]
    return _bounds(frame, out, n_resamples)


def _bounds(frame: pd.DataFrame, out: pd.DataFrame, n_resamples: int | None) -> pd.DataFrame:
    """``out`` with the p-values of every row whose unadjusted p is at its floor read
    ``≤`` (the row's ``p`` column, and its adjusted ``p_*`` ones)."""
    names = {column: _name(column) for column in frame.columns}
    unadjusted = [c for c, n in names.items() if n in {"p", "p-value", "p value"}]
    if not n_resamples or len(unadjusted) != 1:
        return out
    floor = [at_floor(p, n_resamples) for p in frame[unadjusted[0]]]
    for column in (c for c, n in names.items() if _is_p(n)):
        out[column] = [
            f"≤ {text}" if low and text and not text.startswith(("<", "≤")) else text
            for low, text in zip(floor, map(str, out[column]), strict=True)
        ]
    return out


def styled(
    table: pd.DataFrame | pd.Series,
    caption: str = "",
    *,
    n_resamples: int | None = None,
    decimals: int = 3,
    p_decimals: int = 4,
    formats: Mapping[Hashable, Format] | None = None,
    highlight_max: Any = None,
    index: bool = True,
) -> Styler:
    """A table ready for the page: its caption, its numbers formatted (see the module).

    Parameters
    ----------
    table : DataFrame or Series
        A result table; a series is shown as one column. A comparison's
        column of tests (:data:`~hierret.evaluation.stats.evidence.TEST_COLUMN`) is left
        out: it is the evidence behind the numbers, not a number.
    caption : str
        What the table shows, displayed with it.
    n_resamples, decimals, p_decimals, formats
        As for :func:`cells`.
    highlight_max : optional
        Mark the largest value of each column, over the cells this
        :meth:`Styler.highlight_max <pandas.io.formats.style.Styler.highlight_max>`
        ``subset`` selects (``slice(None)``: every cell).
    index : bool, default True
        Show the row labels.

    Returns
    -------
    pandas.io.formats.style.Styler
        Displayed by a notebook as an HTML table with a ``<caption>``.
    """
    frame = _frame(table)
    if TEST_COLUMN in frame.columns and frame.columns.nlevels == 1:  # evidence, not a cell
        frame = frame.drop(columns=TEST_COLUMN)
    if len(frame):  # a column with no value says nothing (the tests of a table without any)
        frame = frame.loc[:, frame.notna().any(axis=0)]
    named = [str(n) for n in frame.index.names if n is not None]
    corner = bool(named) and frame.columns.nlevels == 1 and frame.columns.name is None
    if corner:
        frame = frame.rename_axis(columns=" · ".join(named))
    limit = p_limit(n_resamples, p_decimals)
    formatters: dict[Any, Any] = _formatters(frame, formats, decimals, limit, p_decimals)
    styler = frame.style.format(formatters)
    styler = styler.format_index(
        lambda v: "" if _empty(v) else (f"{v:g}" if isinstance(v, float) else str(v)), axis=0
    )
    styler = styler.format_index(_header, axis=1)
    if corner:  # the row labels' names in the header row, not on a row of their own
        styler = styler.hide(axis="index", names=True)
    if caption:
        styler = styler.set_caption(caption)
    text: list[Hashable] = [c for c in frame.columns if any(isinstance(v, str) for v in frame[c])]
    if text:  # text reads from the left; numbers stay right-aligned (the site's CSS)
        styler = styler.set_properties(subset=text, **{"text-align": "left"})
    for wide, props in (
        (False, {"min-width": "6rem"}),  # breaks at spaces and hyphens
        (True, {"min-width": "9rem", "overflow-wrap": "anywhere"}),
    ):
        wrapped: list[Hashable] = [
            c for c in text if _longest(frame[c]) > 16 and (_longest(frame[c]) > 40) == wide
        ]
        if wrapped:  # a long text wraps in its column instead of widening the table
            styler = styler.set_properties(
                subset=wrapped, **{"white-space": "normal", "max-width": "24rem", **props}
            )
    if highlight_max is not None:
        styler = styler.highlight_max(
            axis=0, subset=highlight_max, props="font-weight: bold; background-color: #dbe9f6"
        )
    bare = isinstance(frame.index, pd.RangeIndex) and frame.index.name is None
    if not index or bare:  # row numbers 0, 1, 2... say nothing
        styler = styler.hide(axis="index")
    return styler


def _header(label: object) -> str:
    """A column label as words: ``diff_low`` reads "diff low" (it wrapped as "diff_ low")."""
    return html.escape(str(label).replace("_", " "))


def _longest(series: pd.Series) -> int:
    return int(series.map(lambda v: len(str(v))).max()) if len(series) else 0


def fields(mapping: Mapping[str, Any], name: str = "value") -> pd.DataFrame:
    """A nested mapping as one row per field: dotted names, and values (lists joined).

    Examples
    --------
    >>> fields({"profile": {"name": "shipped", "selection": {"top_k": 10}}, "n": 3})
                               value
    profile.name             shipped
    profile.selection.top_k       10
    n                              3
    """
    rows: dict[str, Any] = {}

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, Mapping) and value:
            for k, v in value.items():
                walk(f"{prefix}.{k}" if prefix else str(k), v)
        elif isinstance(value, Sequence) and not isinstance(value, str):
            rows[prefix] = ", ".join(map(str, value))
        else:
            rows[prefix] = value

    walk("", mapping)
    return pd.DataFrame({name: pd.Series(rows, dtype=object)})
