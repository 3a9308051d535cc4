"""Checks shared by the search entry points: counts, query texts, finite vectors.

Every public function that takes a count (``k``, ``pool``, ``candidates``) checks it
with :func:`check_count`; every one that takes typed questions checks them with
:func:`check_query_texts`; every boundary where vectors enter an index or a
search checks them with :func:`nonfinite_rows`. The messages name the
parameter, the value and the rule, so a caller can fix the call from the
message alone. This module imports nothing from :mod:`hierret`, so any module
may use it.

Examples
--------
>>> check_count(3)
3
>>> check_count("3")
Traceback (most recent call last):
...
TypeError: k must be an int >= 1, got '3' (str)
>>> has_text(" \\t\\n"), has_text("?")
(False, True)
"""

from __future__ import annotations

import logging
import numbers
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "EMPTY_QUERY",
    "check_count",
    "check_query_texts",
    "check_texts",
    "check_weight",
    "describe_rows",
    "empty_units_message",
    "has_text",
    "nonfinite_rows",
]

#: What an empty query is told.
EMPTY_QUERY = "give a question with at least one word"

log = logging.getLogger(__name__)

# Unicode categories of characters that show nothing: control and format characters.
_INVISIBLE = frozenset({"Cc", "Cf"})
_SHOWN = 5  # ids or row numbers quoted in a message


def check_texts(texts: Sequence[str]) -> list[str]:
    """``texts`` as a list, if it is a sequence of ``str`` (an encoder's or cache's input).

    Raises
    ------
    TypeError
        ``texts`` is a single ``str`` (it would be read as characters), or an
        item is not a ``str``.

    Examples
    --------
    >>> check_texts(("a", "b"))
    ['a', 'b']
    >>> check_texts("ab")
    Traceback (most recent call last):
    ...
    TypeError: texts must be a sequence of strings, not a single str: wrap it in a list
    """
    if isinstance(texts, str):
        raise TypeError("texts must be a sequence of strings, not a single str: wrap it in a list")
    items = list(texts)
    for i, t in enumerate(items):
        if not isinstance(t, str):
            raise TypeError(f"texts[{i}] must be str, got {type(t).__name__}")
    return items


def check_count(value: object, name: str = "k", minimum: int = 1) -> int:
    """``value`` as an ``int``, if it is an integer (not a bool) of at least ``minimum``.

    Search depths are counts: ``k=2.5``, ``k="3"``, ``k=True`` or ``k=None``
    raise :class:`TypeError`, a count below ``minimum`` raises
    :class:`ValueError`. NumPy integers are accepted. There is no upper bound:
    a depth larger than the index returns every unit.

    Parameters
    ----------
    value : object
        What the caller passed.
    name : str, default "k"
        The parameter's name, for the message.
    minimum : int, default 1
        The smallest count allowed (search entry points: 1; the low-level
        :func:`~hierret.rankers.bm25.top_k`: 0, which gives an empty list).

    Returns
    -------
    int

    Raises
    ------
    TypeError
        ``value`` is not an integer, or is a bool.
    ValueError
        ``value`` is below ``minimum``.

    Examples
    --------
    >>> check_count(0, "pool")
    Traceback (most recent call last):
    ...
    ValueError: pool must be an int >= 1, got 0
    >>> check_count(0, "k", minimum=0)
    0
    """
    rule = f"{name} must be an int >= {minimum}"
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer):
        raise TypeError(f"{rule}, got {value!r} ({type(value).__name__})")
    if value < minimum:
        raise ValueError(f"{rule}, got {value}")
    return int(value)


def check_weight(value: object, name: str) -> float:
    """``value`` as a ``float``, if it is a real number (not a bool) in [0, 1].

    Examples
    --------
    >>> check_weight(0.65, "section_weight")
    0.65
    >>> check_weight(1.5, "section_weight")
    Traceback (most recent call last):
    ...
    ValueError: section_weight (1.5) must lie in [0, 1]
    >>> check_weight("0.5", "section_weight")
    Traceback (most recent call last):
    ...
    TypeError: section_weight must be a number in [0, 1], got '0.5' (str)
    """
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
        raise TypeError(
            f"{name} must be a number in [0, 1], got {value!r} ({type(value).__name__})"
        )
    if not 0.0 <= float(value) <= 1.0:
        raise ValueError(f"{name} ({value}) must lie in [0, 1]")
    return float(value)


