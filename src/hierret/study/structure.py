"""What a hierarchy looks like: its sizes, a section tree, straddling and overlapping passages.

The structure notebook teaches the document → section → passage hierarchy
with these views of one :class:`~hierret.structure.hierarchy.Hierarchy`: the corpus in
numbers (:func:`summary`, :func:`document_sizes`), one document's section
tree (:func:`section_tree`), the passages whose text crosses a heading
(:func:`straddling`), two consecutive passages with their shared text marked
(:func:`overlapping_pair`, :func:`side_by_side`); a length distribution
against a limit is drawn by :func:`hierret.publish.charts.length_histogram`.

Examples
--------
>>> from hierret.structure.hierarchy import build_hierarchy
>>> from hierret.structure.units import Corpus, Document
>>> text = "Cats\\n====\\n\\nCats purr. Cats nap.\\n\\nDogs\\n====\\n\\nDogs bark.\\n"
>>> h = build_hierarchy(Corpus("pets", [Document("d", "Pets", text)]), max_chars=30,
...                     overlap_chars=10)
>>> summary(h)
{'n_documents': 1, 'n_chars': 55, 'n_sections': 2, 'max_depth': 1, 'n_passages': 4, \
'mean_passage_chars': 20.5}
>>> print(section_tree(h, "d"))
Cats   [d#s1, chars 0–33, 3 passages]
Dogs   [d#s2, chars 33–55, 1 passage]
>>> [(p.id, h.text(p)) for p in straddling(h)]
[('d#p2', 'Cats nap.\\n\\nDogs\\n====')]
>>> [p.id for p in overlapping_pair(h, "d")]
['d#p0', 'd#p1']
"""

from __future__ import annotations

import html
import itertools
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from hierret.structure.hierarchy import Hierarchy
from hierret.structure.units import Unit

if TYPE_CHECKING:
    from hierret.publish.figures import Figure

__all__ = [
    "Structure",
    "document_sizes",
    "overlapping_pair",
    "section_tree",
    "side_by_side",
    "straddling",
    "summary",
]


def summary(hierarchy: Hierarchy) -> dict[str, int | float]:
    """The corpus in numbers: documents, characters, sections, heading depth, passages.

    Parameters
    ----------
    hierarchy : Hierarchy

    Returns
    -------
    dict
        ``n_documents``, ``n_chars``, ``n_sections``, ``max_depth`` (the
        deepest heading level, 0 without sections), ``n_passages`` and
        ``mean_passage_chars`` (0.0 without passages).

    Examples
    --------
    >>> from hierret.structure.hierarchy import build_hierarchy
    >>> from hierret.structure.units import Corpus, Document
    >>> h = build_hierarchy(Corpus("t", [Document("d", "D", "One. Two.")]), 6, 0)
    >>> summary(h)["n_passages"], summary(h)["mean_passage_chars"]
    (2, 4.0)
    """
    sections = [s for secs in hierarchy.sections.values() for s in secs]
    lengths = [len(p) for p in hierarchy.passages]
    return {
        "n_documents": len(hierarchy.corpus),
        "n_chars": hierarchy.corpus.n_chars,
        "n_sections": len(sections),
        "max_depth": max((s.depth for s in sections), default=0),
        "n_passages": len(lengths),
        "mean_passage_chars": float(np.mean(lengths)) if lengths else 0.0,
    }


def document_sizes(hierarchy: Hierarchy) -> pd.DataFrame:
    """Characters, sections and passages of each document, longest first.

    Parameters
    ----------
    hierarchy : Hierarchy

    Returns
    -------
    DataFrame
        Indexed by document id (``document``), columns ``characters``,
        ``sections`` and ``passages``; ties keep corpus order.

    Examples
    --------
    >>> from hierret.structure.hierarchy import build_hierarchy
    >>> from hierret.structure.units import Corpus, Document
    >>> docs = [Document("a", "A", "Short."), Document("b", "B", "Longer one. Two.")]
    >>> document_sizes(build_hierarchy(Corpus("t", docs), 12, 0)).to_dict("index")
    {'b': {'characters': 16, 'sections': 1, 'passages': 2}, \
'a': {'characters': 6, 'sections': 1, 'passages': 1}}
    """
    passages = Counter(p.doc_id for p in hierarchy.passages)
    docs = list(hierarchy.corpus)
    table = pd.DataFrame(
        {
            "characters": [len(d.text) for d in docs],
            "sections": [len(hierarchy.sections[d.id]) for d in docs],
            "passages": [passages[d.id] for d in docs],
        },
        index=pd.Index([d.id for d in docs], name="document"),
    )
    return table.sort_values("characters", ascending=False, kind="stable")


