"""Gold questions with verbatim evidence quotes, located in a corpus.

A gold file is JSON Lines: ``{"id", "question", "evidence": [quote, ...],
"kind", "topic"}``. Each quote is searched in every document modulo
whitespace (the corpus wraps lines mid-sentence), and *every* occurrence
becomes an evidence span: an answer quoted from one topic that a
near-duplicate topic also holds is evidence in both. A quote found nowhere is
a coverage failure reported with its question id.

The labels of ``data/gold/python-reference.jsonl`` were drafted by this
project and are provisional.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from hierret.units import Corpus, Query, Span

__all__ = ["GoldSet", "default_gold_path", "load_gold", "locate"]

_WS = re.compile(r"\s+")


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


class _Normalised:
    """A document's text with whitespace runs collapsed, and a map back to offsets."""

    def __init__(self, text: str) -> None:
        parts: list[str] = []
        self.offsets: list[int] = []
        pos = 0
        for m in _WS.finditer(text):
            parts.append(text[pos : m.start()])
            self.offsets.extend(range(pos, m.start()))
            parts.append(" ")
            self.offsets.append(m.start())
            pos = m.end()
        parts.append(text[pos:])
        self.offsets.extend(range(pos, len(text)))
        self.offsets.append(len(text))
        self.text = "".join(parts)

    def find_all(self, needle: str) -> list[tuple[int, int]]:
        spans, start = [], self.text.find(needle)
        while start >= 0:
            end = start + len(needle)
            spans.append((self.offsets[start], self.offsets[end - 1] + 1))
            start = self.text.find(needle, start + 1)
        return spans


def locate(quote: str, corpus: Corpus) -> list[Span]:
    """Every span of ``corpus`` that equals ``quote`` modulo whitespace.

    Examples
    --------
    >>> from hierret.units import Document
    >>> c = Corpus("c", [Document("a", "", "one  two\\nthree"), Document("b", "", "two three")])
    >>> locate("two three", c)
    [('a', 5, 14), ('b', 0, 9)]
    """
    needle = " ".join(quote.split())
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
