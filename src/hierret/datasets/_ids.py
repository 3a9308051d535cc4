"""The one rule for ids read from data files: NFC, no surrounding whitespace, no BOM.

Two files of one dataset often come from different tools: a corpus written on
macOS names ``café`` in NFD (``e`` + combining accent), the qrels typed by hand
write it in NFC; a spreadsheet pads ``"d1 "``; an editor starts a TSV with a
byte-order mark. Every loader passes every id it reads (documents, queries,
judgments, relevant ids) through :func:`clean_id`, so such ids match on both
sides instead of dropping the judgments that join them. Two ids that become
one under this rule are a duplicate, an error.

Examples
--------
>>> clean_id(" caf\\u0065\\u0301 ") == "caf\\u00e9"
True
>>> clean_id("\\ufeffq1")
'q1'
"""

from __future__ import annotations

import unicodedata

__all__ = ["BOM", "clean_id", "shown_id"]

#: The UTF-8 byte-order mark, as a decoded character.
BOM = "\ufeff"


def clean_id(raw: str) -> str:
    """``raw`` without a leading BOM or surrounding whitespace, in Unicode NFC.

    Examples
    --------
    >>> clean_id("  d1\\t")
    'd1'
    """
    return unicodedata.normalize("NFC", raw.removeprefix(BOM).strip())


def shown_id(raw: str) -> str:
    """An id as a message shows it: its ``ascii()`` form when it holds anything but
    printable ASCII, so two ids that look alike on screen are told apart.

    Examples
    --------
    >>> shown_id("d1"), shown_id("\\ufeffq1")
    ("'d1'", "'\\\\ufeffq1'")
    """
    return ascii(raw)
