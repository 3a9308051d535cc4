"""Bad input at the search boundary: empty queries, bad depths, non-finite vectors, empty units.

Every public search entry point either returns a valid ranking (at most ``k``
units, finite scores, only units with text) or raises the documented
``TypeError`` / ``ValueError``, before any query is embedded.
"""

from __future__ import annotations

import logging
import math
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hierret._validate import check_count, has_text
from hierret.encoders import HashEncoder
from hierret.search.profile import RANKERS, SEARCH_LEVELS, Profile
from hierret.search.rankers.bm25 import BM25, top_k
from hierret.search.rankers.fusion import rrf
from hierret.search.searcher import Searcher
from hierret.search.vectors.index import IndexFileError, VectorIndex
from hierret.search.vectors.levels import empty_units, text_units, unit_vectors
from hierret.structure.hierarchy import Hierarchy, build_hierarchy
from hierret.structure.units import Corpus, Document, Query

DOCS = [
    Document(
        "try",
        "Try",
        "Try\n===\n\nThe try statement handles exceptions.\n\n"
        "Finally\n=======\n\nThe finally clause always runs.\n",
    ),
    Document("for", "For", "For\n===\n\nThe for statement loops over items. Break ends it.\n"),
    Document("with", "With", "The with statement enters a context manager.\n"),
]
EMPTY = [Document("blank", "Blank", ""), Document("spaces", "Spaces", " \n\t \n")]


class CountingEncoder(HashEncoder):
    """A hash encoder that records every text it embeds."""

    def __init__(self, **kwargs: int) -> None:
        super().__init__(**kwargs)
        self.seen: list[str] = []

    def _embed(self, texts: list[str]):  # type: ignore[no-untyped-def]
        self.seen.extend(texts)
        return super()._embed(texts)


@cache
def hierarchy(with_empty: bool = False) -> Hierarchy:
    docs = DOCS[:1] + EMPTY[:1] + DOCS[1:] + EMPTY[1:] if with_empty else DOCS
    return build_hierarchy(Corpus("toy", docs), max_chars=60, overlap_chars=10)


LEVELS = ("passages", "sections", "documents")


def built(s: Searcher) -> Searcher:
    """``s`` with its rawspan level indexes built."""
    for level in LEVELS:
        s.dense_index(level)  # type: ignore[arg-type]
    return s


@cache
def searcher() -> Searcher:
    return built(Searcher(hierarchy(), HashEncoder(dimension=32, window=16)))


def profile(level: str = "passages", ranker: str = "dense") -> Profile:
    return Profile(level=level, ranker=ranker, pool=5)  # type: ignore[arg-type]


QUERIES = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["", " ", "\t\n", "\x00", "\x1b[0m", "\u200b", "?", "try"]),
    st.text(alphabet=" \t\n\r\x0b\x0c\x1c\x85\xa0", max_size=12),
    st.text(alphabet=st.characters(categories=["Cc", "Cf", "Zs"]), max_size=8),
    st.lists(st.sampled_from(["try", "finally", "loop", "the", "x"]), min_size=20, max_size=80).map(
        " ".join
    ),
)
KS = st.one_of(
    st.integers(-5, 12),
    st.integers(10**6, 10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=3),
    st.booleans(),
    st.none(),
)


def _expect_error(text: str, k: object) -> type[Exception] | None:
    """The documented error for this query and k (k is checked first), or None."""
    if isinstance(k, bool) or not isinstance(k, int):
        return TypeError
    if k < 1 or not has_text(text):
        return ValueError
    return None


def _check_ranking(ranking: list[tuple[str, float]], k: int, allowed: set[str]) -> None:
    assert len(ranking) <= k
    ids = [u for u, _ in ranking]
    assert len(set(ids)) == len(ids)
    assert set(ids) <= allowed
    assert all(isinstance(s, float) and math.isfinite(s) for _, s in ranking)


@settings(max_examples=50, deadline=None)
@given(text=QUERIES, k=KS, level=st.sampled_from(SEARCH_LEVELS), ranker=st.sampled_from(RANKERS))
def test_search_ranks_or_refuses(text: str, k: object, level: str, ranker: str) -> None:
    s = searcher()
    expected = _expect_error(text, k)
    if expected is not None:
        with pytest.raises(expected):
            s.search(text, profile(level, ranker), k)  # type: ignore[arg-type]
        return
    hits = s.search(text, profile(level, ranker), k)  # type: ignore[arg-type]
    unit_level = "sections" if level == "fused" else level
    allowed = {u.id for u in text_units(s.hierarchy, unit_level)}  # type: ignore[arg-type]
    _check_ranking([(h.unit_id, h.score) for h in hits], k, allowed)  # type: ignore[arg-type]
    assert [h.rank for h in hits] == list(range(1, len(hits) + 1))


