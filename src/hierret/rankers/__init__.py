"""Rankers: BM25 with its analyzers, and fusion (reciprocal rank, min-max blending)."""

from hierret.rankers.analyzer import ANALYZERS, ENGLISH_STOP_WORDS, Analyzer, get_analyzer
from hierret.rankers.bm25 import BM25, top_k
from hierret.rankers.fusion import minmax_fuse, minmax_normalize, rrf

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
