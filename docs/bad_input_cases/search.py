"""Bad input at the search boundary: what the package answers, case by case.

Each call builds a tiny index over a three-document corpus with the hash
encoder (no model), runs the package on one input and returns what it saw (a
:class:`~bad_input_cases.Facts`), or raises the package's own error. Where the
package may answer, the checks say what a right answer is (finite scores, no
blank document ranked, the warning that must be given) and that a saved index
loads again with the same ids and vectors. Each case takes a few milliseconds.
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import Callable
from dataclasses import replace
from functools import cache
from pathlib import Path

import numpy as np

from bad_input_cases import Case, Facts, kept, listen, right
from hierret.encoders import HashEncoder
from hierret.search.hits import Hit
from hierret.search.profile import Profile
from hierret.search.rankers.analyzer import get_analyzer
from hierret.search.searcher import Searcher
from hierret.search.vectors.index import IndexFileError, VectorIndex
from hierret.structure.hierarchy import Hierarchy, build_hierarchy
from hierret.structure.units import Corpus, Document, Query

DOCS = [
    Document(
        "try",
        "Try",
        "Try\n===\n\nThe try statement handles exceptions.\n\n"
        "Finally\n=======\n\nThe finally clause always runs.\n",
    ),
    Document("for", "For", "For\n===\n\nThe for statement loops over items.\n"),
    Document("with", "With", "The with statement enters a context manager.\n"),
]


ENCODER = HashEncoder(dimension=32, window=12)


def _hierarchy(with_empty: bool = False) -> Hierarchy:
    """The toy corpus's hierarchy, with a whitespace-only document added if asked."""
    docs = [*DOCS, Document("blank", "Blank", " \n\t")] if with_empty else DOCS
    return build_hierarchy(Corpus("toy", docs), max_chars=60, overlap_chars=10)


@cache
def _searcher() -> Searcher:
    """One small searcher over the toy corpus (window 12 tokens)."""
    return Searcher(_hierarchy(), ENCODER)


FUSED = Profile(level="fused")
SECTIONS = Profile(level="sections")


def _hits(hits: list[Hit] | list[tuple[str, float]]) -> Facts:
    scores = [h.score if isinstance(h, Hit) else h[1] for h in hits]  # hits or a ranking
    finite = all(math.isfinite(s) for s in scores)
    ids = [h.unit_id if isinstance(h, Hit) else h[0] for h in hits]
    return Facts(
        f"{len(hits)} hits, {'finite' if finite else 'NON-FINITE'} scores",
        n=len(hits),
        finite=finite,
        ids=ids,
        heard=[],
    )


def _with_warnings(run: Callable[[], Facts]) -> Facts:
    """``run()``'s facts, followed by the warnings the package gave meanwhile."""
    with listen() as heard:
        facts = run()
    facts.heard = heard
    facts.said += "".join(f"; {w}" for w in heard)
    return facts


_FINITE = right("finite scores", lambda f: f.n > 0 and f.finite)


def empty_query_fused() -> Facts:
    return _hits(_searcher().search("", FUSED))


def whitespace_query_hybrid() -> Facts:
    return _hits(_searcher().search(" \t\n", Profile(ranker="hybrid")))


def control_characters_query() -> Facts:
    return _hits(_searcher().search("\x00\x1b\u200b", SECTIONS))


def negative_k_hybrid() -> Facts:
    return _hits(_searcher().search("try", Profile(level="sections", ranker="hybrid"), k=-1))


def string_k() -> Facts:
    return _hits(_searcher().search("try", SECTIONS, k="3"))  # type: ignore[arg-type]


def float_k() -> Facts:
    return _hits(_searcher().search("try", FUSED, k=2.5))  # type: ignore[arg-type]


def huge_k() -> Facts:
    return _hits(_searcher().search("try", Profile(level="documents"), k=10**9))


def empty_document() -> Facts:
    def run() -> Facts:
        hits = Searcher(_hierarchy(with_empty=True), ENCODER).search(
            "a", Profile(level="documents"), k=10
        )
        facts = _hits(hits)
        facts.said += (
            ", the empty document ranked" if "blank" in facts.ids else ", none of them blank"
        )
        return facts

    return _with_warnings(run)


def long_query() -> Facts:
    return _with_warnings(lambda: _hits(_searcher().search("try the finally " * 10, FUSED)))


def nan_vector_added() -> object:
    index = VectorIndex(["a"], [[1.0, 0.0]], "toy")
    index.add(["b", "c"], [[0.0, 1.0], [math.nan, 1.0]], "toy")
    return f"{len(index)} vectors indexed"


