"""Tests for synthetic multi-section documents built from a BEIR dataset."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from hierret.datasets import synthetic
from hierret.datasets.beir import BeirDataset, load_beir
from hierret.datasets.synthetic import build_sectioned
from hierret.evaluation import qrels_from_evidence
from hierret.structure.hierarchy import build_hierarchy
from hierret.structure.units import Corpus, Document, Query

N_ABSTRACTS = 24
QRELS = {
    "q1": {"a01": 1},
    "q2": {"a02": 1, "a03": 2},
    "q3": {"a03": 1},  # shares a03 with q2: same document
    "q4": {"a04": 1, "a05": 0},  # a05 judged non-relevant: placed beside a04, not evidence
    "q5": {"a06": 0},  # no relevant abstract: no evidence, dropped
    "q6": {"a07": 1},
    "q7": {"a08": 1},
}


def body(i: int) -> str:
    return f"Abstract number {i} says something.\nIt has two lines."


def tiny() -> BeirDataset:
    """A hand-made BEIR dataset: 24 abstracts, 7 queries, BEIR-style texts and evidence."""
    docs = [
        Document(f"a{i:02d}", f"Title {i}", f"Title {i}\n\n{body(i)}") for i in range(N_ABSTRACTS)
    ]
    corpus = Corpus("beir-tiny", docs)
    queries = [
        Query(
            qid,
            f"text of {qid}",
            tuple((d, 0, len(corpus[d].text)) for d, score in judged.items() if score > 0),
        )
        for qid, judged in QRELS.items()
    ]
    return BeirDataset("tiny", "test", corpus, queries, QRELS, Path())


def home_doc(ds: synthetic.SectionedDataset) -> dict[str, str]:
    """BEIR abstract id -> the built document holding it."""
    return {a: did for did, sources in ds.sources.items() for a in sources}


def test_every_judged_abstract_once_and_nothing_twice() -> None:
    ds = build_sectioned(tiny(), sections_per_doc=(3, 5))
    placed = Counter(a for sources in ds.sources.values() for a in sources)
    assert max(placed.values()) == 1
    judged = {f"a{i:02d}" for i in range(1, 9)}
    assert judged <= set(placed)
    assert ds.params["judged_abstracts"] == len(judged)
    assert ds.params["unrelated_abstracts"] == len(placed) - len(judged)
    home = home_doc(ds)
    assert home["a02"] == home["a03"]  # one cluster
    assert home["a04"] == home["a05"]
    for sources in ds.sources.values():
        assert any(a not in judged for a in sources)  # every document mixes in unrelated ones


def test_document_text_and_sections() -> None:
    ds = build_sectioned(tiny(), sections_per_doc=(3, 5))
    assert ds.name == ds.corpus.name == "tiny-sections"
    assert [d.id for d in ds.corpus] == [f"doc{n:04d}" for n in range(1, len(ds.corpus) + 1)]
    h = build_hierarchy(ds.corpus)
    for n, doc in enumerate(ds.corpus, 1):
        assert doc.title == f"Document {n}"
        expected = f"# Document {n}" + "".join(
            f"\n\n## Title {int(a[1:])}\n\n{body(int(a[1:]))}" for a in ds.sources[doc.id]
        )
        assert doc.text == expected
        secs = h.sections[doc.id]
        assert [s.path[1:] for s in secs[1:]] == [
            (f"Title {int(a[1:])}",) for a in ds.sources[doc.id]
        ]
        assert len(secs) == len(ds.sources[doc.id]) + 1


def test_evidence_spans_equal_the_abstracts() -> None:
    source = tiny()
    ds = build_sectioned(source, sections_per_doc=(3, 5))
    assert [q.id for q in ds.queries] == ["q1", "q2", "q3", "q4", "q6", "q7"]  # q5: no evidence
    home = home_doc(ds)
    for q in ds.queries:
        relevant = [d for d, score in QRELS[q.id].items() if score > 0]
        assert [d for d, _, _ in q.evidence] == [home[a] for a in relevant]
        cut = [ds.corpus[d].text[s:e] for d, s, e in q.evidence]
        assert cut == [body(int(a[1:])) for a in relevant]
        assert q.text == f"text of {q.id}"


def test_document_and_section_qrels() -> None:
    ds = build_sectioned(tiny(), sections_per_doc=(3, 5))
    h = build_hierarchy(ds.corpus, max_chars=40, overlap_chars=0)
    home = home_doc(ds)
    docs = qrels_from_evidence(ds.queries, h.units("documents"))
    assert docs["q2"] == {home["a02"]: 1}
    assert set(docs) == {q.id for q in ds.queries}
    sections = qrels_from_evidence(ds.queries, h.units("sections"))
    assert set(sections) == {q.id for q in ds.queries}
    titles = {s.id: s.title for secs in h.sections.values() for s in secs}
    assert sorted(titles[u] for u in sections["q2"]) == ["Title 2", "Title 3"]
    assert [titles[u] for u in sections["q4"]] == ["Title 4"]  # not the non-relevant a05
    passages = qrels_from_evidence(ds.queries, h.units("passages"))
    assert set(passages) == {q.id for q in ds.queries}


def test_deterministic_and_seeded() -> None:
    a = build_sectioned(tiny(), seed=3)
    b = build_sectioned(tiny(), seed=3)
    assert a.corpus.documents == b.corpus.documents
    assert (a.sources, a.queries, a.identity()) == (b.sources, b.queries, b.identity())
    others = [build_sectioned(tiny(), seed=s).sources for s in range(4, 8)]
    assert any(o != a.sources for o in others)
    ident = a.identity()
    assert (ident["seed"], ident["sections_per_doc"], ident["dataset"]) == (
        3,
        "4-8",
        "synthetic/tiny-sections",
    )
    assert ident["fingerprint"] != build_sectioned(tiny(), seed=4).identity()["fingerprint"]


def test_sections_per_doc_range() -> None:
    ds = build_sectioned(tiny(), sections_per_doc=(4, 4))
    sizes = [len(s) for s in ds.sources.values()]
    assert all(size == 4 for size in sizes)  # clusters of at most 2 fit beside 2 fillers


def test_max_docs() -> None:
    full = build_sectioned(tiny(), sections_per_doc=(3, 3))
    one = build_sectioned(tiny(), sections_per_doc=(3, 3), max_docs=1)
    assert len(full.corpus) > 1
    assert [d.id for d in one.corpus] == ["doc0001"]
    assert one.corpus["doc0001"] == full.corpus["doc0001"]  # a prefix of the full build
    assert one.queries
    assert all(d == "doc0001" for q in one.queries for d, _, _ in q.evidence)
    kept = {q.id for q in full.queries if q.evidence_docs == ("doc0001",)}
    assert {q.id for q in one.queries} == kept
    assert one.identity()["max_docs"] == 1


@pytest.mark.parametrize(
    "kwargs", [{"sections_per_doc": (1, 3)}, {"sections_per_doc": (5, 4)}, {"max_docs": 0}]
)
def test_bad_arguments(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError, match=r"sections_per_doc|max_docs"):
        build_sectioned(tiny(), **kwargs)  # type: ignore[arg-type]


def test_pool_runs_out() -> None:
    small = tiny()
    few = Corpus("beir-few", [d for d in small.corpus if d.id <= "a09"])
    ds = build_sectioned(
        BeirDataset("few", "test", few, small.queries, QRELS, Path()), sections_per_doc=(6, 8)
    )
    placed = [a for s in ds.sources.values() for a in s]
    assert sorted(placed) == [f"a{i:02d}" for i in range(10)]  # all 10, none twice


def test_module_exports() -> None:
    assert set(synthetic.__all__) <= set(dir(synthetic))


def test_real_scifact(real_scifact: Path) -> None:
    source = load_beir(real_scifact)
    ds = build_sectioned(source)
    assert ds.name == "scifact-sections"
    assert len(ds.queries) == 300
    assert ds.params["judged_abstracts"] == 283
    assert len(ds.corpus) == 79
    placed = [a for s in ds.sources.values() for a in s]
    assert len(placed) == len(set(placed)) == 509
