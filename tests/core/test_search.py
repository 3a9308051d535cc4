"""The search front door: level indexes, identity guard, fused blending, hits."""

from __future__ import annotations

import numpy as np
import pytest
from _straddle import lift_straddling, overlapped

from hierret.encoders import HashEncoder
from hierret.search.hits import snippet
from hierret.search.profile import Profile
from hierret.search.rankers.fusion import minmax_fuse
from hierret.search.runs import rank
from hierret.search.searcher import Searcher
from hierret.search.vectors.index import IdentityMismatchError
from hierret.search.vectors.levels import unit_vectors
from hierret.structure.hierarchy import Hierarchy, build_hierarchy
from hierret.structure.units import Corpus, Document, Level, Query

DOCS = [
    Document(
        "try",
        "The try statement",
        (
            "The try statement\n*****************\n\nThe try statement specifies exception "
            "handlers and cleanup code for a group of statements.\n\n"
            "Except clause\n=============\n\nThe except clause names the exception it handles. "
            "When an exception is raised, the first matching except clause runs. "
            "Handlers may be chained.\n\n"
            "Finally clause\n==============\n\nThe finally clause always runs on the way out, "
            "whether or not an exception occurred. A return in finally discards the exception.\n"
        ),
    ),
    Document(
        "with",
        "The with statement",
        (
            "The with statement\n******************\n\nThe with statement wraps a block with "
            "methods of a context manager.\n\n"
            "Context managers\n================\n\nEnter runs before the block; exit runs after "
            "it, even when an exception is raised in the block.\n"
        ),
    ),
    Document(
        "for",
        "The for statement",
        (
            "The for statement\n*****************\n\nThe for statement iterates over the items "
            "of a sequence. A break ends the loop; a continue skips to the next item; the else "
            "clause runs when the loop ends without break.\n"
        ),
    ),
]

QUERIES = [
    Query("q1", "what does the finally clause do with an exception?", ()),
    Query("q2", "context manager exit when an exception is raised", ()),
    Query("q3", "break and continue in a loop", ()),
]


@pytest.fixture(scope="module")
def hierarchy() -> Hierarchy:
    return build_hierarchy(Corpus("toy", DOCS), max_chars=120, overlap_chars=20)


LEVELS: tuple[Level, ...] = ("passages", "sections", "documents")
FUSED = Profile(level="fused")


@pytest.fixture(scope="module")
def index(hierarchy: Hierarchy) -> Searcher:
    s = Searcher(hierarchy, HashEncoder(dimension=64, window=24))
    for level in LEVELS:
        s.dense_index(level)
    return s


def test_every_level_carries_the_encoder_identity(index: Searcher) -> None:
    ident = index.encoder.identity.describe()
    assert index.identity == ident
    for level in LEVELS:
        assert index.dense_index(level).identity == ident
    keys = {("passages", "first-window"), ("sections", "rawspan"), ("documents", "rawspan")}
    assert set(index.reports) == set(index.build_seconds) == keys


@pytest.mark.parametrize("level", LEVELS)
def test_another_encoder_raises(index: Searcher, level: Level) -> None:
    other = HashEncoder(dimension=64, window=24, query_prefix="query: ")  # same dimension
    with pytest.raises(IdentityMismatchError, match="different encoder"):
        index.dense_index(level).search(other.encode_queries(["x"]), 3, other.identity)


def test_sections_pool_long_own_spans(index: Searcher, hierarchy: Hierarchy) -> None:
    report = index.reports[("sections", "rawspan")]
    assert report.n_pooled > 0
    assert report.n_embedded == len(hierarchy.units("sections"))
    assert index.reports[("passages", "first-window")].strategy == "first-window"


