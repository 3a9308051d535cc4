"""Documents, corpora and units: the plain values every step hands on.

Every unit of retrieval (a document, a section, a passage) is a span
``(doc_id, start, end)`` into its document's text, so any unit can be cited,
checked by eye, and judged relevant by span overlap.

Every loader builds its documents and questions here, so this is where text
that cannot be encoded is refused: a :class:`Document` or :class:`Query` whose
id, title or text holds a lone surrogate (``"\\ud800"``: not a character, it
cannot be written as UTF-8 and every encoder fails on it) raises
:class:`ValueError` naming the document or question, the field and the
position. It is refused, not repaired: a replacement character would change
the text, its tokens and the corpus fingerprint unseen, and the fix belongs in
the source. The loaders check first, and name the file and line too.
"""

from __future__ import annotations

import hashlib
import platform
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Literal

from hierret._validate import lone_surrogate, surrogate_message

__all__ = ["Corpus", "Document", "Level", "Query", "Span", "Unit"]

Level = Literal["documents", "sections", "passages"]

#: ``(doc_id, start, end)``: a half-open character span of one document.
Span = tuple[str, int, int]


@dataclass(frozen=True)
class Document:
    r"""One document: an id, a title and its full text.

    Raises
    ------
    TypeError
        ``text`` is not a ``str``.
    ValueError
        The id, title or text holds a lone surrogate (it cannot be encoded).

    Examples
    --------
    >>> Document("d1", "Title", "Some text.").text
    'Some text.'
    >>> Document("d2", "Cats", "Cats \ud800 purr.")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: document 'd2': text is not valid Unicode: a lone surrogate U+D800 at character 5 ...
    """

    id: str
    title: str
    text: str

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise TypeError(
                f"Document {self.id!r}: text must be str, got {type(self.text).__name__}"
            )
        _check_unicode(f"document {self.id!r}", id=self.id, title=self.title, text=self.text)


def _check_unicode(owner: str, **fields: object) -> None:
    """Refuse a field holding a lone surrogate, naming ``owner``, the field and the position."""
    for name, value in fields.items():
        if isinstance(value, str) and (at := lone_surrogate(value)) is not None:
            raise ValueError(surrogate_message(f"{owner}: {name}", value, at))


@dataclass(frozen=True)
class Unit:
    """A retrievable unit: a span ``[start, end)`` of one document's text.

    Parameters
    ----------
    id : str
        Stable id: ``doc`` for documents, ``doc#s1.2`` for sections,
        ``doc#p7`` for passages.
    doc_id : str
        The document the span belongs to.
    level : {"documents", "sections", "passages"}
        Which level of the hierarchy the unit lives on.
    start, end : int
        Character offsets into the document text (end exclusive).
    parent : str or None
        Id of the enclosing unit one level up (section for a passage, document
        for a section), ``None`` for documents.
    title : str
        Heading path for sections (``"The try statement > Finally"``), the
        document title for documents, empty for passages.

    Examples
    --------
    >>> u = Unit("d#p0", "d", "passages", 0, 5, "d#s1", "")
    >>> u.span
    ('d', 0, 5)
    >>> u.text(Document("d", "", "Hello world"))
    'Hello'
    """

    id: str
    doc_id: str
    level: Level
    start: int
    end: int
    parent: str | None = None
    title: str = ""

    @property
    def span(self) -> tuple[str, int, int]:
        """The ``(doc_id, start, end)`` triple."""
        return (self.doc_id, self.start, self.end)

    def __len__(self) -> int:
        return self.end - self.start

    def text(self, document: Document) -> str:
        """The unit's text, cut from ``document``."""
        if document.id != self.doc_id:
            raise ValueError(f"unit {self.id!r} belongs to {self.doc_id!r}, not {document.id!r}")
        return document.text[self.start : self.end]


@dataclass(frozen=True)
class Corpus:
    """A named, ordered collection of documents with a content fingerprint.

    Examples
    --------
    >>> c = Corpus("toy", [Document("a", "A", "x"), Document("b", "B", "y")])
    >>> len(c), c["b"].text
    (2, 'y')
    >>> len(c.fingerprint)
    16
    """

    name: str
    documents: Sequence[Document]
    extra_identity: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        ids = [d.id for d in self.documents]
        if len(set(ids)) != len(ids):
            dup = sorted({i for i in ids if ids.count(i) > 1})
            raise ValueError(f"corpus {self.name!r} has duplicate document ids: {dup[:5]}")
        object.__setattr__(self, "_by_id", {d.id: d for d in self.documents})

    def __len__(self) -> int:
        return len(self.documents)

    def __iter__(self) -> Iterator[Document]:
        return iter(self.documents)

    def __getitem__(self, doc_id: str) -> Document:
        try:
            return self._by_id[doc_id]  # type: ignore[attr-defined,no-any-return]
        except KeyError:
            raise KeyError(f"no document {doc_id!r} in corpus {self.name!r}") from None

    @property
    def n_chars(self) -> int:
        """Total characters over all documents."""
        return sum(len(d.text) for d in self.documents)

    @property
    def fingerprint(self) -> str:
        """16 hex digits of SHA-256 over ids, titles, texts and ``extra_identity``."""
        h = hashlib.sha256()
        h.update(self.extra_identity.encode())
        for d in self.documents:
            for part in (d.id, d.title, d.text):
                h.update(part.encode("utf-8", "surrogatepass"))
                h.update(b"\x00")
        return h.hexdigest()[:16]

    def identity(self) -> dict[str, str | int]:
        """What a result records about the corpus it ran on."""
        return {
            "corpus": self.name,
            "fingerprint": self.fingerprint,
            "documents": len(self),
            "chars": self.n_chars,
            "python": platform.python_version(),
        }


@dataclass(frozen=True)
class Query:
    """A question with the evidence that answers it, as document spans.

    Relevance at every target (document, section, passage) is decided by span
    overlap with ``evidence``, so one gold set scores any chunking. For corpora
    judged at document level (BEIR), each evidence span is a whole document.

    ``level`` is the finest level the evidence judges: a quoted span judges
    passages and everything above them; a whole section or document named by
    its id judges that level and the coarser ones only (every passage of a
    document named as relevant is not an answer). Finer targets leave the
    question out (:func:`~hierret.evaluation.qrels_from_evidence`,
    :func:`~hierret.evaluation.check_coverage`).

    Examples
    --------
    >>> q = Query("q1", "What is x?", (("d", 10, 60),))
    >>> q.evidence_docs, q.judged_at("passages")
    (('d',), True)
    >>> Query("q2", "Which page?", (("d", 0, 99),), level="documents").judged_at("sections")
    False
    >>> Query("q3", "Why \\udc9d?", ())  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: question 'q3': text is not valid Unicode: a lone surrogate U+DC9D at character 4 ...
    """

    id: str
    text: str
    evidence: tuple[Span, ...]
    level: Level = "passages"

    def __post_init__(self) -> None:
        _check_unicode(f"question {self.id!r}", id=self.id, text=self.text)

    def judged_at(self, target: str) -> bool:
        """Whether the evidence judges ``target`` (a level no finer than :attr:`level`)."""
        order = ("documents", "sections", "passages")
        return target not in order or order.index(target) <= order.index(self.level)

    @property
    def evidence_docs(self) -> tuple[str, ...]:
        """Ids of the documents holding evidence, in first-seen order."""
        return tuple(dict.fromkeys(doc for doc, _, _ in self.evidence))
