"""Hostile-but-honest inputs to the chunker, and what it does with them.

Each case runs :mod:`hierret.structure.chunking` on one text. Where it may answer, the
checks are the chunker's promises on every text: no passage is longer than
``max_chars``; every character that is not white space is in some passage
(text left out of every passage would be lost to the index); and a line break
written as CR, U+2028 or NEL splits sentences exactly as ``"\\n"`` does.
"""

from __future__ import annotations

from bad_input_cases import Case, Check, Facts, kept, right
from hierret.structure.chunking import chunk_text, split_sentences

_CJK = "检索长文档中的结构化信息需要可靠的分块方法"


def _passages(text: str, max_chars: int = 900, overlap_chars: int = 180) -> Facts:
    spans = chunk_text(text, max_chars, overlap_chars)
    covered = bytearray(len(text))
    for s, e in spans:
        covered[s:e] = b"\x01" * (e - s)
    dropped = sum(1 for i, c in enumerate(text) if not c.isspace() and not covered[i])
    longest = max((e - s for s, e in spans), default=0)
    said = f"{len(spans)} passages, longest {longest} characters" if spans else "no passages"
    return Facts(said, n=len(spans), longest=longest, max_chars=max_chars, dropped=dropped)


def _fits(max_chars: int = 900) -> Check:
    return right(f"every passage ≤ {max_chars} characters", lambda f: f.longest <= f.max_chars)


_ALL_TEXT = kept("every non-space character is in a passage", lambda f: f.dropped == 0)


def _none() -> Check:
    return right("no passages (there is no text)", lambda f: f.n == 0)


def _lines(text: str, brk: str) -> Facts:
    spans = split_sentences(text)
    same = spans == split_sentences(text.replace(brk, "\n"))
    said = f"{len(spans)} sentences: " + " | ".join(repr(text[s:e]) for s, e in spans)
    return Facts(said, n=len(spans), same=same)


_LIKE_NEWLINE = right(
    "the same 3 sentences as with '\\n' line breaks", lambda f: f.same and f.n == 3
)

CASES: list[Case] = [
    (
        "105,000 characters of Chinese without spaces or stops, max_chars=900",
        lambda: _passages((_CJK * 5000)[:105_000]),
        (_fits(), _ALL_TEXT),
    ),
    (
        "105,000 characters of Chinese without spaces, a 。 every 21 characters, max_chars=900",
        lambda: _passages(((_CJK + "。") * 5000)[:105_000]),
        (_fits(), _ALL_TEXT),
    ),
    (
        "Lines separated by CR only ('\\r'), one blank line",
        lambda: _lines("Title\r\rFirst line\rsecond line. Next.", "\r"),
        _LIKE_NEWLINE,
    ),
    (
        "Lines separated by U+2028 LINE SEPARATOR, one blank line",
        lambda: _lines("Title\u2028\u2028First line\u2028second line. Next.", "\u2028"),
        _LIKE_NEWLINE,
    ),
    (
        "Lines separated by U+0085 NEXT LINE (NEL, old mainframe text), one blank line",
        lambda: _lines("Title\x85\x85First line\x85second line. Next.", "\x85"),
        _LIKE_NEWLINE,
    ),
    (
        "CR-only line breaks in a 3,000-line text, max_chars=300",
        lambda: _passages("A line of an old Mac file, no stop\r" * 3000, 300, 60),
        (_fits(300), _ALL_TEXT),
    ),
    (
        "A 200 kB line of words without a sentence stop, max_chars=900",
        lambda: _passages("word " * 40_000),
        (_fits(), _ALL_TEXT),
    ),
    (
        "A 200 kB token without whitespace ('x' * 200,000), max_chars=900",
        lambda: _passages("x" * 200_000),
        (_fits(), _ALL_TEXT),
    ),
    (
        "100 kB of 'e.g. ' (20,000 abbreviations, no sentence end)",
        lambda: _passages("e.g. " * 20_000),
        (_fits(), _ALL_TEXT),
    ),
    (
        "Mixed scripts without spaces: Thai, Devanagari (। stops), Arabic (؟), emoji, max_chars=50",
        lambda: _passages("สวัสดีครับ" * 30 + "नमस्ते।" * 20 + "مرحبا؟" * 20 + "🙂" * 80, 50, 10),
        (_fits(50), _ALL_TEXT),
    ),
    ("Text given as bytes (b'Some text.')", lambda: _passages(b"Some text.")),  # type: ignore[arg-type]
    ("overlap_chars=900 >= max_chars=900", lambda: _passages("Some text.", 900, 900)),
    ("max_chars=0", lambda: _passages("Some text.", 0, 0)),
    ("max_chars=-5", lambda: _passages("Some text.", -5, 0)),
    ("Empty text ''", lambda: _passages(""), _none()),
    (
        "Whitespace only (spaces, tabs, CR, LF, U+2028, U+3000)",
        lambda: _passages(" \t\r\n\u2028\u3000 "),
        _none(),
    ),
]