def section_tree(hierarchy: Hierarchy, doc_id: str) -> str:
    """One document's sections as an indented tree, with spans and passage counts.

    Each line is a section's title, indented four spaces per level below the
    top, then its id, its own span (heading to the next heading of any level)
    and the number of passages assigned to it.

    Parameters
    ----------
    hierarchy : Hierarchy
    doc_id : str
        A document of ``hierarchy``'s corpus.

    Raises
    ------
    KeyError
        ``doc_id`` is not a document of the corpus.

    Examples
    --------
    >>> from hierret.structure.hierarchy import build_hierarchy
    >>> from hierret.structure.units import Corpus, Document
    >>> text = "Top\\n***\\n\\nIntro.\\n\\nPart\\n====\\n\\nMore.\\n"
    >>> h = build_hierarchy(Corpus("t", [Document("d", "D", text)]), 40, 0)
    >>> print(section_tree(h, "d"))
    Top   [d#s1, chars 0–17, 1 passage]
        Part   [d#s1.1, chars 17–34, 0 passages]
    """
    hierarchy.corpus[doc_id]  # a clear KeyError for an unknown document
    counts = Counter(p.parent for p in hierarchy.passages if p.doc_id == doc_id)
    lines = []
    for s in hierarchy.sections[doc_id]:
        n = counts[s.id]
        lines.append(
            f"{'    ' * (s.depth - 1)}{s.title}   [{s.id}, chars {s.start}–"
            f"{s.own_end}, {n} passage{'s' if n != 1 else ''}]"
        )
    return "\n".join(lines)


def straddling(hierarchy: Hierarchy) -> list[Unit]:
    """The passages whose text lies in the own spans of two or more sections.

    A passage straddles a heading when more than one section's own span holds
    some of its non-blank text (white space alone between a heading and the
    passage's end does not count).

    Parameters
    ----------
    hierarchy : Hierarchy

    Returns
    -------
    list of Unit
        In passage order.

    Examples
    --------
    >>> from hierret.structure.hierarchy import build_hierarchy
    >>> from hierret.structure.units import Corpus, Document
    >>> text = "A\\n===\\n\\nOne.\\n\\nB\\n===\\n\\nTwo.\\n"
    >>> corpus = Corpus("t", [Document("d", "D", text)])
    >>> [p.id for p in straddling(build_hierarchy(corpus, 40, 0))]
    ['d#p0']
    >>> straddling(build_hierarchy(corpus, 40, 0, pack_within_sections=True))
    []
    """
    out = []
    for p in hierarchy.passages:
        text = hierarchy.corpus[p.doc_id].text
        touched = sum(
            bool(text[max(p.start, s.start) : min(p.end, s.own_end)].strip())
            for s in hierarchy.sections[p.doc_id]
        )
        if touched > 1:
            out.append(p)
    return out


def overlapping_pair(hierarchy: Hierarchy, doc_id: str) -> tuple[Unit, Unit]:
    """The first two consecutive passages of a document that share text.

    Parameters
    ----------
    hierarchy : Hierarchy
    doc_id : str
        A document of ``hierarchy``'s corpus with at least one passage.

    Returns
    -------
    tuple of Unit
        The first consecutive pair that overlaps; without one, the first two
        passages (the first twice for a one-passage document).

    Raises
    ------
    ValueError
        The document has no passages.

    Examples
    --------
    >>> from hierret.structure.hierarchy import build_hierarchy
    >>> from hierret.structure.units import Corpus, Document
    >>> text = "Cats purr. Cats nap. Cats eat."
    >>> h = build_hierarchy(Corpus("t", [Document("d", "D", text)]), 20, 10)
    >>> [h.text(p) for p in overlapping_pair(h, "d")]
    ['Cats purr. Cats nap.', 'Cats nap. Cats eat.']
    """
    passages = [p for p in hierarchy.passages if p.doc_id == doc_id]
    if not passages:
        raise ValueError(f"document {doc_id!r} has no passages in this hierarchy")
    pairs = itertools.pairwise(passages)
    return next(
        ((a, b) for a, b in pairs if b.start < a.end),
        (passages[0], passages[min(1, len(passages) - 1)]),
    )


