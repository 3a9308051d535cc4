"""Late chunking over a grid of corpora and passage sizes, as one study object.

DR-005 (``06_dr005_beyond``) reads each passage's tokens in their section's
context (:class:`hierret.search.vectors.late.LateChunker`) and searches with those
passage vectors beside the ordinary ones. :class:`LateChunking` does that for
every cell of a :class:`~hierret.study.hierarchies.Hierarchies` grid: each
corpus's sections are encoded once for all its passage sizes
(:meth:`~hierret.search.vectors.late.LateChunker.passage_vectors_of`), and each cell
gets a searcher of its own that serves the late-chunked passage vectors
(:attr:`LateChunking.searchers`). :meth:`LateChunking.table` shows the context
each passage received, :meth:`LateChunking.cost` what a passage costs to
embed each way on this machine, :meth:`LateChunking.identity` what the record
says the vectors were.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from hierret.search.searcher import Searcher
from hierret.search.vectors.late import LateChunker
from hierret.study.cost import late_chunking_cost
from hierret.study.hierarchies import Cell, Hierarchies
from hierret.study.measured import Measurements

__all__ = ["LateChunking"]


class LateChunking:
    """Late-chunked passage vectors for every cell of a grid, with a searcher each.

    Parameters
    ----------
    grid : Hierarchies
        The corpora at their passage sizes; its encoder must give token vectors
        (a sentence-transformers model).
    overlap : int, default 64
        Tokens shared by consecutive windows of a long section.
    memo : Measurements, optional
        Where :meth:`cost` keeps its measurements, per machine and input
        (default: :class:`~hierret.study.measured.Measurements` in the vector
        cache's folder).

    Attributes
    ----------
    chunker : LateChunker
        Caches its vectors under its own identity.
    searchers : dict of Cell to Searcher
        Each cell's searcher, its passages served by the late-chunked vectors.

    Examples
    --------
    >>> grid = Hierarchies.load(["python-reference"], [900], "all-MiniLM-L6-v2",
    ...                         max_queries=2, max_docs=2)
    >>> late = LateChunking(grid, overlap=32)
    >>> late.table().index.tolist()
    [('python-reference', 900)]
    >>> bool(late.table().loc[("python-reference", 900), "passages"] > 0)
    True
    """

    def __init__(
        self, grid: Hierarchies, overlap: int = 64, *, memo: Measurements | None = None
    ) -> None:
        self.grid, self.overlap = grid, overlap
        self.memo = Measurements() if memo is None else memo
        self.chunker = LateChunker(grid.encoder, overlap=overlap)
        self.searchers: dict[Cell, Searcher] = {}
        summaries: dict[Cell, dict[str, float]] = {}
        for name in grid.corpora:
            cells = [(name, chars) for chars in grid.chunk_chars]
            hierarchies = [grid.hierarchies[c] for c in cells]
            # each section's tokens encoded once for every passage size
            vectors = self.chunker.passage_vectors_of(hierarchies)
            for cell, h, lv in zip(cells, hierarchies, vectors, strict=True):
                summaries[cell] = lv.summary()
                searcher = Searcher(h, grid.encoder)
                searcher.use_passage_vectors(lv.ids, lv.vectors, "late chunking")
                self.searchers[cell] = searcher
        self._context = pd.DataFrame(summaries).T.rename_axis(["corpus", "chars"])

    def table(self) -> pd.DataFrame:
        """The context each cell's passages received (means and shares,
        :meth:`hierret.search.vectors.late.LateVectors.summary`), indexed ``(corpus, chars)``."""
        return self._context

    def cost(
        self,
        passages: int = 64,
        cell: Cell | None = None,
        windows: Sequence[int | None] = (None, 512),
    ) -> pd.DataFrame:
        """Seconds and ms per passage, embedded afresh on this machine: each passage as
        one text, then late-chunked with each window length (``None``: the encoder's;
        :func:`hierret.study.cost.late_chunking_cost`), on the first ``passages`` of a
        cell (default: the grid's first), kept in :attr:`memo`.

        Raises
        ------
        KeyError
            ``cell`` is not in the grid.
        """
        at = next(iter(self.grid.hierarchies)) if cell is None else cell
        if at not in self.grid.hierarchies:
            raise KeyError(f"{at} is not a cell of the grid: one of {list(self.grid.hierarchies)}")
        return late_chunking_cost(
            self.grid.encoder,
            self.grid.hierarchies[at],
            passages,
            self.overlap,
            windows,
            memo=self.memo,
        )

    def identity(self) -> str:
        """The late chunker's identity, as the record states it."""
        return self.chunker.identity.describe()