def nan_query_vector() -> Facts:
    index = _searcher().dense_index("passages")
    query = np.full((1, index.dimension), np.nan, dtype=np.float32)
    return _hits(index.search(query, 3, index.identity)[0])


def infinite_vector_saved() -> object:
    index = VectorIndex(["a", "b"], [[1.0, 0.0], [math.inf, 1.0]], "toy")
    with tempfile.TemporaryDirectory() as folder:
        index.save(folder)
        return f"saved {len(VectorIndex.load(folder, 'toy'))} vectors and loaded them back"


def underflowing_vector() -> object:
    return VectorIndex(["a", "b"], np.array([[1.0, 0.0], [1e-300, 2e-300]]), "toy")


def _round_trip(index: VectorIndex, folder: Path, query: object) -> Facts:
    """Save ``index`` into ``folder``, load it back, compare ids, vectors and ranking."""
    index.save(folder)
    try:
        loaded = VectorIndex.load(folder, index.identity)
    except IndexFileError as err:
        return Facts(f"saved, but does not load: {err}", loads=False, same=False)
    same = (
        loaded.ids == index.ids
        and np.array_equal(loaded.vectors, index.vectors)
        and loaded.search(query, 5, index.identity) == index.search(query, 5, index.identity)
    )
    return Facts(
        f"saved and loaded {len(loaded)} vectors; "
        f"{'same' if same else 'DIFFERENT'} ids, vectors and ranking",
        loads=True,
        same=same,
    )


_LOADS = kept("the saved index loads again", lambda f: f.loads)
_SAME = right("the same ids, vectors and ranking", lambda f: f.same)


def valid_index_round_trip() -> Facts:
    hi = _searcher()
    query = hi.encoder.encode_queries(["finally clause"])
    return _round_trip(hi.dense_index("sections"), Path(tempfile.mkdtemp()), query)


def extreme_round_trip() -> Facts:
    rows = np.array(
        [
            [1e-19, 1e-19, 0.0],
            [1e19, -1e19, 0.0],
            [1.0, 1e-30, 0.0],
            [0.0, 0.0, 0.0],
            [-5e-20, 0.0, 7e-20],
        ]
    )  # finite, each one normalisable
    ids = ["", "ünïcödé", "a\nnew line", "tab\there", "../../etc/passwd"]
    ident = HashEncoder(dimension=3, query_prefix="«q»\n", passage_prefix="\u2028").identity
    return _round_trip(VectorIndex(ids, rows, ident), Path(tempfile.mkdtemp()), rows[:2])


def resaved_over_damage() -> Facts:
    index = _searcher().dense_index("passages")
    folder = Path(tempfile.mkdtemp())
    index.save(folder)
    npy = next(folder.glob("vectors-*.npy"))
    data = bytearray(npy.read_bytes())
    data[-3] ^= 0xFF  # the disk damages the vectors; the user saves the same index again
    npy.write_bytes(bytes(data))
    query = index.vectors[:1]
    return _round_trip(index, folder, query)


def infinity_written_into_saved_file() -> object:
    folder = Path(tempfile.mkdtemp())
    VectorIndex(["a", "b"], [[1.0, 0.0], [0.0, 1.0]], "toy").save(folder)
    npy = next(folder.glob("vectors-*.npy"))
    np.save(npy, np.array([[1.0, 0.0], [math.inf, 1.0]], dtype=np.float32))
    meta = folder / "index.json"  # a tool that rewrote the vectors and dropped the checksum
    meta.write_text(meta.read_text().replace('"vectors_sha256"', '"old_sha256"'))
    return VectorIndex.load(folder, "toy")


def save_onto_a_file() -> Facts:
    target = Path(tempfile.mkdtemp()) / "results.csv"
    target.write_text("q1,0.5\n")
    refused = None
    try:
        VectorIndex(["a"], [[1.0, 0.0]], "toy").save(target)
    except OSError as err:
        refused = err
    held = target.read_text() if target.is_file() else None
    return Facts(f"the file holds {held!r}", refused=refused, untouched=held == "q1,0.5\n")


def _no_word(level: str, text: str) -> Facts:
    """A BM25 search whose words the corpus never holds: every unit scores 0."""
    hits = _searcher().search(text, Profile(level=level, ranker="bm25"), 3)
    return Facts(
        f"{len(hits)} hits" + "".join(f"; {h.unit_id} {h.score:.4f}" for h in hits),
        n=len(hits),
        zero=[h.unit_id for h in hits if h.score <= 0],
    )


_NO_ZERO_HITS = right("no hits: a unit that matches no word is no hit", lambda f: f.n == 0)


