"""FROZEN reference copy of the chunker at commit f0b85ec (issue 11).

Used ONLY by ``tests/core/test_chunking_linear.py``, which holds
:mod:`hierret.structure.chunking` to exactly the spans this copy gives (real corpora,
generated texts, pathological long lines), so that work on the chunker's speed
cannot change a passage. Copied from ``src/hierret/chunking.py`` unchanged
apart from this docstring. Do not edit it to follow the package: it is the
reference the package is held to.
"""

# ruff: noqa
# mypy: ignore-errors

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "DEFAULT_ABBREVIATIONS",
    "DEFAULT_MAX_CHARS",
    "DEFAULT_OVERLAP_CHARS",
    "SentenceSplitter",
    "chunk_text",
    "pack_sentences",
    "split_sentences",
]

DEFAULT_MAX_CHARS = 900
DEFAULT_OVERLAP_CHARS = 180

#: Tokens that end in a full stop without ending a sentence (compared lower-cased).
DEFAULT_ABBREVIATIONS: frozenset[str] = frozenset(
    {
        "e.g.",
        "i.e.",
        "etc.",
        "vs.",
        "cf.",
        "al.",
        "approx.",
        "ca.",
        "viz.",
        "dr.",
        "mr.",
        "mrs.",
        "ms.",
        "prof.",
        "st.",
        "jr.",
        "sr.",
        "fig.",
        "figs.",
        "eq.",
        "eqs.",
        "sec.",
        "ch.",
        "no.",
        "nos.",
        "vol.",
        "pp.",
        "p.",
        "resp.",
        "incl.",
        "e.t.c.",
    }
)

# Words after which a number followed by a full stop is a reference, not an end.
_NUMBER_CONTEXT = frozenset(
    {
        "section",
        "sections",
        "sec.",
        "chapter",
        "ch.",
        "fig.",
        "figure",
        "table",
        "step",
        "item",
        "page",
        "version",
        "eq.",
        "equation",
        "pep",
        "§",
    }
)

_CLOSE = "\"')\\]’”»"  # closing quotes and brackets after a stop (a regex class body)
_FULL_CLOSE = _CLOSE + "」』）】〕〗〙〛〉》＂＇］｝"
#: Stops that end a sentence whether or not whitespace follows (CJK, Indic, Arabic).
_FULL_STOPS = "。｡．！？।॥؟۔‼⁇⁈⁉"
#: With ``\r``, the line breaks of :meth:`str.splitlines`; ``\r\n`` is one break.
_BREAKS = "\n\v\f\x1c\x1d\x1e\x85\u2028\u2029"
_BREAK = rf"(?:\r\n|\r(?!\n)|[{_BREAKS}])"
_CANDIDATE = re.compile(
    rf"(?=[.!?…{_FULL_STOPS}\r{_BREAKS}])"  # lets the regex engine skip other text fast
    rf"(?:(?P<stop>[.!?…]+[{_CLOSE}]*)"  # ends a sentence only if whitespace follows
    rf"|(?P<full>[{_FULL_STOPS}][{_FULL_STOPS}.!?…]*[{_FULL_CLOSE}]*)"  # ends one anyway
    rf"|(?P<blank>{_BREAK}[^\S\r{_BREAKS}]*[\r{_BREAKS}]|\u2029))"  # blank line, U+2029
)
_LINE_BREAK = re.compile(rf"[\r{_BREAKS}]")
_NUMBER = re.compile(r"^\(?\d+(?:\.\d+)*\.$")
_INITIAL = re.compile(r"^\(?[A-Z]\.$")
_ELLIPSIS = re.compile(r"(?:\.\.\.|…)[\"')\]’”»]*$")
# Matched against the reversed text, so that looking back costs only what it reads.
_TOKEN_BACK = re.compile(r"\S*")
_WORD_BACK = re.compile(r"\s*(\S*)")


def _check_text(text: object, name: str = "text") -> str:
    if not isinstance(text, str):
        raise TypeError(f"{name} must be str, got {type(text).__name__}")
    return text


