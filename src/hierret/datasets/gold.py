"""Gold questions with verbatim evidence quotes, located in a corpus.

A gold file is JSON Lines: ``{"id", "question", "evidence": [quote, ...],
"kind", "topic"}``. Each quote is searched in every document modulo
whitespace (the corpus wraps lines mid-sentence) and Unicode normalisation
(NFC), and *every* occurrence becomes an evidence span: an answer quoted from
one topic that a near-duplicate topic also holds is evidence in both. A quote found nowhere is
a coverage failure reported with its question id.

The labels of ``data/gold/python-reference.jsonl`` were drafted by this
project and are provisional.
"""

from __future__ import annotations

import json
import os
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from hierret.structure.units import Corpus, Query, Span

__all__ = ["GoldSet", "default_gold_path", "load_gold", "locate"]

_WS = re.compile(r"\s+")
_BLOCK = 1 << 20  # characters normalised at a time
#: What ``\s`` matches (``str.isspace``): 29 code points, all below U+3001.
_SPACES = np.array([c for c in range(0x3001) if chr(c).isspace()], dtype=np.uint32)


@dataclass(frozen=True)
class GoldSet:
    """Located gold questions.

    Attributes
    ----------
    queries : list of Query
        Questions whose every quote was found, with all evidence spans.
    kinds : dict
        Question id to its ``kind`` label (sentence, section, paraphrase, ...).
    failures : list of str
        One line per quote found in no document (``"pr-007: quote '...' not found"``).
    """

    queries: list[Query]
    kinds: dict[str, str]
    failures: list[str]

    def raise_if_failed(self) -> None:
        """Raise ValueError naming every quote that could not be located."""
        if self.failures:
            shown = "\n  ".join(self.failures[:20])
            raise ValueError(
                f"{len(self.failures)} gold quote(s) not found in the corpus:\n  {shown}\n"
                "Copy quotes verbatim from the corpus text (whitespace may differ), "
                "or check that the corpus is the one the gold set was written for."
            )


def _joins(ch: str) -> bool:
    """Whether ``ch`` may compose with the character before it under NFC: a
    combining mark, or a Hangul medial or final jamo (class 0, yet composing)."""
    return unicodedata.combining(ch) != 0 or "\u1160" <= ch <= "\u11ff"


class _Normalised:
    """A document's text with whitespace runs collapsed and in Unicode NFC, and a map
    back to offsets of the text as given (``offsets``: where each character starts;
    ``ends``: where it ends, when NFC changed the text)."""

    def __init__(self, text: str) -> None:
        self.ends: list[int] | None = None
        self.offsets: Sequence[int] | np.ndarray[Any, Any]
        if not unicodedata.is_normalized("NFC", text):
            self._compose(text)
            return
        # Vectorised, a block at a time (a 50 MB document once took 2.8 GB here, a Python
        # int per character; now 4 bytes a character plus one block's work): keep every
        # character but the second and later of a whitespace run, the first written as a
        # space; offsets[i] is where kept character i was.
        parts: list[str] = []
        pieces: list[np.ndarray[Any, Any]] = []
        wide = np.int64 if len(text) >= 2**31 else np.int32
        before = False  # whether the character before the block is whitespace
        for lo in range(0, len(text), _BLOCK):
            block = text[lo : lo + _BLOCK]
            codes = np.frombuffer(block.encode("utf-32-le", "surrogatepass"), dtype="<u4")
            space = np.isin(codes, _SPACES)
            keep = ~space
            keep[1:] |= space[1:] & ~space[:-1]
            keep[:1] |= space[:1] & (not before)
            where = np.flatnonzero(keep)
            kept = codes[where]
            kept[space[where]] = 32
            parts.append(kept.tobytes().decode("utf-32-le", "surrogatepass"))
            pieces.append((where + lo).astype(wide))
            before = bool(space[-1])
        pieces.append(np.asarray([len(text)], dtype=wide))
        self.text = "".join(parts)
        self.offsets = np.concatenate(pieces)

    def _compose(self, text: str) -> None:
        """The slow path, for text not in NFC (a document saved on macOS is NFD): each
        base character with the marks that follow it is composed on its own, and
        every character it gives maps back to the whole cluster."""
        parts: list[str] = []
        starts: list[int] = []
        ends: list[int] = []
        i, n = 0, len(text)
        while i < n:
            space = _WS.match(text, i)
            if space:
                parts.append(" ")
                starts.append(i)
                ends.append(i + 1)
                i = space.end()
                continue
            j = i + 1
            while j < n and _joins(text[j]):
                j += 1
            piece = unicodedata.normalize("NFC", text[i:j])
            parts.append(piece)
            starts.extend([i] * len(piece))
            ends.extend([j] * len(piece))
            i = j
        self.text = "".join(parts)
        self.offsets, self.ends = starts, ends

    def find_all(self, needle: str) -> list[tuple[int, int]]:
        spans, start = [], self.text.find(needle)
        while start >= 0:
            end = start + len(needle)
            stop = self.ends[end - 1] if self.ends is not None else int(self.offsets[end - 1]) + 1
            spans.append((int(self.offsets[start]), stop))
            start = self.text.find(needle, start + 1)
        return spans