def _tiny(texts: list[str], question: str, idf: str = "okapi") -> Facts:
    """BM25 over a folder of a few documents: Okapi's idf of every common word is <= 0."""
    docs = [Document(f"d{i}", f"D{i}", t) for i, t in enumerate(texts)]
    searcher = Searcher(build_hierarchy(Corpus("tiny", docs)), ENCODER, bm25_idf=idf)
    with listen() as heard:
        hits = searcher.search(question, Profile(level="documents", ranker="bm25"), 3)
    first = hits[0].doc_id if hits else None
    return Facts(
        f"first: {first} ({texts[int(first[1:])] if first else '-'})"
        + "".join(f"; {w.splitlines()[0][:160]}" for w in heard),
        first=first,
        warned=any("Lucene" in w for w in heard),
    )


_TINY_RIGHT = right(
    "the document holding both words first",
    lambda f: f.first == "d1",
)


def mapped_copies_differ() -> object:
    from hierret.search.vectors.index import MappedIndex

    rows = np.eye(3, dtype=np.float32)
    return MappedIndex([(["a", "b"], rows[:2]), (["b", "c"], rows[[0, 2]])], "toy")


def index_of_another_format() -> object:
    folder = Path(tempfile.mkdtemp())
    VectorIndex(["a", "b"], [[1.0, 0.0], [0.0, 1.0]], "toy").save(folder)
    meta = folder / "index.json"  # a newer hierret's layout, same file names
    meta.write_text(meta.read_text().replace('"format": 1', '"format": 7'))
    return VectorIndex.load(folder, "toy")


def _bm25_scores(level: str, text: str) -> dict[str, float]:
    searcher = _searcher()
    scores = searcher.bm25_index(level).score(get_analyzer("english")(text))  # type: ignore[arg-type]
    return {u.id: float(v) for u, v in zip(searcher.units(level), scores, strict=True)}  # type: ignore[arg-type]


def _hybrid(text: str, level: str = "passages") -> Facts:
    """The hybrid's hits, with how many a zero BM25 score helped rank (none is right)."""

    def run() -> Facts:
        searcher, pool = _searcher(), 5
        profile = Profile(level=level, ranker="hybrid", pool=pool)  # type: ignore[arg-type]
        ranking = searcher.run([Query("q", text, ())], profile, k=2 * pool)["q"]
        dense = searcher.run([Query("q", text, ())], replace(profile, ranker="dense"), k=pool)
        rank_of = {u: r for r, (u, _) in enumerate(dense["q"], start=1)}
        bm25 = _bm25_scores(level, text)
        from_nothing = [
            u
            for u, score in ranking
            if bm25[u] <= 0 and not (u in rank_of and math.isclose(score, 1 / (60 + rank_of[u])))
        ]
        facts = _hits(ranking)
        facts.said += f", {len(from_nothing)} ranked by a BM25 score of 0"
        facts.from_nothing = from_nothing
        facts.dense = [u for u, _ in dense["q"]]
        facts.matched = sum(v > 0 for v in bm25.values())
        return facts

    return _with_warnings(run)


def _fused_bm25(text: str) -> Facts:
    """Fused BM25 search's hits, with those no query term reaches at either level."""
    searcher = _searcher()
    ranking = searcher.run([Query("q", text, ())], Profile(level="fused", ranker="bm25"), k=50)
    parent = searcher.hierarchy.parents("passages", "sections")
    matched = {u for u, v in _bm25_scores("sections", text).items() if v > 0}
    matched |= {parent[u] for u, v in _bm25_scores("passages", text).items() if v > 0}
    facts = _hits(ranking["q"])
    facts.from_nothing = [u for u in facts.ids if u not in matched]
    facts.said += f", {len(facts.from_nothing)} matching no query term"
    return facts


def _past_the_pool() -> Facts:
    return _with_warnings(
        lambda: _hits(_searcher().search("try", Profile(level="fused", pool=2), k=10**9))
    )


_NOTHING_FROM_ZERO = right(
    "no unit is ranked by a BM25 score of 0 (a non-match)", lambda f: f.from_nothing == []
)
_DENSE_ORDER = right(
    "BM25 matched nothing: the hybrid is the dense ranking",
    lambda f: f.matched > 0 or f.ids[: len(f.dense)] == f.dense,
)