def test_first_window_vectors_embed_each_unit_as_one_text(hierarchy: Hierarchy) -> None:
    enc = HashEncoder(dimension=64, window=24)
    s = Searcher(hierarchy, enc)
    index = s.dense_index("sections", "first-window")
    texts = [hierarchy.text(u) for u in hierarchy.units("sections")]
    np.testing.assert_allclose(index.vectors, enc.encode_passages(texts), atol=1e-6)
    assert s.reports[("sections", "first-window")].truncated  # long sections: cut by a model
    assert s.dense_index("passages", "centroid") is s.dense_index("passages")  # one passage index


def test_fused_is_minmax_blend_of_lifted_passages_and_sections(
    index: Searcher, hierarchy: Hierarchy
) -> None:
    pool, weight = 4, 0.65
    passages = index.run(QUERIES, k=pool)
    sections = index.run(QUERIES, Profile(level="sections"), k=pool)
    lifted = lift_straddling(passages, hierarchy)  # a passage counts for each section it overlaps
    fused = index.run(QUERIES, Profile(level="fused", pool=pool, section_weight=weight), k=10)
    for q in fused:
        assert fused[q] == minmax_fuse(lifted[q], sections[q], weight)[:10]
        assert {u for u, _ in fused[q]} == {u for u, _ in lifted[q]} | {u for u, _ in sections[q]}


def test_passage_leg_scores_each_section_by_its_best_passage(
    index: Searcher, hierarchy: Hierarchy
) -> None:
    holders = overlapped(hierarchy)  # a straddling passage counts for each section it overlaps
    passages = index.run(QUERIES, k=50)
    fused = index.run(QUERIES, Profile(level="fused", section_weight=0.0, pool=50), k=50)
    for q in fused:
        best: dict[str, float] = {}
        for uid, score in passages[q]:
            for section in holders[uid]:
                best.setdefault(section, score)  # first seen = best
        order = [u for u, _ in rank(best)]
        assert [u for u, _ in fused[q] if u in best] == order
        top = holders[passages[q][0][0]]
        assert fused[q][0][1] == 1.0
        assert fused[q][0][0] in top


def test_weight_one_reproduces_the_section_order(index: Searcher) -> None:
    sections = index.run(QUERIES, Profile(level="sections"), k=50)
    fused = index.run(QUERIES, Profile(level="fused", section_weight=1.0, pool=50), k=50)
    for q in fused:
        order = [u for u, _ in sections[q]]
        assert [u for u, _ in fused[q] if u in set(order)] == order


def test_passage_vectors_do_not_depend_on_the_vector_strategy(hierarchy: Hierarchy) -> None:
    s = Searcher(hierarchy, HashEncoder(dimension=64, window=24))
    runs = [
        s.run(QUERIES, Profile(vectors=v), k=5)  # type: ignore[arg-type]
        for v in ("rawspan", "centroid", "first-window")
    ]
    assert runs[0] == runs[1] == runs[2]


def test_centroid_strategy_reuses_passage_vectors(hierarchy: Hierarchy) -> None:
    enc = HashEncoder(dimension=64, window=24)
    s = Searcher(hierarchy, enc)
    s.dense_index("sections", "centroid")  # builds passages first
    assert ("passages", "first-window") in s.reports
    _, expected, _ = unit_vectors(hierarchy, enc, "sections", "centroid")
    got = s.dense_index("sections", "centroid").scores(expected, s.identity)
    np.testing.assert_allclose(np.diag(got), 1.0, atol=1e-5)


def test_hits_name_section_paths_and_spans(index: Searcher, hierarchy: Hierarchy) -> None:
    secs = {s.id: s for ss in hierarchy.sections.values() for s in ss}
    hits = index.search("finally clause exception", FUSED, k=3)
    assert [h.rank for h in hits] == [1, 2, 3]
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    for h in hits:
        s = secs[h.unit_id]
        assert (h.level, h.doc_id, h.span) == ("fused", s.doc_id, (s.start, s.own_end))
        assert h.path == " > ".join(s.path)
        assert "\n" not in h.snippet
    assert hits[0].unit_id == "try#s1.2"
    assert hits[0].path == "The try statement > Finally clause"
    passage = index.search("finally clause exception", k=1)[0]
    p = next(p for p in hierarchy.passages if p.id == passage.unit_id)
    assert passage.path == " > ".join(secs[p.parent or ""].path)
    assert passage.span == (p.start, p.end)
    doc = index.search("loop", Profile(level="documents"), k=1)[0]
    assert (doc.unit_id, doc.path) == ("for", "The for statement")


