"""What the ``hierret`` command line prints: data made safe for a terminal, and hits.

Private to :mod:`hierret.cli`, whose face lists the public names.
"""

from __future__ import annotations

import re

from hierret.search.hits import Hit

__all__ = ["format_hit", "printable"]


# What a terminal would act on instead of showing: C0 controls (ESC starts the escape
# sequences that clear the screen, move the cursor or retitle the window; CR and BS
# overwrite what is printed), DEL, C1 controls (U+009B is a one-character CSI), the line
# and paragraph separators, the bidirectional embeddings, overrides and isolates (they
# reorder the text shown after them) and lone surrogates (they cannot be written as
# UTF-8 at all). Newline and tab are kept only where a field may span lines.
_UNSAFE = r"\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff"
_UNSAFE_IN_LINE = re.compile(rf"[\t\n{_UNSAFE}]")
_UNSAFE_IN_LINES = re.compile(rf"[{_UNSAFE}]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def printable(text: str, *, lines: bool = False) -> str:
    r"""``text`` safe to print on a terminal: every control character shown, none obeyed.

    Everything the command line prints that comes from data (document and unit
    ids, titles and section paths, snippets, corpus and encoder names, error
    messages quoting them) goes through this function, so a corpus cannot clear
    the screen, move the cursor, rewrite a line already printed, retitle the
    window or reorder the text shown. Each such character is written as its
    Python escape (``\x1b``, ``\x9b``, ``\u202e``); other text, any script and
    emoji included, is unchanged.

    Parameters
    ----------
    text : str
        What to print.
    lines : bool, default False
        Keep newlines and tabs (a message of several lines); otherwise they are
        escaped too, so a field stays on its line.

    Returns
    -------
    str

    Examples
    --------
    >>> print(printable("Cats \x1b[2J\x1b]0;owned\x07"))
    Cats \x1b[2J\x1b]0;owned\x07
    >>> print(printable("done\r\x1b[1A\x1b[2Kfake line"))
    done\x0d\x1b[1A\x1b[2Kfake line
    >>> print(printable("abc\u202edef \x9b31m \x7f"))
    abc\u202edef \x9b31m \x7f
    >>> print(printable("Café — naïve 猫 😀 (tab\there)"))
    Café — naïve 猫 😀 (tab\x09here)
    >>> print(printable("two\nlines", lines=True))
    two
    lines
    >>> printable("one\nline")
    'one\\x0aline'
    """
    pattern = _UNSAFE_IN_LINES if lines else _UNSAFE_IN_LINE
    return pattern.sub(_escape, text)


def format_hit(hit: Hit, snippet_chars: int = 100) -> str:
    r"""Two lines for one hit: rank, score, id, span, section path; then the snippet.

    The id, path and snippet come from the corpus: each is printed through
    :func:`printable`, so control characters in them are shown, not obeyed.

    Examples
    --------
    >>> h = Hit(1, "try#s1", 0.8123, "fused", "try", 'The "try" statement', 0, 1562, "Text.")
    >>> print(format_hit(h))
     1  0.8123  try#s1  [0, 1562)  The "try" statement
        Text.
    >>> h = Hit(1, "c\x1b[2J#s1", 0.5, "sections", "c", "Cats\x1b]0;x\x07", 0, 9, "\x1b[1A")
    >>> print(format_hit(h))
     1  0.5000  c\x1b[2J#s1  [0, 9)  Cats\x1b]0;x\x07
        \x1b[1A
    """
    unit_id, path = printable(hit.unit_id), printable(hit.path)
    line = f"{hit.rank:2d}  {hit.score:.4f}  {unit_id}  [{hit.start}, {hit.end})  {path}"
    if snippet_chars <= 0 or not hit.snippet:
        return line
    text = hit.snippet
    if len(text) > snippet_chars:
        cut = text[: snippet_chars - 1]
        text = (cut.rsplit(" ", 1)[0] if " " in cut else cut) + "…"
    return f"{line}\n    {printable(text)}"