CASES: list[Case] = [
    ("a saved index whose index.json says format 7", index_of_another_format),
    (
        'BM25 passages for a question of words no document holds ("xylophone quagga")',
        lambda: _no_word("passages", "xylophone quagga"),
        _NO_ZERO_HITS,
    ),
    (
        'BM25 sections for a misspelt question ("finnaly clauze")',
        lambda: _no_word("sections", "finnaly clauze"),
        _NO_ZERO_HITS,
    ),
    (
        'BM25 documents for a question in another script ("наконец исключение")',
        lambda: _no_word("documents", "наконец исключение"),
        _NO_ZERO_HITS,
    ),
    (
        'BM25 on a two-document folder: "cats purr" over "Dogs bark at cats" and "Cats purr"',
        lambda: _tiny(["Dogs bark at cats", "Cats purr all day"], "cats purr"),
        _TINY_RIGHT,
    ),
    (
        "BM25 on a three-document folder where every query word is in two of them",
        lambda: _tiny(
            ["Red apples and green pears", "Green apples, red pears, ripe", "Blue plums"],
            "green apples red",
        ),
        right(
            "a document holding all three words first",
            lambda f: f.first in ("d0", "d1"),
        ),
    ),
    (
        "BM25 with bm25_idf='lucene' on the two-document folder",
        lambda: _tiny(["Dogs bark at cats", "Cats purr all day"], "cats purr", "lucene"),
        right("the document holding both words first", lambda f: f.first == "d1"),
    ),
    ("MappedIndex parts giving the id 'b' two different vectors", mapped_copies_differ),
    ("an empty query at the fused level", empty_query_fused),
    ("a whitespace-only query to the hybrid ranker", whitespace_query_hybrid),
    ("a query of control and zero-width characters", control_characters_query),
    ("k = -1 to the hybrid ranker", negative_k_hybrid),
    ('k = "3" (a string) at the sections level', string_k),
    ("k = 2.5 at the fused level", float_k),
    (
        "k = 10**9 at the documents level",
        huge_k,
        right(
            "each of the 3 documents once, finite scores",
            lambda f: sorted(f.ids) == ["for", "try", "with"] and f.finite,
        ),
    ),
    (
        'a hybrid query of stop words only ("the of and is it")',
        lambda: _hybrid("the of and is it"),
        (_NOTHING_FROM_ZERO, _DENSE_ORDER, _FINITE),
    ),
    (
        'a hybrid query of punctuation only ("?!")',
        lambda: _hybrid("?!", "sections"),
        (_NOTHING_FROM_ZERO, _DENSE_ORDER, _FINITE),
    ),
    (
        'a hybrid query of stop words and one matching word ("what is the finally of it?")',
        lambda: _hybrid("what is the finally of it?", "documents"),
        (_NOTHING_FROM_ZERO, _FINITE),
    ),
    (
        'fused BM25 search for stop words only ("is it?")',
        lambda: _fused_bm25("is it?"),
        right("no hits: nothing matches", lambda f: f.n == 0),
    ),
    (
        'fused BM25 search mixing stop words and a match ("the try of it")',
        lambda: _fused_bm25("the try of it"),
        (_NOTHING_FROM_ZERO, _FINITE),
    ),
    (
        "k = 10**9 at the fused level with pool 2 (the pool caps the ranking)",
        _past_the_pool,
        (
            _FINITE,
            right(
                "a warning names the cap (pool=2) and how to raise it",
                lambda f: any("pool=2" in w and "--pool" in w for w in f.heard),
            ),
        ),
    ),
    (
        "a corpus holding a document with no text",
        empty_document,
        (
            right("the blank document is never ranked", lambda f: "blank" not in f.ids),
            _FINITE,
            right(
                "a warning names the units left out",
                lambda f: any("'blank'" in w and "left out" in w for w in f.heard),
            ),
        ),
    ),
    (
        "a query longer than the encoder's token window",
        long_query,
        (
            _FINITE,
            right(
                "a warning says how many queries exceed the window, and by how much",
                lambda f: any(
                    "1 of 1 queries exceed the 12-token window" in w and "by 18 tokens" in w
                    for w in f.heard
                ),
            ),
        ),
    ),
    ("a NaN row added to a vector index", nan_vector_added),
    ("a NaN query vector", nan_query_vector),
    ("a vector of values too small for float32 ([1e-300, 2e-300]) indexed", underflowing_vector),
    ("an infinite vector indexed, saved and loaded", infinite_vector_saved),
    (
        "a saved index whose vectors file was rewritten with a +inf row (checksum dropped)",
        infinity_written_into_saved_file,
    ),
    ("a valid level index saved and loaded back", valid_index_round_trip, (_LOADS, _SAME)),
    (
        "an index of extreme but finite values and odd ids and prefixes, saved and loaded",
        extreme_round_trip,
        (_LOADS, _SAME),
    ),
    (
        "an index saved again over a folder whose vectors file was damaged since",
        resaved_over_damage,
        (_LOADS, _SAME),
    ),
    (
        "VectorIndex.save to a path that is a regular file",
        save_onto_a_file,
        kept("the file is untouched", lambda f: f.untouched),
    ),
]
