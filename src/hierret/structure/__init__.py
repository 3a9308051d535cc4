"""Structure: documents, sections and passages, the units every search ranks.

A corpus (:class:`Corpus`) holds documents (:class:`Document`) and is searched
with questions (:class:`Query`); :func:`build_hierarchy` reads each document's
headings (:func:`detect_headings`) into sections (:class:`Section`) and cuts
each section into sentence-aware passages (:func:`chunk_text`), giving one
:class:`Hierarchy` of units (:class:`Unit`) at every level. Where its parts live:
``units`` (the value types: corpus, document, unit, question), ``chunking``
(sentences packed into passages) and ``hierarchy`` (headings, sections, the
hierarchy of units). Each name loads its module on first use (PEP 562).

Examples
--------
>>> from hierret.structure import Corpus, Document, build_hierarchy
>>> text = "Cats\\n====\\n\\nCats purr.\\n\\nDogs\\n====\\n\\nDogs bark.\\n"
>>> hierarchy = build_hierarchy(Corpus("pets", [Document("d", "Pets", text)]))
>>> [unit.id for unit in hierarchy.units("sections")]
['d#s1', 'd#s2']
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import hierret._face as _face

if TYPE_CHECKING:
    from hierret.structure.chunking import (
        DEFAULT_ABBREVIATIONS,
        DEFAULT_MAX_CHARS,
        DEFAULT_OVERLAP_CHARS,
        SentenceSplitter,
        chunk_text,
        pack_sentences,
        split_sentences,
    )
    from hierret.structure.hierarchy import (
        HEADING_STYLES,
        Heading,
        Hierarchy,
        Section,
        build_hierarchy,
        detect_headings,
    )
    from hierret.structure.units import Corpus, Document, Level, Query, Span, Unit

#: Each public name and the module that defines it; a name's module loads on first use.
_FACE = {
    "Corpus": "hierret.structure.units",
    "Document": "hierret.structure.units",
    "Level": "hierret.structure.units",
    "Query": "hierret.structure.units",
    "Span": "hierret.structure.units",
    "Unit": "hierret.structure.units",
    "DEFAULT_ABBREVIATIONS": "hierret.structure.chunking",
    "DEFAULT_MAX_CHARS": "hierret.structure.chunking",
    "DEFAULT_OVERLAP_CHARS": "hierret.structure.chunking",
    "SentenceSplitter": "hierret.structure.chunking",
    "chunk_text": "hierret.structure.chunking",
    "pack_sentences": "hierret.structure.chunking",
    "split_sentences": "hierret.structure.chunking",
    "HEADING_STYLES": "hierret.structure.hierarchy",
    "Heading": "hierret.structure.hierarchy",
    "Hierarchy": "hierret.structure.hierarchy",
    "Section": "hierret.structure.hierarchy",
    "build_hierarchy": "hierret.structure.hierarchy",
    "detect_headings": "hierret.structure.hierarchy",
}

__all__ = [
    "DEFAULT_ABBREVIATIONS",
    "DEFAULT_MAX_CHARS",
    "DEFAULT_OVERLAP_CHARS",
    "HEADING_STYLES",
    "Corpus",
    "Document",
    "Heading",
    "Hierarchy",
    "Level",
    "Query",
    "Section",
    "SentenceSplitter",
    "Span",
    "Unit",
    "build_hierarchy",
    "chunk_text",
    "detect_headings",
    "pack_sentences",
    "split_sentences",
]

if not TYPE_CHECKING:  # mypy reads the imports above, so a misspelt name stays an error
    __getattr__, __dir__ = _face.lazy(__name__, _FACE)
