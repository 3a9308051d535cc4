"""Level indexes and fused search: identity guard, lifting, min-max blending, hits."""

from __future__ import annotations

import numpy as np
import pytest

from hierret.encoders import HashEncoder
from hierret.evaluation import lift
from hierret.hierarchical import LEVELS, HierarchicalIndex, snippet
from hierret.hierarchy import Hierarchy, build_hierarchy
from hierret.index import IdentityMismatchError
from hierret.levels import unit_vectors
from hierret.rankers.fusion import minmax_fuse
from hierret.search import Searcher
from hierret.units import Corpus, Document, Query

DOCS = [
    Document("try", "The try statement", (
        "The try statement\n*****************\n\nThe try statement specifies exception "
        "handlers and cleanup code for a group of statements.\n\n"
        "Except clause\n=============\n\nThe except clause names the exception it handles. "
        "When an exception is raised, the first matching except clause runs. "
        "Handlers may be chained.\n\n"
        "Finally clause\n==============\n\nThe finally clause always runs on the way out, "
        "whether or not an exception occurred. A return in finally discards the exception.\n")),
    Document("with", "The with statement", (
        "The with statement\n******************\n\nThe with statement wraps a block with "
        "methods of a context manager.\n\n"
        "Context managers\n================\n\nEnter runs before the block; exit runs after "
        "it, even when an exception is raised in the block.\n")),
    Document("for", "The for statement", (
        "The for statement\n*****************\n\nThe for statement iterates over the items "
        "of a sequence. A break ends the loop; a continue skips to the next item; the else "
        "clause runs when the loop ends without break.\n")),
]

QUERIES = [
    Query("q1", "what does the finally clause do with an exception?", ()),
    Query("q2", "context manager exit when an exception is raised", ()),
    Query("q3", "break and continue in a loop", ()),
]


@pytest.fixture(scope="module")
def hierarchy() -> Hierarchy:
    return build_hierarchy(Corpus("toy", DOCS), max_chars=120, overlap_chars=20)


@pytest.fixture(scope="module")
def index(hierarchy: Hierarchy) -> HierarchicalIndex:
    return HierarchicalIndex(hierarchy, HashEncoder(dimension=64, window=24)).build()


def test_every_level_carries_the_encoder_identity(index: HierarchicalIndex) -> None:
    ident = index.encoder.identity.describe()
    assert index.identity == ident
    for level in LEVELS:
        assert index.index(level).identity == ident
    assert set(index.reports) == set(index.build_seconds) == set(LEVELS)


@pytest.mark.parametrize("level", ["passages", "sections", "documents", "fused"])
def test_another_encoder_raises(index: HierarchicalIndex, level: str) -> None:
    other = HashEncoder(dimension=64, window=24, query_prefix="query: ")  # same dimension
    with pytest.raises(IdentityMismatchError, match="different encoder"):
        index.run(QUERIES, level, query_encoder=other)  # type: ignore[arg-type]


def test_sections_pool_long_own_spans(index: HierarchicalIndex, hierarchy: Hierarchy) -> None:
    report = index.reports["sections"]
    assert report.n_pooled > 0
    assert report.n_embedded == len(hierarchy.units("sections"))
    assert index.reports["passages"].strategy == "whole"


def test_fused_is_minmax_blend_of_lifted_passages_and_sections(
    index: HierarchicalIndex, hierarchy: Hierarchy
) -> None:
    depth, weight = 4, 0.65
    passages = index.run(QUERIES, "passages", k=depth)
    sections = index.run(QUERIES, "sections", k=depth)
    lifted = lift(passages, hierarchy.parents("passages", "sections"))
    fused = index.run(QUERIES, "fused", k=10, section_weight=weight, depth=depth)
    for q in fused:
        assert fused[q] == minmax_fuse(lifted[q], sections[q], weight)[:10]
        assert {u for u, _ in fused[q]} == {u for u, _ in lifted[q]} | {u for u, _ in sections[q]}


