"""Documents, sections and passages as spans of one text.

Sections are detected from headings (reStructuredText underlines, Markdown
``#`` headings, numbered headings such as ``3.2 Results``) and nest by
heading level. They are an *overlay*: by default the passages are exactly
those :func:`hierret.structure.chunking.chunk_text` cuts from the whole document, so a
passage may straddle a heading; it is assigned to the section whose own text
holds most of its characters. ``pack_within_sections=True`` packs passages
inside each section instead, so no passage crosses a heading.

A section's *own span* runs from its heading to the next heading of any
level, so the own spans of a document's sections partition its text: this
is the unit the ``sections`` level indexes and the SECTION target judges.
Its *full span* (``start`` to ``end``) also holds its subsections.

Examples
--------
>>> from hierret.structure.units import Corpus, Document
>>> text = "Intro\\n*****\\n\\nHello there.\\n\\nPart\\n====\\n\\nMore text here."
>>> h = build_hierarchy(Corpus("toy", [Document("d", "Intro", text)]), max_chars=40,
...                     overlap_chars=10)
>>> [(s.id, s.path) for s in h.sections["d"]]
[('d#s1', ('Intro',)), ('d#s1.1', ('Intro', 'Part'))]
>>> [(p.id, p.parent) for p in h.passages]
[('d#p0', 'd#s1'), ('d#p1', 'd#s1.1')]
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import hierret._clock as _clock
from hierret.structure.chunking import DEFAULT_MAX_CHARS, DEFAULT_OVERLAP_CHARS, chunk_text
from hierret.structure.units import Corpus, Document, Level, Unit

__all__ = [
    "HEADING_STYLES",
    "Heading",
    "Hierarchy",
    "Section",
    "build_hierarchy",
    "detect_headings",
]

_RST_UNDERLINE = re.compile(r"^([=\-~*^\"#+`:.'_])\1{2,}[ \t\r]*$")
_MARKDOWN = re.compile(r"^(#{1,6})[ \t]+(\S.*?)[ \t#]*$")
_NUMBERED = re.compile(r"^(\d+(?:\.\d+)*)\.?[ \t]+([A-Z][^\n]{0,79})$")


@dataclass(frozen=True)
class Heading:
    """A detected heading: its level (1 = top), title and character span."""

    level: int
    title: str
    start: int
    end: int


@dataclass(frozen=True)
class Section:
    """A section of one document.

    Attributes
    ----------
    id : str
        ``doc#s1.2`` (position in the section tree); ``doc#s0`` is text before
        the first heading; a document without headings has one ``doc#s1``.
    start, own_end, end : int
        Heading start; end of the section's own text (next heading of any
        level); end including subsections.
    depth : int
        1 for top-level sections.
    parent : str or None
        Enclosing section id.
    path : tuple of str
        Heading titles from the top section down to this one.
    """

    id: str
    doc_id: str
    start: int
    own_end: int
    end: int
    depth: int
    parent: str | None
    path: tuple[str, ...]

    @property
    def title(self) -> str:
        """The section's own heading."""
        return self.path[-1]

    def unit(self) -> Unit:
        """The section's own span as a retrievable unit (parent: its document)."""
        return Unit(
            self.id,
            self.doc_id,
            "sections",
            self.start,
            self.own_end,
            self.doc_id,
            " > ".join(self.path),
        )


def _line_spans(text: str) -> list[tuple[int, int]]:
    spans, pos = [], 0
    for line in text.splitlines(keepends=True):
        spans.append((pos, pos + len(line.rstrip("\r\n"))))
        pos += len(line)
    return spans


HEADING_STYLES = ("rst", "markdown", "numbered")


