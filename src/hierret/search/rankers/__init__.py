"""Rankers: BM25 with its analyzers, and fusion (reciprocal rank, min-max blending)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import hierret._face as _face

if TYPE_CHECKING:
    from hierret.search.rankers.analyzer import (
        ANALYZERS,
        ENGLISH_STOP_WORDS,
        Analyzer,
        get_analyzer,
    )
    from hierret.search.rankers.bm25 import BM25, top_k
    from hierret.search.rankers.fusion import minmax_fuse, minmax_normalize, rrf

#: Each public name and the module that defines it; a name's module loads on first use.
_FACE = {
    "ANALYZERS": "hierret.search.rankers.analyzer",
    "ENGLISH_STOP_WORDS": "hierret.search.rankers.analyzer",
    "Analyzer": "hierret.search.rankers.analyzer",
    "get_analyzer": "hierret.search.rankers.analyzer",
    "BM25": "hierret.search.rankers.bm25",
    "top_k": "hierret.search.rankers.bm25",
    "minmax_fuse": "hierret.search.rankers.fusion",
    "minmax_normalize": "hierret.search.rankers.fusion",
    "rrf": "hierret.search.rankers.fusion",
}

__all__ = [
    "ANALYZERS",
    "BM25",
    "ENGLISH_STOP_WORDS",
    "Analyzer",
    "get_analyzer",
    "minmax_fuse",
    "minmax_normalize",
    "rrf",
    "top_k",
]

if not TYPE_CHECKING:  # mypy reads the imports above, so a misspelt name stays an error
    __getattr__, __dir__ = _face.lazy(__name__, _FACE)
