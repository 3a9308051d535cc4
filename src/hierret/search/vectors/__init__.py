"""Unit vectors: how a unit's vector is made, and the exact index over them.

A passage's vector is its text's; a section's or a document's is made by a
strategy (:func:`unit_vectors`: the raw span embedded in windows, the centroid
of its passages, or its first window; :class:`PoolingReport` says how many were
pooled), or, late-chunked, from one pass over the whole text's tokens
(:class:`LateChunker`). :class:`VectorIndex` ranks them exactly (brute force
over unit-normalized rows, ties broken by id), in memory or mapped from disk
(:class:`MappedIndex`). Where its parts live: ``levels`` (unit vectors by
strategy), ``late`` (late chunking), ``index`` (the exact index and its file).
Each name loads its module on first use (PEP 562).

Examples
--------
>>> from hierret.encoders import HashEncoder
>>> from hierret.search.vectors import VectorIndex
>>> enc = HashEncoder(dimension=16)
>>> index = VectorIndex(["a", "b"], enc.encode_passages(["cats purr", "dogs bark"]), enc.identity)
>>> index.search(enc.encode_queries(["dogs"]), k=1, identity=enc.identity)[0][0][0]
'b'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import hierret._face as _face

if TYPE_CHECKING:
    from hierret.search.vectors.index import (
        FAISS_MIN_ROWS,
        INDEX_FILE,
        IdentityLike,
        IdentityMismatchError,
        IndexFileError,
        MappedIndex,
        StaleIndexWarning,
        VectorIndex,
        exact_scores,
        normalize,
    )
    from hierret.search.vectors.late import (
        LateChunker,
        LateVectors,
        TokenVectors,
        best_windows,
        plan_windows,
    )
    from hierret.search.vectors.levels import (
        STRATEGIES,
        PoolingReport,
        Strategy,
        embed_spans,
        empty_units,
        text_units,
        unit_vectors,
    )

#: Each public name and the module that defines it; a name's module loads on first use.
_FACE = {
    "STRATEGIES": "hierret.search.vectors.levels",
    "PoolingReport": "hierret.search.vectors.levels",
    "Strategy": "hierret.search.vectors.levels",
    "embed_spans": "hierret.search.vectors.levels",
    "empty_units": "hierret.search.vectors.levels",
    "text_units": "hierret.search.vectors.levels",
    "unit_vectors": "hierret.search.vectors.levels",
    "LateChunker": "hierret.search.vectors.late",
    "LateVectors": "hierret.search.vectors.late",
    "TokenVectors": "hierret.search.vectors.late",
    "best_windows": "hierret.search.vectors.late",
    "plan_windows": "hierret.search.vectors.late",
    "FAISS_MIN_ROWS": "hierret.search.vectors.index",
    "INDEX_FILE": "hierret.search.vectors.index",
    "IdentityLike": "hierret.search.vectors.index",
    "IdentityMismatchError": "hierret.search.vectors.index",
    "IndexFileError": "hierret.search.vectors.index",
    "MappedIndex": "hierret.search.vectors.index",
    "StaleIndexWarning": "hierret.search.vectors.index",
    "VectorIndex": "hierret.search.vectors.index",
    "exact_scores": "hierret.search.vectors.index",
    "normalize": "hierret.search.vectors.index",
}

__all__ = [
    "FAISS_MIN_ROWS",
    "INDEX_FILE",
    "STRATEGIES",
    "IdentityLike",
    "IdentityMismatchError",
    "IndexFileError",
    "LateChunker",
    "LateVectors",
    "MappedIndex",
    "PoolingReport",
    "StaleIndexWarning",
    "Strategy",
    "TokenVectors",
    "VectorIndex",
    "best_windows",
    "embed_spans",
    "empty_units",
    "exact_scores",
    "normalize",
    "plan_windows",
    "text_units",
    "unit_vectors",
]

if not TYPE_CHECKING:  # mypy reads the imports above, so a misspelt name stays an error
    __getattr__, __dir__ = _face.lazy(__name__, _FACE)
