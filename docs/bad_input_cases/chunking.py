"""Hostile-but-honest inputs to the chunker, and what it does with them.

``CASES`` is a list of ``(input, call)``: a short description of the input and a
zero-argument function that runs :mod:`hierret.chunking` on it and returns a
short description of the outcome, or raises the package's error.
"""

from __future__ import annotations

from collections.abc import Callable

from hierret.chunking import chunk_text, split_sentences

_CJK = "检索长文档中的结构化信息需要可靠的分块方法"


def _passages(text: str, max_chars: int = 900, overlap_chars: int = 180) -> str:
    spans = chunk_text(text, max_chars, overlap_chars)
    if not spans:
        return "no passages"
    return f"{len(spans)} passages, longest {max(e - s for s, e in spans)} characters"


def _lines(text: str) -> str:
    spans = split_sentences(text)
    return f"{len(spans)} sentences: " + " | ".join(repr(text[s:e]) for s, e in spans)


CASES: list[tuple[str, Callable[[], object]]] = [
    ("105,000 characters of Chinese without spaces or stops, max_chars=900",
     lambda: _passages((_CJK * 5000)[:105_000])),
    ("105,000 characters of Chinese without spaces, a 。 every 21 characters, max_chars=900",
     lambda: _passages(((_CJK + "。") * 5000)[:105_000])),
    ("Lines separated by CR only ('\\r'), one blank line",
     lambda: _lines("Title\r\rFirst line\rsecond line. Next.")),
    ("Lines separated by U+2028 LINE SEPARATOR, one blank line",
     lambda: _lines("Title\u2028\u2028First line\u2028second line. Next.")),
    ("A 200 kB line of words without a sentence stop, max_chars=900",
     lambda: _passages("word " * 40_000)),
    ("A 200 kB token without whitespace ('x' * 200,000), max_chars=900",
     lambda: _passages("x" * 200_000)),
    ("100 kB of 'e.g. ' (20,000 abbreviations, no sentence end)",
     lambda: _passages("e.g. " * 20_000)),
    ("Text given as bytes (b'Some text.')",
     lambda: _passages(b"Some text.")),  # type: ignore[arg-type]
    ("overlap_chars=900 >= max_chars=900",
     lambda: _passages("Some text.", 900, 900)),
    ("max_chars=0", lambda: _passages("Some text.", 0, 0)),
    ("max_chars=-5", lambda: _passages("Some text.", -5, 0)),
    ("Empty text ''", lambda: _passages("")),
    ("Whitespace only (spaces, tabs, CR, LF, U+2028, U+3000)",
     lambda: _passages(" \t\r\n\u2028\u3000 ")),
]