@pytest.mark.parametrize("text", ["", "   ", "\n\t", "\x00\x01", "\u200b"])
@pytest.mark.parametrize("level", SEARCH_LEVELS)
@pytest.mark.parametrize("ranker", RANKERS)
def test_empty_query_is_refused_before_embedding(text: str, level: str, ranker: str) -> None:
    enc = CountingEncoder(dimension=16)
    s = built(Searcher(hierarchy(), enc))
    enc.seen.clear()
    with pytest.raises(ValueError, match="query is empty: give a question with at least one"):
        s.search(text, profile(level, ranker))
    with pytest.raises(ValueError, match="1 of 2 queries are empty"):
        s.run([Query("ok", "try", ()), Query("bad", text, ())], profile(level, ranker))
    with pytest.raises(TypeError, match="query 'q' must be a str"):
        s.run([Query("q", None, ())], profile(level, ranker))  # type: ignore[arg-type]
    assert enc.seen == []


@pytest.mark.parametrize(
    ("k", "error", "message"),
    [
        (-1, ValueError, "k must be an int >= 1, got -1"),
        (0, ValueError, "k must be an int >= 1, got 0"),
        ("3", TypeError, r"k must be an int >= 1, got '3' \(str\)"),
        (2.5, TypeError, r"got 2.5 \(float\)"),
        (True, TypeError, r"got True \(bool\)"),
        (None, TypeError, r"got None \(NoneType\)"),
    ],
)
def test_bad_k_names_parameter_value_and_rule(k: object, error: type, message: str) -> None:
    s = searcher()
    with pytest.raises(error, match=message):
        s.search("try", profile("passages", "hybrid"), k)  # type: ignore[arg-type]
    with pytest.raises(error, match=message):
        s.search("try", profile("fused"), k)  # type: ignore[arg-type]
    with pytest.raises(error, match=message):
        s.run([Query("q", "try", ())], profile("sections", "bm25"), k)  # type: ignore[arg-type]
    with pytest.raises(error, match=message):
        s.dense_index("passages").search(np.ones((1, 32)), k, s.identity)  # type: ignore[arg-type]


def test_pool_and_fusion_parameters_are_checked() -> None:
    with pytest.raises(ValueError, match="pool must be an int >= 1, got -3"):
        Profile(ranker="hybrid", pool=-3)
    with pytest.raises(TypeError, match=r"pool must be an int >= 1, got 2\.0"):
        Profile(level="fused", pool=2.0)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"candidates must be an int >= 1, got '20' \(str\)"):
        Profile(candidates="20")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="rrf_k must be an int >= 0"):
        Profile(rrf_k="60")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="pool must be an int >= 1, got -1"):
        rrf([[("a", 1.0)]], pool=-1)
    with pytest.raises(TypeError, match="rrf_k must be an int >= 0"):
        rrf([[("a", 1.0)]], rrf_k=1.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="section_weight must be a number"):
        Profile(level="fused", section_weight="0.5")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown analyzer 'french'"):
        Profile(ranker="bm25", analyzer="french")


def test_bm25_keeps_k_zero_and_refuses_the_rest() -> None:
    index = BM25([["a"], ["b"]])
    assert index.search(["a"], k=0) == []
    assert top_k(np.array([1.0, 2.0]), np.int64(1)) == [(1, 2.0)]
    with pytest.raises(ValueError, match="k must be an int >= 0, got -1"):
        index.search(["a"], k=-1)
    with pytest.raises(TypeError, match="got '2'"):
        index.search_many([["a"]], k="2")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="bool"):
        top_k(np.array([1.0]), True)
    assert check_count(np.int32(4)) == 4


def test_large_k_returns_every_unit() -> None:
    n = len(text_units(hierarchy(), "sections"))
    for ranker in RANKERS:
        run = searcher().run([Query("q", "try", ())], profile("sections", ranker), 10**30)
        assert len(run["q"]) == n
        hits = searcher().search("try", profile("sections", ranker), 10**30)
        if ranker == "bm25":  # a hit holds a word of the question: no 0.0000 rows
            assert 0 < len(hits) < n
            assert all(h.score > 0 for h in hits)
        else:
            assert len(hits) == n


