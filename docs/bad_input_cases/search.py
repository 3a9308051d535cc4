"""Bad input at the search boundary: what the package answers, case by case.

``CASES`` is a list of ``(input, call)``: ``input`` says in a few words what a
user gives the package, ``call()`` builds a tiny index over a three-document
corpus with the hash encoder (no model), runs the package on that input and
returns a short description of the outcome, or raises the package's own
error. Each case takes a few milliseconds.

Run this file to print the table::

    python docs/bad_input_cases/search.py
"""

from __future__ import annotations

import logging
import math
import tempfile
from collections.abc import Callable
from functools import cache

import numpy as np

from hierret.encoders import HashEncoder
from hierret.hierarchy import Hierarchy, build_hierarchy
from hierret.hits import Hit
from hierret.index import VectorIndex
from hierret.profile import Profile
from hierret.search import Searcher
from hierret.units import Corpus, Document

DOCS = [
    Document("try", "Try", "Try\n===\n\nThe try statement handles exceptions.\n\n"
             "Finally\n=======\n\nThe finally clause always runs.\n"),
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


def _hits(hits: list[Hit] | list[tuple[str, float]]) -> str:
    scores = [h.score if isinstance(h, Hit) else h[1] for h in hits]  # hits or a ranking
    finite = "finite" if all(math.isfinite(s) for s in scores) else "NON-FINITE"
    return f"{len(hits)} hits, {finite} scores"


def _with_warnings(run: Callable[[], str]) -> str:
    """``run()``'s outcome, followed by the warnings the package logged meanwhile."""
    records: list[logging.LogRecord] = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = records.append  # type: ignore[method-assign]
    root = logging.getLogger("hierret")
    root.addHandler(handler)
    try:
        outcome = run()
    finally:
        root.removeHandler(handler)
    notes = "; ".join(f"warning: {r.getMessage()}" for r in records)
    return f"{outcome}; {notes}" if notes else outcome


def empty_query_fused() -> str:
    return _hits(_searcher().search("", FUSED))


def whitespace_query_hybrid() -> str:
    return _hits(_searcher().search(" \t\n", Profile(ranker="hybrid")))


def control_characters_query() -> str:
    return _hits(_searcher().search("\x00\x1b\u200b", SECTIONS))


def negative_k_hybrid() -> str:
    return _hits(_searcher().search("try", Profile(level="sections", ranker="hybrid"), k=-1))


def string_k() -> str:
    return _hits(_searcher().search("try", SECTIONS, k="3"))  # type: ignore[arg-type]


def float_k() -> str:
    return _hits(_searcher().search("try", FUSED, k=2.5))  # type: ignore[arg-type]


def huge_k() -> str:
    return _hits(_searcher().search("try", Profile(level="documents"), k=10**9))


def empty_document() -> str:
    def run() -> str:
        hits = Searcher(_hierarchy(with_empty=True), ENCODER).search(
            "a", Profile(level="documents"), k=10)
        blank = "blank" in {h.doc_id for h in hits}
        return f"{_hits(hits)}, {'the empty document ranked' if blank else 'none of them blank'}"

    return _with_warnings(run)


def long_query() -> str:
    return _with_warnings(lambda: _hits(_searcher().search("try the finally " * 10, FUSED)))


def nan_vector_added() -> str:
    index = VectorIndex(["a"], [[1.0, 0.0]], "toy")
    index.add(["b", "c"], [[0.0, 1.0], [math.nan, 1.0]], "toy")
    return f"{len(index)} vectors indexed"


def nan_query_vector() -> str:
    index = _searcher().dense_index("passages")
    query = np.full((1, index.dimension), np.nan, dtype=np.float32)
    return _hits(index.search(query, 3, index.identity)[0])


def infinite_vector_saved() -> str:
    index = VectorIndex(["a", "b"], [[1.0, 0.0], [math.inf, 1.0]], "toy")
    with tempfile.TemporaryDirectory() as folder:
        index.save(folder)
        return f"saved {len(VectorIndex.load(folder, 'toy'))} vectors and loaded them back"


def valid_index_round_trip() -> str:
    hi = _searcher()
    index = hi.dense_index("sections")
    query = hi.encoder.encode_queries(["finally clause"])
    with tempfile.TemporaryDirectory() as folder:
        index.save(folder)
        loaded = VectorIndex.load(folder, hi.identity)
        same = loaded.search(query, 5, hi.identity) == index.search(query, 5, hi.identity)
    return f"saved and loaded {len(loaded)} vectors; {'same' if same else 'DIFFERENT'} ranking"


CASES: list[tuple[str, Callable[[], object]]] = [
    ("an empty query at the fused level", empty_query_fused),
    ("a whitespace-only query to the hybrid ranker", whitespace_query_hybrid),
    ("a query of control and zero-width characters", control_characters_query),
    ("k = -1 to the hybrid ranker", negative_k_hybrid),
    ('k = "3" (a string) at the sections level', string_k),
    ("k = 2.5 at the fused level", float_k),
    ("k = 10**9 at the documents level", huge_k),
    ("a corpus holding a document with no text", empty_document),
    ("a query longer than the encoder's token window", long_query),
    ("a NaN row added to a vector index", nan_vector_added),
    ("a NaN query vector", nan_query_vector),
    ("an infinite vector indexed, saved and loaded", infinite_vector_saved),
    ("a valid level index saved and loaded back", valid_index_round_trip),
]


if __name__ == "__main__":
    for text, call in CASES:
        try:
            outcome = str(call())
        except (TypeError, ValueError) as err:
            outcome = f"{type(err).__name__}: {err}"
        print(f"- {text}\n    {outcome}")
