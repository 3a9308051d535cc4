"""BM25 and analyzers: scores equal rank_bm25.BM25Okapi's, analyzers behave as documented."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
import rank_bm25
from hypothesis import given, settings
from hypothesis import strategies as st

from hierret.search.rankers import (
    ANALYZERS,
    BM25,
    ENGLISH_STOP_WORDS,
    Analyzer,
    get_analyzer,
    top_k,
)

TOL = 1e-9


def assert_same_scores(
    corpus: list[list[str]],
    queries: list[list[str]],
    k1: float = 1.5,
    b: float = 0.75,
    epsilon: float = 0.25,
) -> BM25:
    ours = BM25(corpus, k1=k1, b=b, epsilon=epsilon)
    ref = rank_bm25.BM25Okapi(corpus, k1=k1, b=b, epsilon=epsilon)
    for query in queries:
        np.testing.assert_allclose(
            ours.score(query), ref.get_scores(query), rtol=TOL, atol=TOL, err_msg=str(query)
        )
    return ours


# --- hand corpus -------------------------------------------------------------

HAND = [
    ["common", "apple", "apple", "banana"],
    ["common", "banana", "cherry"],
    [],
    ["common", "cherry", "cherry", "cherry", "date", "apple"],
    ["common", "elder"],
]


def test_hand_corpus_matches_rank_bm25() -> None:
    queries = [
        ["apple"],
        ["apple", "apple"],  # repeated query term counts twice
        ["common"],  # in every non-empty document: negative idf, epsilon floor
        ["cherry", "common", "date", "cherry"],
        ["unknown"],
        [],
        ["elder", "unknown", "banana"],
    ]
    index = assert_same_scores(HAND, queries)
    ref = rank_bm25.BM25Okapi(HAND)
    assert index.idf[index.vocabulary["common"]] == pytest.approx(ref.idf["common"], abs=TOL)
    assert math.log(5 - 4 + 0.5) - math.log(4 + 0.5) < 0  # "common" really was floored
    assert index.idf[index.vocabulary["common"]] == pytest.approx(0.25 * ref.average_idf)
    assert index.average_idf == pytest.approx(ref.average_idf, abs=TOL)
    assert index.avgdl == ref.avgdl
    np.testing.assert_array_equal(index.doc_len, ref.doc_len)


@pytest.mark.parametrize(
    ("k1", "b", "epsilon"), [(1.2, 0.75, 0.25), (0.5, 0.0, 0.5), (2.0, 0.99, 0.1), (0.01, 0.3, 1.0)]
)
def test_parameters_match_rank_bm25(k1: float, b: float, epsilon: float) -> None:
    assert_same_scores(HAND, [["apple", "common"], ["cherry"]], k1=k1, b=b, epsilon=epsilon)


@pytest.mark.parametrize(("k1", "b"), [(0.0, 0.75), (1.5, 1.0)])
def test_no_nan_where_rank_bm25_divides_zero_by_zero(k1: float, b: float) -> None:
    # k1 = 0, or b = 1 with an empty document: rank_bm25 computes 0/0 for a term
    # absent from a document. Here an absent term adds exactly 0.
    index = BM25(HAND, k1=k1, b=b)
    with np.errstate(invalid="ignore"):
        ref = rank_bm25.BM25Okapi(HAND, k1=k1, b=b).get_scores(["apple"])
    ours = index.score(["apple"])
    assert np.isfinite(ours).all()
    assert np.isnan(ref).any()
    has_apple = np.array(["apple" in doc for doc in HAND])
    assert (ours[~has_apple] == 0).all()
    np.testing.assert_allclose(ours[has_apple], ref[has_apple], rtol=TOL, atol=TOL)


def test_repeated_query_terms_add_up() -> None:
    index = BM25(HAND)
    np.testing.assert_allclose(index.score(["apple"] * 3), 3 * index.score(["apple"]))


def test_negative_average_idf_gives_negative_floor() -> None:
    # Most terms in most documents: the mean idf is negative, and so is the floor.
    corpus = [["x", "y", "z"], ["x", "y"], ["x", "y", "w"]]
    index = assert_same_scores(corpus, [["x"], ["y", "w"], ["z", "x"]])
    assert index.average_idf < 0


def test_empty_documents_score_zero_and_unknown_query_is_all_zero() -> None:
    index = BM25(HAND)
    assert index.score(["apple", "cherry", "common"])[2] == 0.0
    assert not index.score(["nothing", "here"]).any()
    assert index.score([]).tolist() == [0.0] * len(HAND)


def test_all_documents_empty() -> None:
    index = BM25([[], []])  # rank_bm25 divides by zero here
    assert len(index.vocabulary) == 0
    assert index.score(["a"]).tolist() == [0.0, 0.0]
    assert index.search(["a"], k=5) == [(0, 0.0), (1, 0.0)]


def test_empty_corpus_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="empty corpus"):
        BM25([])
    with pytest.raises(ValueError, match="empty corpus"):
        BM25.from_texts([])


def test_type_errors() -> None:
    with pytest.raises(TypeError):
        BM25("not a corpus")
    with pytest.raises(TypeError):
        BM25(["a document as a str"])
    with pytest.raises(TypeError):
        BM25([["ok", 3]])  # type: ignore[list-item]
    index = BM25(HAND)
    with pytest.raises(TypeError):
        index.score("apple banana")
    with pytest.raises(TypeError):
        index.score([b"apple"])  # type: ignore[list-item]
    with pytest.raises(TypeError):
        index.search_many("apple")
    with pytest.raises(TypeError):
        Analyzer()(b"bytes")  # type: ignore[arg-type]


def test_parameter_checks() -> None:
    with pytest.raises(ValueError, match="k1"):
        BM25(HAND, k1=-1)
    with pytest.raises(ValueError, match="b must"):
        BM25(HAND, b=1.5)
    with pytest.raises(ValueError, match=">= 0"):
        BM25(HAND).search(["apple"], k=-1)


def test_search_order_and_ties() -> None:
    corpus = [["b"], ["a"], ["a"], ["c"], ["a"]]
    index = BM25(corpus)
    hits = index.search(["a"], k=2)
    assert [i for i, _ in hits] == [1, 2]  # equal scores: lower index first
    assert hits[0][1] == hits[1][1]
    assert [i for i, _ in index.search(["a"], k=10)] == [1, 2, 4, 0, 3]
    assert index.search(["a"], k=0) == []
    assert all(isinstance(i, int) and isinstance(s, float) for i, s in hits)


def test_top_k_ties_at_the_cut_follow_index() -> None:
    scores = np.array([1.0, 3.0, 1.0, 1.0, 2.0, 1.0])
    assert top_k(scores, 3) == [(1, 3.0), (4, 2.0), (0, 1.0)]
    assert top_k(scores, 4) == [(1, 3.0), (4, 2.0), (0, 1.0), (2, 1.0)]
    assert [i for i, _ in top_k(scores, 99)] == [1, 4, 0, 2, 3, 5]


def test_search_many_equals_search() -> None:
    index = BM25(HAND)
    queries = [["apple"], ["cherry", "common"], [], ["unknown"], ["date", "date"]]
    expected = [index.search(q, k=3) for q in queries]
    assert index.search_many(queries, k=3) == expected


def test_pickle_round_trip() -> None:
    index = BM25.from_texts(["The cat sat.", "Dogs are running.", "A cat ran."])
    again = pickle.loads(pickle.dumps(index))
    assert again.analyzer == index.analyzer == get_analyzer("english")
    query = get_analyzer("english")("cats")
    assert again.search(query, k=3) == index.search(query, k=3)


# --- generated corpora -------------------------------------------------------

_words = st.sampled_from(["a", "b", "c", "d", "e", "f", "g", "h"]) | st.text(min_size=1, max_size=3)
_doc = st.lists(_words, max_size=12)


@settings(max_examples=150, deadline=None)
@given(
    corpus=st.lists(_doc, min_size=1, max_size=12).filter(lambda c: any(c)),
    queries=st.lists(st.lists(_words, max_size=6), min_size=1, max_size=4),
    k1=st.floats(0.01, 3.0),  # k1 = 0 and b = 1 make rank_bm25 compute 0/0: tested above
    b=st.floats(0.0, 0.99),
)
def test_generated_corpora_match_rank_bm25(
    corpus: list[list[str]], queries: list[list[str]], k1: float, b: float
) -> None:
    assert_same_scores(corpus, queries, k1=k1, b=b)


# --- the Python reference corpus ---------------------------------------------


def _python_reference_passages(size: int = 900) -> list[str]:
    from pydoc_data.topics import topics

    return [
        text[start : start + size]
        for _, text in sorted(topics.items())
        for start in range(0, len(text), size)
    ]


PY_QUERIES = [
    "How does the try statement's finally clause behave?",
    "__init__ method called when an instance is created",
    "augmented assignment operators like +=",
    "What does the with statement do with context managers __enter__ __exit__?",
    "lambda expressions",
]


@pytest.mark.parametrize("analyzer", sorted(ANALYZERS))
def test_python_reference_passages_match_rank_bm25(analyzer: str) -> None:
    passages = _python_reference_passages()
    assert len(passages) > 300
    an = get_analyzer(analyzer)
    tokens = [an(p) for p in passages]
    queries = [an(q) for q in PY_QUERIES]
    index = assert_same_scores(tokens, queries)
    ref = rank_bm25.BM25Okapi(tokens)
    for query in queries:
        ref_scores = ref.get_scores(query)
        ref_top = np.lexsort((np.arange(len(passages)), -ref_scores))[:10]
        assert [i for i, _ in index.search(query, k=10)] == ref_top.tolist()
    assert index.search_many(queries, k=10) == [index.search(q, k=10) for q in queries]


def test_python_reference_from_texts_finds_the_topic() -> None:
    passages = _python_reference_passages()
    index = BM25.from_texts(passages, "english")
    best, _ = index.search(get_analyzer("english")("try except finally clause"), k=1)[0]
    assert "finally" in passages[best]


# --- analyzers ---------------------------------------------------------------


def test_english_stop_words_are_lucene_set() -> None:
    assert len(ENGLISH_STOP_WORDS) == 33
    assert {"the", "a", "and", "with", "will"} <= ENGLISH_STOP_WORDS


def test_english_analyzer() -> None:
    english = get_analyzer("english")
    assert get_analyzer() is english
    assert english("RUNNING Runs") == ["run", "run"]
    assert english("The cat is on the mat") == ["cat", "mat"]
    assert english("Straße STRASSE") == ["strass", "strass"]  # casefold, then stem
    assert english("Python's") == ["python"]
    assert english("os.path.join(a, b)") == ["os", "path", "join", "b"]
    assert english("__init__ sys.path_hooks ___") == ["init", "sys", "path_hook"]
    assert english("x1 2024 3.14") == ["x1", "2024", "3", "14"]
    assert english("") == []
    assert english("   \n\t ") == []


def test_english_analyzer_unicode_does_not_crash() -> None:
    english = get_analyzer("english")
    assert english("ΣΊΣΥΦΟΣ") == english("σίσυφος") == english("σίσυφοσ")  # final sigma
    assert english("漢字かな テスト") == ["漢字かな", "テスト"]  # not segmented
    assert english("cafe\u0301") == english("café")  # combining mark composes under NFKC
    assert english("\u0301\u0300") == []  # lone combining marks are not words
    assert english("ﬁle") == english("file")
    assert all(isinstance(t, str) for t in english("emoji 🙂 and ½ and \x00 nul"))


def test_whitespace_analyzer_is_str_split() -> None:
    ws = get_analyzer("whitespace")
    for text in ["Hello, World!  The   END", "", " a\tb\nc ", "Σ ß __init__"]:
        assert ws(text) == text.split()


def test_get_analyzer_errors() -> None:
    with pytest.raises(ValueError, match="'english', 'whitespace'"):
        get_analyzer("klingon")
    with pytest.raises(TypeError):
        get_analyzer(3)  # type: ignore[arg-type]
    custom = Analyzer(name="custom", stemmer=None)
    assert get_analyzer(custom) is custom
    assert custom("running") == ["running"]
    with pytest.raises(KeyError):
        Analyzer(stemmer="klingon")


def test_lucene_idf_ranks_a_tiny_corpus_by_the_terms_it_holds(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Two documents: Okapi's idf of every term is <= 0, and says so; Lucene's is not."""
    texts = ["Dogs bark at cats", "Cats purr"]
    okapi = BM25.from_texts(texts)
    with caplog.at_level("WARNING", logger="hierret"):
        wrong = okapi.search(okapi.analyzer("cats purr"), 2)
        okapi.search(okapi.analyzer("cats purr"), 2)
    assert wrong[0][0] == 0  # the dogs first: what the warning is about
    assert caplog.text.count("every query term found") == 1  # once per index
    lucene = BM25.from_texts(texts, idf="lucene")
    assert [i for i, _ in lucene.search(lucene.analyzer("cats purr"), 2)] == [1, 0]
    n, df = 2, lucene.doc_freq.astype(float)
    assert np.allclose(lucene.idf, np.log(1 + (n - df + 0.5) / (df + 0.5)))
    assert (lucene.idf > 0).all()
    with pytest.raises(ValueError, match="idf must be one of"):
        BM25.from_texts(texts, idf="bm25+")


def test_no_warning_where_okapi_idf_ranks(caplog: pytest.LogCaptureFixture) -> None:
    index = BM25.from_texts([f"document {i} about topic {i}" for i in range(20)])
    with caplog.at_level("WARNING", logger="hierret"):
        index.search(index.analyzer("topic 3"), 3)
    assert "idf" not in caplog.text


def test_matches_names_documents_holding_a_query_term_whatever_their_score() -> None:
    index = BM25.from_texts(["Dogs bark at cats", "Cats purr", "Birds sing"])
    assert index.matches(index.analyzer("cats")).tolist() == [True, True, False]
    assert index.matches(index.analyzer("zebra")).tolist() == [False, False, False]
