"""Sentence-aware passages: split text into sentences, pack them greedily.

The defaults (900 characters, 180 of overlap) are those of the chunking study
this package starts from (DR-001). Every sentence and every passage is a
half-open span ``(start, end)`` into the original text; nothing is copied or
normalised, so a passage can always be cut back out of its document and cited.

Examples
--------
>>> text = "Dr. Smith arrived, e.g. at noon. It rained. We left."
>>> [text[s:e] for s, e in split_sentences(text)]
['Dr. Smith arrived, e.g. at noon.', 'It rained.', 'We left.']
>>> chunk_text(text, max_chars=45, overlap_chars=12)
[(0, 43), (33, 52)]
"""

from __future__ import annotations

import re
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
        "e.g.", "i.e.", "etc.", "vs.", "cf.", "al.", "approx.", "ca.", "viz.",
        "dr.", "mr.", "mrs.", "ms.", "prof.", "st.", "jr.", "sr.",
        "fig.", "figs.", "eq.", "eqs.", "sec.", "ch.", "no.", "nos.", "vol.", "pp.", "p.",
        "resp.", "incl.", "e.t.c.",
    }
)

# Words after which a number followed by a full stop is a reference, not an end.
_NUMBER_CONTEXT = frozenset(
    {"section", "sections", "sec.", "chapter", "ch.", "fig.", "figure", "table", "step",
     "item", "page", "version", "eq.", "equation", "pep", "§"}
)

_CANDIDATE = re.compile(r"[.!?…]+[\"')\]’”»]*(?=\s)|\n[^\S\n]*\n")
_NUMBER = re.compile(r"^\(?\d+(?:\.\d+)*\.$")
_INITIAL = re.compile(r"^\(?[A-Z]\.$")
_ELLIPSIS = re.compile(r"(?:\.\.\.|…)[\"')\]’”»]*$")
_WORD_BEFORE = re.compile(r"(\S+)\s*$")


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
    """

    abbreviations: frozenset[str] = DEFAULT_ABBREVIATIONS

    def __init__(self, abbreviations: Iterable[str] = DEFAULT_ABBREVIATIONS) -> None:
        object.__setattr__(self, "abbreviations", frozenset(a.lower() for a in abbreviations))

    def _is_boundary(self, text: str, match: re.Match[str]) -> bool:
        if match.group().startswith("\n"):
            return True
        line_start = text.rfind("\n", 0, match.start()) + 1
        before = _WORD_BEFORE.search(text, line_start, match.end())
        token = before.group(1) if before else match.group()
        if _ELLIPSIS.search(token):
            return False
        core = token.lstrip("(\"'‘“[«").rstrip("\"')]’”»")
        if core.lower() in self.abbreviations or _INITIAL.match(core):
            return False
        if _NUMBER.match(core):
            head = text[line_start : match.start() - len(core) + 1]
            prev = head.split()
            if not prev or prev[-1].lower() in _NUMBER_CONTEXT:
                return False
        return True

    def split(self, text: str) -> list[tuple[int, int]]:
        """Split ``text`` into sentence spans covering every non-space character."""
        _check_text(text)
        spans: list[tuple[int, int]] = []
        start = 0
        for match in _CANDIDATE.finditer(text):
            if not self._is_boundary(text, match):
                continue
            end = match.start() if match.group().startswith("\n") else match.end()
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
    """Cut a span longer than ``max_chars`` at whitespace; a longer token stays whole."""
    pieces: list[tuple[int, int]] = []
    while end - start > max_chars:
        cut = start + max_chars
        while cut > start and not text[cut].isspace():
            cut -= 1
        if cut == start:  # one unsplittable token: keep it whole, up to the next space
            cut = start + max_chars
            while cut < end and not text[cut].isspace():
                cut += 1
        pieces.extend(_trimmed(text, start, cut))
        start = cut
        while start < end and text[start].isspace():
            start += 1
    pieces.extend(_trimmed(text, start, end))
    return pieces


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
    sentence). A sentence longer than ``max_chars`` is split at whitespace; its
    pieces never serve as overlap.

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
        Largest passage span, in characters (exceeded only by a single token
        longer than this).
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
    """
    _check_text(text)
    _check_sizes(max_chars, overlap_chars)
    return pack_sentences(text, split_sentences(text, abbreviations), max_chars, overlap_chars)