def test_passage_leg_scores_each_section_by_its_best_passage(
    index: HierarchicalIndex, hierarchy: Hierarchy
) -> None:
    parent = hierarchy.parents("passages", "sections")
    passages = index.run(QUERIES, "passages", k=50)
    fused = index.run(QUERIES, "fused", k=50, section_weight=0.0, depth=50)
    for q in fused:
        best: dict[str, float] = {}
        for uid, score in passages[q]:
            best.setdefault(parent[uid], score)  # first seen = best
        order = sorted(best, key=lambda s: (-best[s], s))
        assert [u for u, _ in fused[q] if u in best] == order
        assert fused[q][0] == (parent[passages[q][0][0]], 1.0)


def test_weight_one_reproduces_the_section_order(index: HierarchicalIndex) -> None:
    sections = index.run(QUERIES, "sections", k=50)
    fused = index.run(QUERIES, "fused", k=50, section_weight=1.0, depth=50)
    for q in fused:
        order = [u for u, _ in sections[q]]
        assert [u for u, _ in fused[q] if u in set(order)] == order


def test_chunk_level_equals_the_flat_searcher(hierarchy: Hierarchy) -> None:
    enc = HashEncoder(dimension=64, window=24)
    hi = HierarchicalIndex(hierarchy, enc)
    flat = Searcher(hierarchy, enc).run(QUERIES, "passages", "dense", depth=5)
    assert hi.run(QUERIES, "passages", k=5) == flat


def test_centroid_strategy_reuses_passage_vectors(hierarchy: Hierarchy) -> None:
    enc = HashEncoder(dimension=64, window=24)
    hi = HierarchicalIndex(hierarchy, enc, strategy="centroid")
    hi.index("sections")  # builds passages first
    assert "passages" in hi.reports
    _, expected, _ = unit_vectors(hierarchy, enc, "sections", "centroid")
    got = hi.index("sections").scores(expected, hi.identity)
    np.testing.assert_allclose(np.diag(got), 1.0, atol=1e-5)


def test_hits_name_section_paths_and_spans(
    index: HierarchicalIndex, hierarchy: Hierarchy
) -> None:
    secs = {s.id: s for ss in hierarchy.sections.values() for s in ss}
    hits = index.search("finally clause exception", "fused", k=3)
    assert [h.rank for h in hits] == [1, 2, 3]
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    for h in hits:
        s = secs[h.unit_id]
        assert (h.level, h.doc_id, h.span) == ("fused", s.doc_id, (s.start, s.own_end))
        assert h.path == " > ".join(s.path)
        assert "\n" not in h.snippet
    assert hits[0].unit_id == "try#s1.2"
    assert hits[0].path == "The try statement > Finally clause"
    passage = index.search("finally clause exception", "passages", k=1)[0]
    p = next(p for p in hierarchy.passages if p.id == passage.unit_id)
    assert passage.path == " > ".join(secs[p.parent or ""].path)
    assert passage.span == (p.start, p.end)
    doc = index.search("loop", "documents", k=1)[0]
    assert (doc.unit_id, doc.path) == ("for", "The for statement")


def test_bad_arguments(index: HierarchicalIndex) -> None:
    with pytest.raises(ValueError, match="unknown level"):
        index.search("x", "paragraphs")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="section_weight"):
        index.search("x", "fused", section_weight=1.5)
    with pytest.raises(ValueError, match="depth must be an int >= 1"):
        index.search("x", "fused", depth=0)
    with pytest.raises(ValueError, match="unknown strategy"):
        HierarchicalIndex(index.hierarchy, index.encoder, "mean")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown level"):
        index.index("fused")  # type: ignore[arg-type]


def test_snippet_drops_underlines_and_cuts_at_a_word() -> None:
    assert snippet("Finally\n=======\n\nIt always runs.") == "Finally It always runs."
    assert snippet("alpha beta gamma", 12) == "alpha beta…"
    assert len(snippet("x" * 50, 10)) == 10