def detect_headings(text: str, styles: Sequence[str] = HEADING_STYLES) -> list[Heading]:
    """Find headings in ``text``.

    ``styles`` selects the heading syntaxes to look for; a corpus built with
    Markdown headings (Qasper, synthetic documents) passes ``("markdown",)`` so
    that a paragraph that happens to start with a number is never a heading.

    reStructuredText: a non-indented line followed by an underline of one
    repeated punctuation character at least as long as the title; levels follow
    the order in which underline characters first appear (``*``, ``=``, ``-``,
    ``~`` in the Python reference). Markdown: ``#`` to ``######``. Numbered:
    ``3.2 Results`` on a line of its own, between blank lines, without
    sentence-ending punctuation; depth = number of components.

    Examples
    --------
    >>> [(h.level, h.title) for h in detect_headings("# A\\n\\ntext\\n\\n## B\\n")]
    [(1, 'A'), (2, 'B')]
    >>> [(h.level, h.title) for h in detect_headings("x\\n\\n2.1 Results\\n\\nmore\\n")]
    [(2, '2.1 Results')]
    """
    unknown = set(styles) - set(HEADING_STYLES)
    if unknown:
        raise ValueError(f"unknown heading styles {sorted(unknown)}: use {HEADING_STYLES}")
    lines = _line_spans(text)
    get = [text[s:e] for s, e in lines]
    rst_order: list[str] = []
    found: list[Heading] = []
    i = 0
    while i < len(lines):
        line = get[i]
        blank_before = i == 0 or not get[i - 1].strip()
        nxt = get[i + 1] if i + 1 < len(lines) else ""
        under = _RST_UNDERLINE.match(nxt)
        if (
            "rst" in styles
            and line.strip()
            and not line[0].isspace()
            and under
            and blank_before
            and len(nxt.rstrip()) >= len(line.rstrip())
        ):
            char = under.group(1)
            if char not in rst_order:
                rst_order.append(char)
            found.append(
                Heading(rst_order.index(char) + 1, line.strip(), lines[i][0], lines[i + 1][1])
            )
            i += 2
            continue
        md = _MARKDOWN.match(line)
        if md and blank_before and "markdown" in styles:
            found.append(Heading(len(md.group(1)), md.group(2), *lines[i]))
        else:
            num = _NUMBERED.match(line)
            blank_after = i + 1 >= len(lines) or not nxt.strip()
            if (
                num
                and blank_before
                and blank_after
                and "numbered" in styles
                and not line.rstrip().endswith((".", ":", ";", ",", "?", "!"))
            ):
                found.append(Heading(num.group(1).count(".") + 1, line.strip(), *lines[i]))
        i += 1
    return found


def _sections_of(doc: Document, styles: Sequence[str]) -> list[Section]:
    text = doc.text
    headings = detect_headings(text, styles)
    sections: list[Section] = []
    first = headings[0].start if headings else len(text)
    if text[:first].strip() or not headings:
        end = first if headings else len(text)
        title = doc.title if not headings else "(preamble)"
        sections.append(
            Section(
                f"{doc.id}#s{0 if headings else 1}",
                doc.id,
                0,
                end,
                end,
                1,
                None,
                (title or doc.id,),
            )
        )
    ends = _section_ends(headings, len(text))
    stack: list[tuple[int, str, tuple[str, ...], list[int]]] = []  # level, id, path, counters
    top_counter = [0]
    for n, h in enumerate(headings):
        while stack and stack[-1][0] >= h.level:
            stack.pop()
        counters = stack[-1][3] if stack else top_counter
        counters[0] += 1
        parent = stack[-1][1] if stack else None
        sid = f"{parent}.{counters[0]}" if parent else f"{doc.id}#s{counters[0]}"
        path = (stack[-1][2] if stack else ()) + (h.title,)
        own_end = headings[n + 1].start if n + 1 < len(headings) else len(text)
        sections.append(Section(sid, doc.id, h.start, own_end, ends[n], len(path), parent, path))
        stack.append((h.level, sid, path, [0]))
    return sections


