"""Checks shared by the search entry points: counts, query texts, finite vectors.

Every public function that takes a count (``k``, ``pool``, ``candidates``) checks it
with :func:`check_count`; every one that takes typed questions checks them with
:func:`check_query_texts`; every boundary where vectors enter an index or a
search checks them with :func:`nonfinite_rows`; every place text enters the
package (the loaders, :class:`~hierret.structure.units.Document`,
:class:`~hierret.structure.units.Query`, the encoders) refuses text that cannot be encoded
with :func:`lone_surrogate`, :func:`find_lone_surrogate` and
:func:`surrogate_message`. The messages name the
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
import re
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
    "find_lone_surrogate",
    "has_text",
    "lone_surrogate",
    "nonfinite_rows",
    "surrogate_escape",
    "surrogate_message",
]

#: What an empty query is told.
EMPTY_QUERY = "give a question with at least one word"

log = logging.getLogger(__name__)

# Unicode categories of characters that show nothing: control and format characters.
_INVISIBLE = frozenset({"Cc", "Cf"})
_SHOWN = 5  # ids or row numbers quoted in a message


#: A JSON escape of a surrogate (``\ud800`` to ``\udfff``): the only way a lone
#: surrogate gets into a string decoded from strict UTF-8 JSON. A cheap test
#: before looking for one (a complete pair such as ``\ud83d\ude00`` matches too).
surrogate_escape = re.compile(r"\\u[dD][89a-fA-F]")


def lone_surrogate(text: str) -> int | None:
    r"""Position of the first lone surrogate in ``text``, or ``None`` when it has none.

    A lone surrogate (U+D800 to U+DFFF) is not a character: it cannot be
    written as UTF-8, so every encoder and every file write fails on it. It
    comes from a JSON escape such as ``"\ud800"`` without the other half of its
    pair, or from bytes that are not UTF-8 decoded with ``surrogateescape`` (a
    file name, a command-line argument).

    Examples
    --------
    >>> lone_surrogate("Café 😀"), lone_surrogate("Cats \ud800 purr")
    (None, 5)
    """
    if text.isascii():
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as err:
        return err.start
    return None


def find_lone_surrogate(value: object, where: str = "") -> tuple[str, str, int] | None:
    r"""The first string in a JSON value (keys too) holding a lone surrogate.

    Returns
    -------
    tuple of (str, str, int) or None
        Where it is (``'full_text[0].paragraphs[2]'``; ``'key ...'`` for a key),
        the string, and the position of the surrogate in it.

    Examples
    --------
    >>> find_lone_surrogate({"_id": "d1", "text": ["ok", "bad \udc00"]})
    ('text[1]', 'bad \udc00', 4)
    >>> find_lone_surrogate({"a": 1, "b": [None, "fine"]}) is None
    True
    """
    if isinstance(value, str):
        at = lone_surrogate(value)
        return None if at is None else (where or "the value", value, at)
    if isinstance(value, Mapping):
        for key, item in value.items():
            name = f"{where}.{key}" if where else str(key)
            if isinstance(key, str) and (at := lone_surrogate(key)) is not None:
                return f"key {name!r}", key, at
            found = find_lone_surrogate(item, name)
            if found:
                return found
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            found = find_lone_surrogate(item, f"{where}[{i}]")
            if found:
                return found
    return None


def surrogate_message(what: str, text: str, at: int) -> str:
    r"""What to say about a lone surrogate at ``text[at]``: where, what, and the fix.

    Examples
    --------
    >>> print(surrogate_message("document 'd1': text", "Cats \ud800 purr", 5))
    ... # doctest: +NORMALIZE_WHITESPACE
    document 'd1': text is not valid Unicode: a lone surrogate U+D800 at character 5
    (after 'Cats '), which cannot be written as UTF-8, so no encoder can read it. It
    usually comes from a JSON escape such as \ud83d without the other half of its pair,
    or from bytes that are not UTF-8; fix the source: write the character itself (or a
    complete pair such as \ud83d\ude00), or remove it
    """
    before = text[max(0, at - 20) : at]
    return (
        f"{what} is not valid Unicode: a lone surrogate U+{ord(text[at]):04X} at character "
        f"{at} (after {before!r}), which cannot be written as UTF-8, so no encoder can read "
        "it. It usually comes from a JSON escape such as \\ud83d without the other half of "
        "its pair, or from bytes that are not UTF-8; fix the source: write the character "
        "itself (or a complete pair such as \\ud83d\\ude00), or remove it"
    )


def check_texts(texts: Sequence[str]) -> list[str]:
    """``texts`` as a list, if it is a sequence of ``str`` (an encoder's or cache's input).

    Raises
    ------
    TypeError
        ``texts`` is a single ``str`` (it would be read as characters), or an
        item is not a ``str``.
    ValueError
        An item holds a lone surrogate (:func:`lone_surrogate`): no encoder can
        read it.

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
        at = lone_surrogate(t)
        if at is not None:
            raise ValueError(surrogate_message(f"texts[{i}] (of {len(items)})", t, at))
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
        :func:`~hierret.search.rankers.bm25.top_k`: 0, which gives an empty list).

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
        at = lone_surrogate(str(t))
        if at is not None:
            which = f"query {name!r}" if ids is not None else "query"
            raise ValueError(surrogate_message(which, str(t), at))
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