def locate(quote: str, corpus: Corpus) -> list[Span]:
    """Every span of ``corpus`` that equals ``quote`` modulo whitespace and Unicode
    normalisation (both compared in NFC, as ids are: a document saved in NFD on
    macOS holds a quote typed in NFC, and the other way round).

    Examples
    --------
    >>> from hierret.structure.units import Document
    >>> c = Corpus("c", [Document("a", "", "one  two\\nthree"), Document("b", "", "two three")])
    >>> locate("two three", c)
    [('a', 5, 14), ('b', 0, 9)]
    >>> nfd = Corpus("c", [Document("a", "", "un cafe\u0301  au lait")])
    >>> locate("caf\u00e9 au lait", nfd)  # the span covers the e and its accent
    [('a', 3, 17)]
    """
    needle = " ".join(unicodedata.normalize("NFC", quote).split())
    if not needle:
        return []
    spans: list[Span] = []
    for doc in corpus:
        spans.extend((doc.id, s, e) for s, e in _normalised(doc.text).find_all(needle))
    return spans


@lru_cache(maxsize=1024)
def _normalised(text: str) -> _Normalised:
    return _Normalised(text)


def default_gold_path(corpus_name: str = "python-reference") -> Path:
    """The gold file shipped with the repository for ``corpus_name``."""
    here = Path(__file__).resolve()
    for parent in here.parents:
        candidate = parent / "data" / "gold" / f"{corpus_name}.jsonl"
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(
        f"no gold file data/gold/{corpus_name}.jsonl above {here}: run from a checkout of "
        "the hierret repository, or pass the path of your own gold file"
    )


def load_gold(
    path: str | os.PathLike[str], corpus: Corpus, *, min_quote_chars: int = 40
) -> GoldSet:
    """Read a gold file and locate every quote in ``corpus``.

    Parameters
    ----------
    path : path-like
        JSON Lines file of questions.
    corpus : Corpus
        The corpus the quotes were copied from.
    min_quote_chars : int, default 40
        Shorter quotes are rejected: they match too much.

    Returns
    -------
    GoldSet
        Call ``raise_if_failed()`` to stop on any unlocated quote.

    Raises
    ------
    ValueError
        On malformed lines (file and line number), duplicate ids, short quotes.

    Examples
    --------
    >>> from hierret.datasets import load_python_reference
    >>> gold = load_gold(default_gold_path(), load_python_reference())
    >>> gold.failures, len(gold.queries) >= 100
    ([], True)
    """
    queries: list[Query] = []
    kinds: dict[str, str] = {}
    failures: list[str] = []
    file = Path(path)
    for n, line in enumerate(file.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            qid, question, quotes = row["id"], row["question"], row["evidence"]
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise ValueError(
                f"{file}:{n}: expected a JSON object with 'id', 'question', 'evidence' ({exc})"
            ) from None
        if qid in kinds:
            raise ValueError(f"{file}:{n}: duplicate question id {qid!r}")
        if isinstance(quotes, str) or not isinstance(quotes, Sequence) or not quotes:
            raise ValueError(f"{file}:{n}: 'evidence' of {qid} must be a non-empty list of quotes")
        kinds[qid] = str(row.get("kind", ""))
        spans: list[Span] = []
        for quote in quotes:
            if len(" ".join(quote.split())) < min_quote_chars:
                raise ValueError(
                    f"{file}:{n}: a quote of {qid} is shorter than "
                    f"{min_quote_chars} characters: {quote!r}"
                )
            found = locate(quote, corpus)
            if not found:
                failures.append(f"{qid}: quote {quote[:60]!r}... not found in {corpus.name}")
            spans.extend(found)
        if spans:
            queries.append(Query(qid, question, tuple(dict.fromkeys(spans))))
    return GoldSet(queries, kinds, failures)
