r"""Synthetic multi-section documents built from a judged BEIR corpus.

BEIR corpora judge short abstracts, so every document is one passage and the
section level means nothing. :func:`build_sectioned` groups abstracts into
longer Markdown documents, one abstract per section::

    # Document 1

    ## Title of abstract A

    text of abstract A

    ## Title of abstract B

    text of abstract B

Construction (all draws come from one ``random.Random(seed)``, and every
iteration follows file order, so a seed always gives the same documents):

1. *Clusters.* Queries that share a judged abstract must share a document, so
   the judged abstracts (every abstract that a query of the split judges, with
   any score) are grouped into clusters: the connected components of the
   query--abstract judgments.
2. *Documents.* Clusters are shuffled. Each document draws a size ``k`` from
   ``sections_per_doc`` (inclusive), takes clusters until at least half of its
   ``k`` sections are judged abstracts (at least one cluster; a large cluster
   may overshoot ``k``), then fills the remaining sections with unrelated
   abstracts -- at least one -- drawn without replacement from the abstracts
   no query of the split judges. The sections are shuffled.
3. *Evidence.* Each query keeps its id and text; its evidence is the span of
   each abstract it judges relevant (score > 0) inside its new document: the
   abstract's text (BEIR's ``text`` field), without its heading. So
   :func:`hierret.evaluation.qrels_from_evidence` judges the document, the
   abstract's section and the passages inside it.

Every judged abstract lands in exactly one document; no abstract appears
twice; unrelated abstracts that were not drawn are left out. When the pool of
unrelated abstracts runs out, later documents get fewer (or none). Corpora
that judge many abstracts per query give documents as large as their
clusters. ``max_docs`` keeps the first documents and the queries whose
evidence lies wholly inside them.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterable
from dataclasses import dataclass, field

from hierret.datasets.beir import BeirDataset
from hierret.structure.units import Corpus, Document, Query, Span

__all__ = ["SectionedDataset", "build_sectioned"]


@dataclass(frozen=True)
class SectionedDataset:
    """Multi-section documents built from a BEIR dataset, with span evidence.

    Parameters
    ----------
    name : str
        ``"<beir name>-sections"``.
    corpus : Corpus
        The built documents (ids ``doc0001``, ...), named like the dataset.
    queries : list of Query
        Queries with evidence inside the kept documents, in the source order.
    sources : dict of str to tuple of str
        For each document, the BEIR ids of its sections' abstracts, in order.
    params : dict
        Construction parameters and sizes, recorded by :meth:`identity`.
    """

    name: str
    corpus: Corpus
    queries: list[Query]
    sources: dict[str, tuple[str, ...]] = field(default_factory=dict)
    params: dict[str, str | int] = field(default_factory=dict)

    def identity(self) -> dict[str, str | int]:
        """What a result records about the data it ran on (no local paths)."""
        h = hashlib.sha256()
        for q in self.queries:
            h.update(f"{q.id}\t{q.evidence}\n".encode())
        return {
            **self.corpus.identity(),
            "dataset": f"synthetic/{self.name}",
            "queries": len(self.queries),
            "evidence_fingerprint": h.hexdigest()[:16],
            **self.params,
        }


def build_sectioned(
    dataset: BeirDataset,
    *,
    sections_per_doc: tuple[int, int] = (4, 8),
    max_docs: int | None = None,
    seed: int = 0,
) -> SectionedDataset:
    """Group a BEIR dataset's judged abstracts into multi-section documents.

    Parameters
    ----------
    dataset : BeirDataset
        The source corpus, queries and judgments (one split).
    sections_per_doc : tuple of int, default (4, 8)
        Inclusive range of the sections a document is aimed at (see the module
        docstring for when a document has more or fewer).
    max_docs : int, optional
        Keep only the first ``max_docs`` documents, and the queries whose
        evidence is all inside them.
    seed : int, default 0
        Seed of every random draw.

    Returns
    -------
    SectionedDataset
        Corpus ``<beir name>-sections``, queries with span evidence, provenance.

    Raises
    ------
    ValueError
        ``sections_per_doc`` is not ``(lo, hi)`` with ``2 <= lo <= hi``, or
        ``max_docs`` is below 1.

    Examples
    --------
    >>> from hierret.datasets.beir import BeirDataset
    >>> from pathlib import Path
    >>> docs = [Document(f"a{i}", f"T{i}", f"T{i}\\n\\nAbstract {i}.") for i in range(6)]
    >>> beir = BeirDataset("toy", "test", Corpus("beir-toy", docs),
    ...                    [Query("q", "?", (("a1", 0, 16),))], {"q": {"a1": 1}}, Path())
    >>> ds = build_sectioned(beir, sections_per_doc=(3, 3))
    >>> doc = ds.corpus["doc0001"]
    >>> print(doc.text.split("\\n\\n## ")[0])
    # Document 1
    >>> len(ds.sources["doc0001"]), ds.name
    (3, 'toy-sections')
    >>> did, start, end = ds.queries[0].evidence[0]
    >>> ds.corpus[did].text[start:end]
    'Abstract 1.'
    """
    lo, hi = sections_per_doc
    if not 2 <= lo <= hi:
        raise ValueError(
            f"sections_per_doc must be (lo, hi) with 2 <= lo <= hi, got {sections_per_doc}"
        )
    if max_docs is not None and max_docs < 1:
        raise ValueError(f"max_docs must be at least 1, got {max_docs}")
    rng = random.Random(seed)
    judged_by_query = {q.id: list(dataset.qrels.get(q.id, {})) for q in dataset.queries}
    clusters = _clusters(judged_by_query.values())
    judged = {d for cluster in clusters for d in cluster}
    pool = [d.id for d in dataset.corpus if d.id not in judged]
    rng.shuffle(clusters)
    rng.shuffle(pool)
    layouts: list[list[str]] = []
    while clusters:
        k = rng.randint(lo, hi)
        sections: list[str] = []
        while clusters and (not sections or len(sections) < (k + 1) // 2):
            sections.extend(clusters.pop())
        fill = max(k - len(sections), 1)
        sections.extend(pool[:fill])
        del pool[:fill]
        rng.shuffle(sections)
        layouts.append(sections)
    if max_docs is not None:
        layouts = layouts[:max_docs]
    width = max(4, len(str(len(layouts))))
    documents: list[Document] = []
    where: dict[str, Span] = {}
    sources: dict[str, tuple[str, ...]] = {}
    for n, sections in enumerate(layouts, 1):
        doc_id = f"doc{n:0{width}d}"
        doc, spans = _document(doc_id, n, [dataset.corpus[s] for s in sections])
        documents.append(doc)
        where.update(spans)
        sources[doc_id] = tuple(sections)
    queries = [
        Query(q.id, q.text, evidence)
        for q in dataset.queries
        if q.evidence
        and all(d in where for d in q.evidence_docs)
        # an abstract with no text at all gives an empty span: not evidence
        and (evidence := tuple(where[d] for d in q.evidence_docs if where[d][1] < where[d][2]))
    ]
    name = f"{dataset.name}-sections"
    placed = [a for s in sources.values() for a in s]
    n_judged = sum(a in judged for a in placed)
    params: dict[str, str | int] = {
        "source": f"beir/{dataset.name}",
        "split": dataset.split,
        "source_fingerprint": dataset.corpus.fingerprint,
        "seed": seed,
        "sections_per_doc": f"{lo}-{hi}",
        "max_docs": -1 if max_docs is None else max_docs,
        "judged_abstracts": n_judged,
        "unrelated_abstracts": len(placed) - n_judged,
    }
    extra = ";".join(f"{k}={v}" for k, v in params.items())
    return SectionedDataset(
        name, Corpus(name, documents, extra_identity=extra), queries, sources, params
    )


def _clusters(judgments: Iterable[list[str]]) -> list[list[str]]:
    """Connected components of abstracts judged by a common query, in first-seen order."""
    parent: dict[str, str] = {}

    def root(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for docs in judgments:
        for d in docs:
            parent.setdefault(d, d)
        for d in docs[1:]:
            a, b = root(docs[0]), root(d)
            if a != b:
                parent[b] = a
    groups: dict[str, list[str]] = {}
    for d in parent:
        groups.setdefault(root(d), []).append(d)
    return list(groups.values())


def _document(doc_id: str, n: int, abstracts: list[Document]) -> tuple[Document, dict[str, Span]]:
    """The Markdown text of one document and each abstract body's span in it."""
    parts = [f"# Document {n}"]
    pos = len(parts[0])
    spans: dict[str, Span] = {}
    for a in abstracts:
        body = _body(a)
        heading = f"\n\n## {' '.join(a.title.split()) or a.id}\n\n"
        start = pos + len(heading)
        parts.extend((heading, body))
        pos = start + len(body)
        spans[a.id] = (doc_id, start, pos)
    return Document(doc_id, f"Document {n}", "".join(parts)), spans


def _body(doc: Document) -> str:
    """BEIR's ``text`` field: the document text without its ``title + "\\n\\n"`` prefix."""
    prefix = f"{doc.title}\n\n"
    return doc.text[len(prefix) :] if doc.title and doc.text.startswith(prefix) else doc.text