def _section_ends(headings: Sequence[Heading], length: int) -> list[int]:
    """Where each heading's section ends: at the next heading of its level or above
    (else the text's end). One pass from the end with a stack, so a document of
    ``n`` headings costs ``O(n)``, not ``O(n^2)``."""
    ends = [length] * len(headings)
    stack: list[int] = []  # later headings, levels strictly increasing from the bottom
    for n in range(len(headings) - 1, -1, -1):
        level = headings[n].level
        while stack and headings[stack[-1]].level > level:
            stack.pop()
        if stack:
            ends[n] = headings[stack[-1]].start
        stack.append(n)
    return ends


class _Assigner:
    """:func:`_assign` for the passages of one document, in ``O(log n)`` each: the
    sections' own spans are in text order and do not overlap, so only those next
    to the passage can hold most of it."""

    def __init__(self, sections: list[Section]) -> None:
        self.sections = sections
        self.starts = [sec.start for sec in sections]
        self.own_ends = [sec.own_end for sec in sections]
        self.ordered = all(a <= b for a, b in zip(self.starts, self.starts[1:], strict=False))
        self.ordered &= all(a <= b for a, b in zip(self.own_ends, self.own_ends[1:], strict=False))

    def __call__(self, passage: tuple[int, int]) -> Section:
        if not self.ordered:  # never seen; kept exact all the same
            return _assign(passage, self.sections)
        s, e = passage
        lo = max(bisect.bisect_left(self.own_ends, s) - 1, 0)
        hi = min(bisect.bisect_left(self.starts, e) + 1, len(self.sections))
        return _assign(passage, self.sections[lo:hi])


def _assign(passage: tuple[int, int], sections: list[Section]) -> Section:
    """The section whose own span holds most of the passage (ties: the earlier)."""
    s, e = passage
    return max(sections, key=lambda sec: min(e, sec.own_end) - max(s, sec.start))


@dataclass(frozen=True)
class Hierarchy:
    """A corpus seen at three levels: documents, sections and passages.

    Build it with :func:`build_hierarchy`. ``units(level)`` gives the
    retrievable units of a level; ``parents(level, target)`` maps each unit to
    the unit that holds it at a coarser level, for lifting runs.
    """

    corpus: Corpus
    sections: Mapping[str, list[Section]]
    passages: list[Unit]
    params: Mapping[str, Any] = field(default_factory=dict)

    def units(self, level: Level) -> list[Unit]:
        """Units of ``level`` (``documents``, ``sections`` or ``passages``), in corpus order."""
        if level == "documents":
            return [
                Unit(d.id, d.id, "documents", 0, len(d.text), None, d.title) for d in self.corpus
            ]
        if level == "sections":
            return [s.unit() for d in self.corpus for s in self.sections[d.id]]
        if level == "passages":
            return list(self.passages)
        raise ValueError(f"unknown level {level!r}: use 'documents', 'sections' or 'passages'")

    def parents(self, level: Level, target: Level) -> dict[str, str]:
        """Map each unit id of ``level`` to the id of its holder at ``target``.

        Examples
        --------
        >>> from hierret.datasets import load_python_reference
        >>> h = build_hierarchy(load_python_reference())
        >>> h.parents("passages", "documents")["try#p0"]
        'try'
        """
        if level == target:
            return {u.id: u.id for u in self.units(level)}
        if target == "documents":
            return {u.id: u.doc_id for u in self.units(level)}
        if level == "passages" and target == "sections":
            return {p.id: p.parent or "" for p in self.passages}
        raise ValueError(f"cannot lift {level!r} to {target!r}: lift only to a coarser level")

    def overlapped_sections(self) -> dict[str, tuple[str, ...]]:
        """Map each passage id to every section whose own span it overlaps.

        A passage that straddles a heading overlaps the sections on both sides
        of it; :meth:`parents` keeps only the one holding most of its
        characters (``Unit.parent``), which is always among those given here.
        Fused search lifts passages to sections with this mapping
        (:func:`~hierret.search.lifting.lift_overlapping`), so that a short section
        whose text lies only in passages assigned to a neighbour still gets
        their scores.

        Returns
        -------
        dict[str, tuple[str, ...]]
            Passage id to section ids, in document order (at least one
            character shared with the section's own span; a passage of no
            characters maps to its own section alone).

        Examples
        --------
        >>> from hierret.structure.units import Corpus, Document
        >>> text = "Intro\\n=====\\n\\nHello there.\\n\\nPart\\n====\\n\\nMore text here."
        >>> h = build_hierarchy(Corpus("toy", [Document("d", "D", text)]), max_chars=40,
        ...                     overlap_chars=10)
        >>> [(p.id, p.parent) for p in h.passages]
        [('d#p0', 'd#s1'), ('d#p1', 'd#s2')]
        >>> h.overlapped_sections()
        {'d#p0': ('d#s1', 'd#s2'), 'd#p1': ('d#s2',)}
        """
        out: dict[str, tuple[str, ...]] = {}
        for p in self.passages:
            hit = tuple(
                s.id
                for s in self.sections[p.doc_id]
                if min(p.end, s.own_end) > max(p.start, s.start) or s.id == p.parent
            )
            out[p.id] = hit
        return out

    def text(self, unit: Unit) -> str:
        """The text of ``unit``."""
        return unit.text(self.corpus[unit.doc_id])

    def identity(self) -> dict[str, Any]:
        """Corpus identity plus the chunking parameters, for result records."""
        return {**self.corpus.identity(), **self.params}