def _check_sizes(max_chars: int, overlap_chars: int) -> None:
    for name, value in (("max_chars", max_chars), ("overlap_chars", overlap_chars)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{name} must be int, got {type(value).__name__}")
    if max_chars <= 0:
        raise ValueError(f"max_chars ({max_chars}) must be positive")
    if overlap_chars < 0:
        raise ValueError(f"overlap_chars ({overlap_chars}) must be zero or positive")
    if overlap_chars >= max_chars:
        raise ValueError(
            f"overlap_chars ({overlap_chars}) must be smaller than max_chars ({max_chars})"
        )


@dataclass(frozen=True)
class SentenceSplitter:
    """Rule-based sentence splitter that knows abbreviations.

    A sentence ends at ``.``, ``!``, ``?`` (with any closing quotes or brackets)
    followed by whitespace, or at a blank line. It does not end after an
    abbreviation, an initial (``J.``), an ellipsis, or a section number at the
    start of a line or after a word such as "Section" (``Section 3.2.``).
    Decimals (``3.14``) never end a sentence because no whitespace follows the
    point.

    The stops of scripts written without spaces end a sentence with or without
    whitespace after them: ``。｡．！？`` (``．`` not before a digit), the danda
    ``।`` and ``॥``, Arabic ``؟`` and Urdu ``۔``, and ``‼⁇⁈⁉``. Every line
    break that :meth:`str.splitlines` knows counts (``\\r\\n``, ``\\r``, U+2028,
    U+0085, ...); a blank line or a U+2029 PARAGRAPH SEPARATOR ends a sentence.

    Parameters
    ----------
    abbreviations : iterable of str
        Lower-cased tokens, with their full stops, that never end a sentence.
        Extend the default with ``DEFAULT_ABBREVIATIONS | {"approx."}``.

    Examples
    --------
    >>> s = SentenceSplitter(DEFAULT_ABBREVIATIONS | {"bzw."})
    >>> text = "Siehe bzw. dort. Ende."
    >>> [text[a:b] for a, b in s.split(text)]
    ['Siehe bzw. dort.', 'Ende.']
    >>> text = "日本語の文。次の文！\\u2029Last line\\rno stop"
    >>> [text[a:b] for a, b in s.split(text)]
    ['日本語の文。', '次の文！', 'Last line\\rno stop']
    """

    abbreviations: frozenset[str] = DEFAULT_ABBREVIATIONS

    def __init__(self, abbreviations: Iterable[str] = DEFAULT_ABBREVIATIONS) -> None:
        object.__setattr__(self, "abbreviations", frozenset(a.lower() for a in abbreviations))

    def _is_boundary(self, text: str, rev: str, line_start: int, match: re.Match[str]) -> bool:
        """Whether a stop ends a sentence; ``rev`` is ``text[::-1]``, for looking back."""
        end = match.end()
        if match.lastgroup == "full":  # "３．１４" is a number
            return not (match.group() == "．" and end < len(text) and text[end].isdigit())
        if end == len(text) or not text[end].isspace():
            return False
        n = len(text)
        back = _TOKEN_BACK.match(rev, n - end)  # the token the stop ends, read backwards
        token = back.group()[::-1] if back else match.group()
        if _ELLIPSIS.search(token):
            return False
        core = token.lstrip("(\"'‘“[«").rstrip("\"')]’”»")
        if core.lower() in self.abbreviations or _INITIAL.match(core):
            return False
        if _NUMBER.match(core):  # a number first on its line or after "Section"
            before = _WORD_BACK.match(rev, n - (match.start() - len(core) + 1), n - line_start)
            previous = before.group(1)[::-1] if before else ""
            if not previous or previous.lower() in _NUMBER_CONTEXT:
                return False
        return True

    def split(self, text: str) -> list[tuple[int, int]]:
        """Split ``text`` into sentence spans covering every non-space character."""
        _check_text(text)
        rev = text[::-1]
        breaks = _LINE_BREAK.finditer(text)
        next_break = next(breaks, None)
        line_start = 0
        spans: list[tuple[int, int]] = []
        start = 0
        for match in _CANDIDATE.finditer(text):
            if match.lastgroup == "blank":
                end = match.start()
            else:
                while next_break is not None and next_break.start() < match.start():
                    line_start = next_break.end()
                    next_break = next(breaks, None)
                if not self._is_boundary(text, rev, line_start, match):
                    continue
                end = match.end()
            spans.extend(_trimmed(text, start, end))
            start = end
        spans.extend(_trimmed(text, start, len(text)))
        return spans


def _trimmed(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The span with surrounding whitespace removed; empty list if nothing is left."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return [(start, end)] if start < end else []


def split_sentences(
    text: str, abbreviations: Iterable[str] = DEFAULT_ABBREVIATIONS
) -> list[tuple[int, int]]:
    """Split ``text`` into sentence spans (see :class:`SentenceSplitter`).

    Examples
    --------
    >>> text = "Pi is 3.14, i.e. about three... roughly. Yes!"
    >>> [text[a:b] for a, b in split_sentences(text)]
    ['Pi is 3.14, i.e. about three... roughly.', 'Yes!']
    """
    return SentenceSplitter(abbreviations).split(text)


def _split_long(text: str, start: int, end: int, max_chars: int) -> list[tuple[int, int]]:
    """Cut a span longer than ``max_chars`` at whitespace, else hard (see :func:`_hard_cut`)."""
    pieces: list[tuple[int, int]] = []
    while end - start > max_chars:
        cut = start + max_chars
        while cut > start and not text[cut].isspace():
            cut -= 1
        if cut == start:  # no whitespace in the window
            cut = _hard_cut(text, start, start + max_chars)
        pieces.extend(_trimmed(text, start, cut))
        start = cut
        while start < end and text[start].isspace():
            start += 1
    pieces.extend(_trimmed(text, start, end))
    return pieces


def _hard_cut(text: str, start: int, cut: int) -> int:
    """``cut``, moved back so that no mark, joiner or surrogate is cut off what it joins.

    Falls back to ``cut`` itself when no such place is left after ``start``.

    Examples
    --------
    >>> _hard_cut("abce\\u0301\\u0301f", 0, 5), _hard_cut("\\u0301" * 9, 0, 5)
    (3, 5)
    """
    at = cut
    while at > start + 1 and _clings(text, at):
        at -= 1
    return cut if _clings(text, at) else at


def _clings(text: str, i: int) -> bool:
    """Whether ``text[i]`` belongs to the character before it."""
    ch, prev = text[i], text[i - 1]
    return (
        unicodedata.category(ch) in ("Mn", "Mc", "Me")
        or "\u200d" in (ch, prev)  # zero-width joiner
        or ("\udc00" <= ch <= "\udfff" and "\ud800" <= prev <= "\udbff")
    )


def pack_sentences(
    text: str,
    sentences: list[tuple[int, int]],
    max_chars: int = DEFAULT_MAX_CHARS,
    overlap_chars: int = DEFAULT_OVERLAP_CHARS,
) -> list[tuple[int, int]]:
    """Pack sentence spans greedily into passages.

    Whole sentences go into a passage while its span stays within
    ``max_chars``. Each new passage starts with the trailing whole sentences of
    the previous one that fit in ``overlap_chars`` (and leave room for the next
    sentence). A sentence longer than ``max_chars`` is split at the last
    whitespace of each ``max_chars`` window, or cut hard at ``max_chars`` where
    the window has none (not between a character and its combining marks, if
    avoidable); its pieces never serve as overlap.

    Parameters
    ----------
    text : str
        The text the spans index into.
    sentences : list of (int, int)
        Sentence spans in order, as from :func:`split_sentences`.
    max_chars, overlap_chars : int
        Passage size limit and overlap budget, in characters of the original text.

    Returns
    -------
    list of (int, int)
        Passage spans in order.

    Examples
    --------
    >>> text = "One two. Three four. Five six."
    >>> pack_sentences(text, split_sentences(text), max_chars=22, overlap_chars=12)
    [(0, 20), (9, 30)]
    >>> pack_sentences(text, split_sentences(text), max_chars=22, overlap_chars=10)
    [(0, 20), (21, 30)]
    >>> pack_sentences("x" * 25, [(0, 25)], max_chars=10, overlap_chars=2)
    [(0, 10), (10, 20), (20, 25)]
    """
    _check_text(text)
    _check_sizes(max_chars, overlap_chars)
    units: list[tuple[int, int, bool]] = []  # (start, end, is_whole_sentence)
    for s, e in sentences:
        if e - s <= max_chars:
            units.append((s, e, True))
        else:
            units.extend((a, b, False) for a, b in _split_long(text, s, e, max_chars))
    passages: list[tuple[int, int]] = []
    first = 0  # index of the first unit of the current passage
    while first < len(units):
        last = first  # extend the passage [first, last] while it fits
        while last + 1 < len(units) and units[last + 1][1] - units[first][0] <= max_chars:
            last += 1
        passages.append((units[first][0], units[last][1]))
        nxt = last + 1
        new_first = nxt
        for cand in range(last, first, -1):  # the longest suffix of whole sentences that fits
            if (
                not units[cand][2]
                or units[last][1] - units[cand][0] > overlap_chars
                or (nxt < len(units) and units[nxt][1] - units[cand][0] > max_chars)
            ):
                break
            new_first = cand
        if nxt >= len(units):
            break
        first = new_first
    return passages


def chunk_text(
    text: str,
    max_chars: int = DEFAULT_MAX_CHARS,
    overlap_chars: int = DEFAULT_OVERLAP_CHARS,
    abbreviations: Iterable[str] = DEFAULT_ABBREVIATIONS,
) -> list[tuple[int, int]]:
    """Cut ``text`` into overlapping sentence-aware passages.

    Parameters
    ----------
    text : str
        Any text; an empty or whitespace-only text gives no passages.
    max_chars : int, default 900
        Largest passage span, in characters (code points), for every text.
    overlap_chars : int, default 180
        Largest overlap with the previous passage; made of whole sentences.
    abbreviations : iterable of str
        Tokens that do not end a sentence.

    Returns
    -------
    list of (int, int)
        Half-open passage spans into ``text``; together they cover every
        non-whitespace character.

    Raises
    ------
    TypeError
        If ``text`` is not a str or a size is not an int.
    ValueError
        If a size is not positive or ``overlap_chars >= max_chars``.

    Examples
    --------
    >>> chunk_text("   ")
    []
    >>> chunk_text("no punctuation at all")
    [(0, 21)]
    >>> chunk_text("文" * 2000)
    [(0, 900), (900, 1800), (1800, 2000)]
    """
    _check_text(text)
    _check_sizes(max_chars, overlap_chars)
    return pack_sentences(text, split_sentences(text, abbreviations), max_chars, overlap_chars)