def has_text(text: str) -> bool:
    """Whether ``text`` holds a character that shows: not whitespace, control or format.

    Examples
    --------
    >>> has_text(""), has_text("\\x00\\u200b "), has_text("a")
    (False, False, True)
    """
    return any(not c.isspace() and unicodedata.category(c) not in _INVISIBLE for c in text)


def _quote(ids: Sequence[object]) -> str:
    shown = ", ".join(repr(i) for i in ids[:_SHOWN])
    return shown + (f" and {len(ids) - _SHOWN} more" if len(ids) > _SHOWN else "")


def check_query_texts(texts: Sequence[object], ids: Sequence[str] | None = None) -> list[str]:
    """The query texts, if every one is a ``str`` with text and valid Unicode.

    Parameters
    ----------
    texts : sequence of str
        Typed questions.
    ids : sequence of str, optional
        Their query ids, named in the message (a single question has none).

    Returns
    -------
    list of str

    Raises
    ------
    TypeError
        A text is not a ``str``.
    ValueError
        A text is empty or holds only whitespace or control characters, or it
        holds a lone surrogate (it cannot be encoded as UTF-8).

    Examples
    --------
    >>> check_query_texts(["why?"])
    ['why?']
    >>> check_query_texts([" \\n"])
    Traceback (most recent call last):
    ...
    ValueError: query is empty: give a question with at least one word
    >>> check_query_texts(["a", "", "\\t"], ids=["q1", "q2", "q3"])
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: 2 of 3 queries are empty ('q2', 'q3'): give each a question with at least ...
    """
    items = list(texts)
    names: list[object] = list(ids) if ids is not None else list(range(len(items)))
    for name, t in zip(names, items, strict=True):
        if not isinstance(t, str):
            which = f"query {name!r}" if ids is not None else "query"
            raise TypeError(f"{which} must be a str, got {type(t).__name__}")
    empty = [n for n, t in zip(names, items, strict=True) if not has_text(str(t))]
    if empty:
        if ids is None or len(items) == 1:
            raise ValueError(f"query is empty: {EMPTY_QUERY}")
        raise ValueError(
            f"{len(empty)} of {len(items)} queries are empty ({_quote(empty)}): "
            "give each a question with at least one word"
        )
    for name, t in zip(names, items, strict=True):
        try:
            str(t).encode("utf-8")
        except UnicodeEncodeError as err:
            which = f"query {name!r}" if ids is not None else "query"
            raise ValueError(
                f"{which} is not valid Unicode text: a lone surrogate at position {err.start}"
            ) from None
    return [str(t) for t in items]


def nonfinite_rows(matrix: NDArray[Any]) -> NDArray[np.intp]:
    """Indices of the rows (first axis) of an array that hold NaN or an infinity.

    Examples
    --------
    >>> nonfinite_rows(np.array([[0.0, 1.0], [np.nan, 0.0], [0.0, -np.inf]])).tolist()
    [1, 2]
    """
    arr = np.atleast_1d(matrix)
    return np.flatnonzero(~np.isfinite(arr).all(axis=tuple(range(1, arr.ndim))))


def describe_rows(rows: NDArray[np.intp], n_rows: int, what: str) -> str:
    """``"3 of 10 rows hold NaN or infinite values (rows 0, 4, 7)"``-style text.

    Examples
    --------
    >>> describe_rows(np.array([1]), 2, "hold NaN or infinite values")
    '1 of 2 rows hold NaN or infinite values (row 1)'
    """
    listed = _quote(rows.tolist())
    return f"{len(rows)} of {n_rows} rows {what} (row{'s' if len(rows) > 1 else ''} {listed})"


def empty_units_message(empty: Mapping[Any, Sequence[str]]) -> str | None:
    """The one notice about units left out for having no text, or ``None`` when none were.

    Examples
    --------
    >>> print(empty_units_message({"documents": ["e"], "sections": ["e#s1"], "passages": []}))
    2 units have no text (nothing but whitespace or control characters) and are left out \
of every index, never embedded or ranked: documents 1, sections 1, passages 0 ('e', 'e#s1')
    """
    ids = [u for units in empty.values() for u in units]
    if not ids:
        return None
    counts = ", ".join(f"{level} {len(units)}" for level, units in empty.items())
    return (
        f"{len(ids)} units have no text (nothing but whitespace or control characters) and are "
        f"left out of every index, never embedded or ranked: {counts} ({_quote(ids)})"
    )