def build_hierarchy(
    corpus: Corpus,
    max_chars: int = DEFAULT_MAX_CHARS,
    overlap_chars: int = DEFAULT_OVERLAP_CHARS,
    pack_within_sections: bool = False,
    heading_styles: Sequence[str] = HEADING_STYLES,
) -> Hierarchy:
    """Detect sections and cut passages for every document of ``corpus``.

    Parameters
    ----------
    corpus : Corpus
        The documents.
    max_chars, overlap_chars : int
        Passage size and overlap (see :func:`hierret.structure.chunking.chunk_text`).
    pack_within_sections : bool, default False
        Pack passages inside each section's own span instead of over the whole
        document, so that no passage straddles a heading.
    heading_styles : sequence of str, default ("rst", "markdown", "numbered")
        Which heading syntaxes make sections (see :func:`detect_headings`).

    Returns
    -------
    Hierarchy
        Passage ids are ``doc#p0``, ``doc#p1``, ... in text order.

    Examples
    --------
    >>> from hierret.datasets import load_python_reference
    >>> h = build_hierarchy(load_python_reference())
    >>> h.sections["try"][0].title
    'The "try" statement'
    """
    with _clock.stage("chunk"):
        return _build(corpus, max_chars, overlap_chars, pack_within_sections, heading_styles)


def _build(
    corpus: Corpus,
    max_chars: int,
    overlap_chars: int,
    pack_within_sections: bool,
    heading_styles: Sequence[str],
) -> Hierarchy:
    sections: dict[str, list[Section]] = {}
    passages: list[Unit] = []
    for doc in corpus:
        secs = _sections_of(doc, heading_styles)
        sections[doc.id] = secs
        if pack_within_sections:
            spans = [
                (sec.start + a, sec.start + b)
                for sec in secs
                for a, b in chunk_text(doc.text[sec.start : sec.own_end], max_chars, overlap_chars)
            ]
        else:
            spans = chunk_text(doc.text, max_chars, overlap_chars)
        assign = _Assigner(secs)
        for n, span in enumerate(spans):
            owner = assign(span)
            passages.append(Unit(f"{doc.id}#p{n}", doc.id, "passages", span[0], span[1], owner.id))
    params = {
        "max_chars": max_chars,
        "overlap_chars": overlap_chars,
        "pack_within_sections": pack_within_sections,
        "heading_styles": ",".join(heading_styles),
    }
    return Hierarchy(corpus, sections, passages, params)