# --- non-finite vectors -----------------------------------------------------------------


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_nonfinite_vectors_are_refused_on_build_and_add(bad: float) -> None:
    vecs = np.eye(4, dtype=np.float32)
    vecs[1, 2] = vecs[3, 0] = bad
    with pytest.raises(ValueError, match=r"2 of 4 rows hold NaN or infinite values \(rows 1, 3\)"):
        VectorIndex(list("abcd"), vecs, "toy")
    index = VectorIndex(["a"], [[1.0, 0.0, 0.0, 0.0]], "toy")
    with pytest.raises(ValueError, match=r"new vectors: 2 of 4 rows .*\(rows 1, 3\)"):
        index.add(list("efgh"), vecs, "toy")
    assert index.ids == ["a"]
    assert len(index.vectors) == 1


def test_float32_overflow_and_underflow_are_refused() -> None:
    with pytest.raises(ValueError, match=r"row 0\)"):
        VectorIndex(["a"], [[1e300, 0.0]], "toy")  # inf once in float32
    with pytest.raises(ValueError, match=r"cannot be scaled to unit length \(row 1\)"):
        VectorIndex(["a", "b"], [[1.0, 0.0], [1e-45, 1e-45]], "toy")  # norm underflows
    with pytest.raises(ValueError, match=r"cannot be scaled to unit length \(row 0\)"):
        VectorIndex(["a"], [[3e38, 3e38]], "toy")  # norm overflows: it would become zero
    with pytest.raises(ValueError, match=r"become all zero \(row 1\) in float32"):
        VectorIndex(["a", "b"], [[1.0, 0.0], [1e-300, 2e-300]], "toy")  # a direction, not zero
    index = VectorIndex(["a", "z"], np.array([[1.0, 0.0], [0.0, 0.0]]), "toy")  # a real zero row
    with pytest.raises(ValueError, match=r"query vectors: 1 of 1 rows become all zero"):
        index.search([[1e-300, 0.0]], 1, "toy")
    assert not index.vectors[1].any()


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_nonfinite_query_is_refused(bad: float) -> None:
    index = VectorIndex(["a", "b"], np.eye(2), "toy")
    with pytest.raises(ValueError, match=r"query vectors: 1 of 2 rows .*\(row 1\)"):
        index.search([[1.0, 0.0], [bad, 1.0]], 1, "toy")
    with pytest.raises(ValueError, match="query vectors"):
        index.scores([[bad, 1.0]], "toy")


def test_zero_vectors_still_index_and_round_trip(tmp_path: Path) -> None:
    index = VectorIndex(["a", "z"], [[3.0, 4.0], [0.0, 0.0]], "toy")
    index.save(tmp_path)
    loaded = VectorIndex.load(tmp_path, "toy")
    assert loaded.search([[1.0, 0.0]], 2, "toy") == index.search([[1.0, 0.0]], 2, "toy")


def test_level_indexes_round_trip(tmp_path: Path) -> None:
    hi = searcher()
    for level in LEVELS:
        index = hi.dense_index(level)  # type: ignore[arg-type]
        index.save(tmp_path / level)
        loaded = VectorIndex.load(tmp_path / level, hi.identity)
        q = hi.encoder.encode_queries(["finally clause", "loop"])
        assert loaded.search(q, 5, hi.identity) == index.search(q, 5, hi.identity)
        assert np.array_equal(loaded.vectors, index.vectors)


def test_save_refuses_what_load_would_refuse(tmp_path: Path) -> None:
    index = VectorIndex([1, 2], np.eye(2), "toy")  # type: ignore[list-item]
    with pytest.raises(ValueError, match=r"cannot save this index.*not str"):
        index.save(tmp_path / "ids")
    assert not (tmp_path / "ids").exists()
    index = VectorIndex(["a", "b"], np.eye(2), "toy")
    index._vectors = np.array([[np.nan, 0.0], [0.0, 1.0]], dtype=np.float32)  # damaged in memory
    with pytest.raises(ValueError, match=r"would not load back: 1 of 2 rows .*\(row 0\)"):
        index.save(tmp_path / "nan")
    assert not (tmp_path / "nan").exists()


