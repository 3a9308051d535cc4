"""What a file that is not UTF-8 most likely is, and the command that converts it.

The loaders read UTF-8 only. When a file is not UTF-8, the fix an error names
must be right for the bytes it saw: ``iconv -f latin1`` turns a UTF-16 file
into NUL-separated garbage that then loads without a word. :func:`guess`
names the encoding found (a byte-order mark first, then the pattern of NUL
bytes UTF-16 and UTF-32 text leaves, then the statistical guess of
`charset-normalizer <https://github.com/jawah/charset_normalizer>`_ over the
first 64 KiB), and :func:`not_utf8` writes the sentence an error gives: the
encoding, how sure that is, and the ``iconv`` command for it (or, for bytes
that are no text in any encoding tried, to move the file away).

Examples
--------
>>> guess("Grüße".encode("utf-16"))
('UTF-16', 'a UTF-16 byte-order mark')
>>> guess("plain ascii text, long enough to see the pattern".encode("utf-16-be"))
('UTF-16BE', 'NUL bytes at every other position')
>>> guess("Les élèves préfèrent « les cafés » à l'école, naïvement.".encode("cp1252"))[0]
'CP1252'
>>> guess(bytes(range(256)) * 4)
(None, 'no text encoding fits')
"""

from __future__ import annotations

import codecs
import shlex
from pathlib import Path

__all__ = ["guess", "not_utf8"]

# Longest first: a UTF-32LE mark starts with the UTF-16LE one.
_BOMS = (
    (codecs.BOM_UTF32_LE, "UTF-32"),
    (codecs.BOM_UTF32_BE, "UTF-32"),
    (codecs.BOM_UTF16_LE, "UTF-16"),
    (codecs.BOM_UTF16_BE, "UTF-16"),
)
_SAMPLE = 1 << 16
#: Among encodings that fit the bytes equally well, the commonest for documents first.
_PREFERRED = ("cp1252", "latin_1", "cp1251", "shift_jis", "cp932", "gb18030", "big5", "euc_kr")


def _iconv_name(codec: str) -> str:
    """iconv's name for a Python codec name (``cp1252`` -> ``CP1252``,
    ``shift_jis`` -> ``SHIFT_JIS``, ``utf_16_le`` -> ``UTF-16LE``)."""
    name = codecs.lookup(codec).name  # canonical: 'cp1252', 'shift_jis', 'iso8859-1', ...
    special = {"utf-16-le": "UTF-16LE", "utf-16-be": "UTF-16BE", "utf-32-le": "UTF-32LE"}
    special |= {"utf-32-be": "UTF-32BE", "shift_jis": "SHIFT_JIS", "latin-1": "ISO-8859-1"}
    if name in special:
        return special[name]
    if name.startswith("iso8859-"):
        return "ISO-8859-" + name.removeprefix("iso8859-")
    return name.upper().replace("_", "-")


def guess(raw: bytes) -> tuple[str | None, str]:
    """(iconv name of the encoding ``raw`` most likely is, or ``None``; how it was told).

    Parameters
    ----------
    raw : bytes
        The file's bytes (only the first 64 KiB are looked at).
    """
    for bom, name in _BOMS:
        if raw.startswith(bom):
            return name, f"a {name} byte-order mark"
    sample = raw[:_SAMPLE]
    sample = sample[: len(sample) // 4 * 4]
    if sample and sample.count(0) >= len(sample) // 4:
        for name, zeros, width in (
            ("UTF-32LE", (1, 2, 3), 4),
            ("UTF-32BE", (0, 1, 2), 4),
            ("UTF-16LE", (1,), 2),
            ("UTF-16BE", (0,), 2),
        ):
            lanes = [sample[i::width] for i in zeros]
            if all(lane.count(0) >= 0.9 * len(lane) for lane in lanes):
                return name, (
                    "NUL bytes at every other position"
                    if width == 2
                    else "three NUL bytes in every four"
                )
    from charset_normalizer import from_bytes

    matches = list(from_bytes(sample))
    if not matches:
        return None, "no text encoding fits"
    best = matches[0]
    close = [
        m for m in matches if m.chaos <= best.chaos + 0.01 and m.coherence >= best.coherence - 0.02
    ]
    fits = {e for m in close for e in m.could_be_from_charset}  # same decoded text, or as good
    pick = next((e for e in _PREFERRED if e in fits), best.encoding)  # the commonest first
    others = [_iconv_name(m.encoding) for m in close if pick not in m.could_be_from_charset][:3]
    how = "a statistical guess (charset-normalizer)"
    if others:
        how += f"; {', '.join(others)} fit the bytes as well"
    return _iconv_name(pick), how


def not_utf8(raw: bytes, file: Path | str, what: str) -> str:
    """The sentence an error gives for a file that is not UTF-8: what it most
    likely is, and the fix right for that (never a conversion that garbles it).

    Parameters
    ----------
    raw : bytes
        The file's bytes.
    file : path
        The file, for the command.
    what : str
        What must be UTF-8 (e.g. ``"documents and questions.jsonl"``).

    Examples
    --------
    >>> print(not_utf8("# Notes".encode("utf-16"), "notes.md", "documents"))
    ... # doctest: +NORMALIZE_WHITESPACE
    it is UTF-16 (found: a UTF-16 byte-order mark); documents must be UTF-8: convert it
    with iconv -f UTF-16 -t UTF-8 notes.md > notes.md.utf8 && mv notes.md.utf8 notes.md
    """
    name, how = guess(raw)
    if name is None:
        return (
            f"it is not text in any encoding tried ({how}: a binary file, e.g. a PDF or an "
            f"image, given a text suffix?); {what} must be UTF-8 text: move it out of the "
            "folder, or convert it to text first"
        )
    quoted = shlex.quote(str(file))
    tmp = shlex.quote(f"{file}.utf8")
    sure = "it is" if "guess" not in how else "it is most likely"
    check = "" if "guess" not in how else " (a guess: read the converted file before using it)"
    return (
        f"{sure} {name} (found: {how}); {what} must be UTF-8: convert it with "
        f"iconv -f {name} -t UTF-8 {quoted} > {tmp} && mv {tmp} {quoted}{check}"
    )