def side_by_side(hierarchy: Hierarchy, a: Unit, b: Unit) -> str:
    """HTML showing two passages of one document side by side, their shared text marked.

    The shared span runs from ``b.start`` to the end of the first one to end;
    a heading line per passage gives its id, span and section, and the number
    of shared characters.

    Parameters
    ----------
    hierarchy : Hierarchy
    a, b : Unit
        Passages of the same document, ``a`` first (as :func:`overlapping_pair`
        returns them).

    Returns
    -------
    str
        An HTML fragment (display it with ``IPython.display.HTML``).

    Examples
    --------
    >>> from hierret.structure.hierarchy import build_hierarchy
    >>> from hierret.structure.units import Corpus, Document
    >>> text = "Cats purr. Cats nap. Cats eat."
    >>> h = build_hierarchy(Corpus("t", [Document("d", "D", text)]), 20, 10)
    >>> page = side_by_side(h, *overlapping_pair(h, "d"))
    >>> page.count("<mark>Cats nap.</mark>"), "9 characters" in page
    (2, True)
    """
    text = hierarchy.corpus[a.doc_id].text
    lo, hi = b.start, min(a.end, b.end)
    shared = max(0, hi - lo)

    def panel(p: Unit) -> str:
        mark_lo, mark_hi = min(max(lo, p.start), p.end), max(min(hi, p.end), p.start)
        body = (
            html.escape(text[p.start : mark_lo])
            + "<mark>"
            + html.escape(text[mark_lo:mark_hi])
            + "</mark>"
            + html.escape(text[mark_hi : p.end])
        )
        return (
            f"<div style='flex:1;min-width:0'><b>{p.id}</b> span ({p.start}, {p.end}), "
            f"section <code>{html.escape(p.parent or '')}</code>"
            f"<pre style='white-space:pre-wrap;font-size:80%'>{body}</pre></div>"
        )

    return (
        f"<p>shared by the two passages: {shared} characters</p>"
        f"<div style='display:flex;gap:1em'>{panel(a)}{panel(b)}</div>"
    )


class Structure:
    """One corpus's hierarchy as the structure tour shows it: one object, its views.

    The views are this module's functions of one hierarchy; :meth:`values` is what
    the structure record keeps of it, :meth:`table` its longest documents and
    :meth:`plot` a length distribution against a limit.

    Parameters
    ----------
    hierarchy : Hierarchy
        The corpus's document → section → passage hierarchy.

    Examples
    --------
    >>> from hierret.structure.hierarchy import build_hierarchy
    >>> from hierret.structure.units import Corpus, Document
    >>> text = "Cats\\n====\\n\\nCats purr. Cats nap.\\n\\nDogs\\n====\\n\\nDogs bark.\\n"
    >>> h = build_hierarchy(Corpus("pets", [Document("d", "Pets", text)]), max_chars=30,
    ...                     overlap_chars=10)
    >>> s = Structure(h)
    >>> s.longest, s.values()["n_passages"], len(s.straddling())
    ('d', 4, 1)
    >>> s.table().columns.tolist()[:2]
    ['characters', 'sections']
    """

    def __init__(self, hierarchy: Hierarchy) -> None:
        self.hierarchy = hierarchy

    @property
    def longest(self) -> str:
        """The id of the corpus's longest document."""
        return str(document_sizes(self.hierarchy).index[0])

    def values(self) -> dict[str, int | float]:
        """The corpus in numbers (:func:`summary`): what the record keeps."""
        return summary(self.hierarchy)

    def table(self, n: int | None = None) -> pd.DataFrame:
        """The documents by size, longest first (:func:`document_sizes`); ``n``: the first n."""
        sizes = document_sizes(self.hierarchy)
        return sizes if n is None else sizes.head(n)

    def tree(self, doc_id: str) -> str:
        """One document's section tree (:func:`section_tree`)."""
        return section_tree(self.hierarchy, doc_id)

    def straddling(self) -> list[Unit]:
        """The passages whose text crosses a heading (:func:`straddling`)."""
        return straddling(self.hierarchy)

    def overlap(self, doc_id: str) -> str:
        """Two consecutive passages of ``doc_id`` side by side, their shared text marked
        (:func:`overlapping_pair`, :func:`side_by_side`), as HTML."""
        return side_by_side(self.hierarchy, *overlapping_pair(self.hierarchy, doc_id))

    def plot(self, lengths: Sequence[int] | NDArray[Any], limit: int, **kw: Any) -> Figure:
        """Passage lengths against a limit, drawn by
        :func:`hierret.publish.charts.length_histogram` (its keywords pass through)."""
        from hierret.publish.charts import length_histogram

        return cast("Figure", length_histogram(lengths, limit, **kw).figure)  # its own figure