def test_load_refuses_nonfinite_rows_by_row(tmp_path: Path) -> None:
    index = VectorIndex(["a", "b"], np.eye(2), "toy")
    index.save(tmp_path)
    (vec_file,) = tmp_path.glob("vectors-*.npy")
    np.save(vec_file, np.array([[1.0, 0.0], [np.inf, 0.0]], dtype=np.float32))
    with pytest.raises(IndexFileError):
        VectorIndex.load(tmp_path, "toy")


# --- units with no text -------------------------------------------------------------------


def test_empty_documents_are_dropped_with_one_warning(caplog: pytest.LogCaptureFixture) -> None:
    h = hierarchy(with_empty=True)
    assert empty_units(h) == {
        "documents": ["blank", "spaces"],
        "sections": ["blank#s1", "spaces#s1"],
        "passages": [],
    }
    enc = CountingEncoder(dimension=16, window=16)
    with caplog.at_level(logging.WARNING):
        hi = built(Searcher(h, enc))
    notices = [r for r in caplog.records if "have no text" in r.getMessage()]
    assert len(notices) == 1
    assert "4 units have no text" in notices[0].getMessage()
    assert "documents 2, sections 2, passages 0" in notices[0].getMessage()
    assert not [t for t in enc.seen if not t.strip()]  # never embedded
    for level in ("documents", "sections"):
        for vectors in ("rawspan", "centroid", "first-window"):
            ids = set(hi.dense_index(level, vectors).ids)  # type: ignore[arg-type]
            assert not ids & {"blank", "spaces", "blank#s1", "spaces#s1"}
    for level in SEARCH_LEVELS:
        for ranker in RANKERS:
            hits = hi.search("statement", profile(level, ranker), k=100)
            assert not {h.doc_id for h in hits} & {"blank", "spaces"}
            assert hits
    assert not [t for t in enc.seen if not t.strip()]  # never embedded


def test_bm25_statistics_still_count_empty_units() -> None:
    """Dropping empty units from the ranking leaves the other units' BM25 scores as they were."""
    s = Searcher(hierarchy(with_empty=True), HashEncoder(dimension=8))
    bm25 = s.bm25_index("documents")
    assert bm25.n_docs == len(hierarchy(with_empty=True).units("documents"))
    full = dict(
        zip(
            [u.id for u in s.units("documents")],
            bm25.score(bm25.analyzer("try loop")).tolist(),
            strict=True,
        )
    )  # type: ignore[misc]
    for hit in s.search("try loop", profile("documents", "bm25"), k=10):
        assert hit.score == full[hit.unit_id]


def test_levels_functions_leave_empty_units_out() -> None:
    h = hierarchy(with_empty=True)
    enc = CountingEncoder(dimension=8)
    for level in ("documents", "sections"):
        for strategy in ("rawspan", "centroid"):
            ids, vecs, report = unit_vectors(h, enc, level, strategy)  # type: ignore[arg-type]
            assert ids == [u.id for u in text_units(h, level)]  # type: ignore[arg-type]
            assert vecs.shape[0] == len(ids) == report.n_units
    ids, _, _ = unit_vectors(h, enc, "passages", "first-window")
    assert ids == [p.id for p in h.passages]
    assert not [t for t in enc.seen if not t.strip()]


# --- queries longer than the window ---------------------------------------------------------


def _long_notices(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "queries exceed" in r.getMessage()]


def test_long_queries_get_one_warning(caplog: pytest.LogCaptureFixture) -> None:
    hi = searcher()  # window 16 tokens
    long_a, long_b = "try " * 20, "loop " * 30
    queries = [Query("a", long_a, ()), Query("b", long_b, ()), Query("c", "try", ())]
    with caplog.at_level(logging.WARNING):
        run = hi.run(queries, profile("fused", "hybrid"))
    (notice,) = _long_notices(caplog)
    assert "2 of 3 queries exceed the 16-token window" in notice
    assert "the longest by 14 tokens (30 tokens)" in notice
    # the vector is what the encoder returns: same ranking as a direct search
    enc = hi.encoder
    direct = hi.dense_index("sections").search(enc.encode_queries([long_b]), 10, hi.identity)[0]
    assert hi.run([Query("b", long_b, ())], profile("sections"))["b"] == direct
    assert run["a"]
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        hi.search(long_a, profile("passages", "hybrid"))
        hi.search(long_a, profile("fused", "bm25"))  # nothing embedded: no notice
        hi.search("try", profile("fused"))
    assert len(_long_notices(caplog)) == 1


def test_short_queries_get_no_warning(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        searcher().run([Query("q", "finally clause", ())], profile("fused"))
    assert not _long_notices(caplog)