def test_bad_arguments(index: Searcher) -> None:
    with pytest.raises(ValueError, match="unknown level"):
        Profile(level="paragraphs")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="section_weight"):
        Profile(level="fused", section_weight=1.5)
    with pytest.raises(ValueError, match="pool must be an int >= 1"):
        Profile(level="fused", pool=0)
    with pytest.raises(ValueError, match="unknown vectors 'mean'"):
        Profile(vectors="mean")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown level 'fused' for an index"):
        index.dense_index("fused")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="profile must be a Profile, got str"):
        index.search("x", "fused")  # type: ignore[arg-type]
    with pytest.raises(KeyError, match="needs reranker 'ce'"):
        index.run(QUERIES, Profile(reranker="ce"))


def test_snippet_drops_underlines_and_cuts_at_a_word() -> None:
    assert snippet("Finally\n=======\n\nIt always runs.") == "Finally It always runs."
    assert snippet("alpha beta gamma", 12) == "alpha beta…"
    assert len(snippet("x" * 50, 10)) == 10


@pytest.mark.parametrize("level", ["passages", "sections", "documents"])
def test_bm25_search_gives_no_hit_that_matches_no_word(level: str) -> None:
    """A question with no word BM25 can match gets no hits at any level (no 0.0000 rows)."""
    from hierret.encoders import HashEncoder
    from hierret.search.profile import Profile
    from hierret.structure.hierarchy import build_hierarchy
    from hierret.structure.units import Corpus, Document

    corpus = Corpus(
        "c",
        [Document("a", "A", "# A\n\nCats purr all day.\n"), Document("b", "B", "Dogs bark.\n")]
        + [Document(f"o{i}", "O", f"Owls hoot {i} times.\n") for i in range(4)],
    )
    searcher = Searcher(build_hierarchy(corpus), HashEncoder(dimension=8))
    profile = Profile(level=level, ranker="bm25")
    assert searcher.search("zebra quagga", profile, k=3) == []
    hits = searcher.search("cats zebra", profile, k=3)
    assert [h.doc_id for h in hits] == ["a"]
    assert all(h.score > 0 for h in hits)
    run = searcher.run([Query("q", "zebra quagga", ())], profile, 3)["q"]
    assert run  # an evaluation's run still ranks every unit (ties among zeros)


def test_hits_on_a_tiny_corpus_are_ranked_with_lucene_idf(caplog: pytest.LogCaptureFixture) -> None:
    """Two documents: Okapi's idf of every word is <= 0; the hits use Lucene's, and say so,
    while an evaluation run keeps Okapi's (rank_bm25's)."""
    corpus = Corpus(
        "c", [Document("a", "A", "Dogs bark at cats."), Document("b", "B", "Cats purr.")]
    )
    searcher = Searcher(build_hierarchy(corpus), HashEncoder(dimension=8))
    profile = Profile(level="documents", ranker="bm25")
    with caplog.at_level("WARNING", logger="hierret"):
        hits = searcher.search("cats purr", profile, k=2)
    assert [h.doc_id for h in hits] == ["b", "a"]
    assert all(h.score > 0 for h in hits)
    assert "ranked with Lucene's" in caplog.text
    okapi = searcher.run([Query("q", "cats purr", ())], profile, 2)["q"]
    assert okapi[0][0] == "a"  # rank_bm25's order, unchanged for evaluations
