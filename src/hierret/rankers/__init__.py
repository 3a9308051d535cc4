"""Rankers: BM25 with its analyzers, and fusion (reciprocal rank, min-max blending)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hierret.rankers.analyzer import ANALYZERS, ENGLISH_STOP_WORDS, Analyzer, get_analyzer
    from hierret.rankers.bm25 import BM25, top_k
    from hierret.rankers.fusion import minmax_fuse, minmax_normalize, rrf

#: Each public name and the module that defines it; a name's module loads on first use.
_FACE = {
    "ANALYZERS": "hierret.rankers.analyzer",
    "ENGLISH_STOP_WORDS": "hierret.rankers.analyzer",
    "Analyzer": "hierret.rankers.analyzer",
    "get_analyzer": "hierret.rankers.analyzer",
    "BM25": "hierret.rankers.bm25",
    "top_k": "hierret.rankers.bm25",
    "minmax_fuse": "hierret.rankers.fusion",
    "minmax_normalize": "hierret.rankers.fusion",
    "rrf": "hierret.rankers.fusion",
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

    def __getattr__(name: str) -> Any:
        """Load a public name's module on first use (PEP 562)."""
        if name not in _FACE:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        module = importlib.import_module(_FACE[name])
        value = module if module.__name__ == f"{__name__}.{name}" else getattr(module, name)
        globals()[name] = value
        return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_FACE})
