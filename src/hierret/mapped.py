"""Exact dense search over vectors kept in parts: memory-mapped cache shards.

:class:`MappedIndex` ranks like :class:`~hierret.index.VectorIndex` over the
same rows put together, bit for bit (same scores, same tie rule), without
copying the rows into one matrix: each part (a shard's memory-mapped vectors,
:meth:`hierret.cache.VectorCache.mapped`) is read a block of rows at a time.
Rows are normalised block by block with the index's own arithmetic (row by
row, so a row's unit vector does not depend on its block); the candidates of
each block are kept when within :func:`~hierret.index.exact_scores`' float32
slack of the best ``k`` so far (a threshold that only rises, so no row of the
final top ``k`` is dropped), and the candidates are scored once more with
:func:`~hierret.index.exact_scores` and ordered by :func:`hierret.runs.rank`'s
rule, as the one-matrix index does.

Memory: one block of scores (``block_rows`` x queries float32) and the
candidates; the parts stay on disk until read.

Examples
--------
>>> import numpy as np
>>> parts = [(["a", "b"], np.eye(3, dtype=np.float32)[:2]),
...          (["c"], np.eye(3, dtype=np.float32)[2:])]
>>> MappedIndex(parts, identity="toy").search([[0.0, 0.0, 1.0]], k=2, identity="toy")
[[('c', 1.0), ('b', 0.0)]]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from hierret._validate import check_count
from hierret.index import IdentityLike, _mismatch, _same, _slack, _unit_rows, exact_scores
from hierret.runs import Ranking, tie_keys

__all__ = ["MappedIndex"]


class MappedIndex:
    """Exact inner-product search over parts of vectors, as one :class:`VectorIndex`.

    Parameters
    ----------
    parts : sequence of (ids, vectors)
        Unit ids and their vectors (any array, e.g. a :class:`numpy.memmap`),
        part by part; ids unique over all parts.
    identity : EncoderIdentity or str
        The encoder that wrote the vectors (checked against the queries').
    block_rows : int, default 65536
        Rows read and scored at a time.
    """

    def __init__(
        self,
        parts: Sequence[tuple[Sequence[str], npt.ArrayLike]],
        identity: IdentityLike,
        block_rows: int = 1 << 16,
    ) -> None:
        self.parts = [np.asarray(m) for _, m in parts]
        self.ids = [u for ids, _ in parts for u in ids]
        if any(p.ndim != 2 for p in self.parts):
            raise ValueError("each part's vectors must be a 2-d array")
        if sum(len(p) for p in self.parts) != len(self.ids):
            raise ValueError("give one id per row of each part")
        if len(set(self.ids)) != len(self.ids):
            raise ValueError("unit ids must be unique")
        dims = {p.shape[1] for p in self.parts if len(p)}
        if len(dims) > 1:
            raise ValueError(f"parts have different dimensions: {sorted(dims)}")
        self.dimension = dims.pop() if dims else 0
        self.identity = identity
        self.block_rows = check_count(block_rows, "block_rows")
        self._starts = np.cumsum([0] + [len(p) for p in self.parts])
        self._ties: npt.NDArray[np.int64] | None = None

    def __len__(self) -> int:
        return len(self.ids)

    def _rows(self, rows: npt.NDArray[np.intp]) -> npt.NDArray[np.float32]:
        """Unit vectors of global ``rows`` (any order), read from their parts."""
        out = np.empty((len(rows), self.dimension), dtype=np.float32)
        part = np.searchsorted(self._starts, rows, side="right") - 1
        for p in np.unique(part).tolist():
            sel = np.flatnonzero(part == p)
            local = rows[sel] - self._starts[p]
            out[sel] = _unit_rows(self.parts[p][np.sort(local)], "vectors")[
                np.argsort(np.argsort(local))
            ]
        return out

    def search(self, queries: npt.ArrayLike, k: int, identity: IdentityLike) -> list[Ranking]:
        """Top ``k`` units per query, as :meth:`VectorIndex.search` would rank them.

        Raises
        ------
        IdentityMismatchError
            ``identity`` is not the index's.
        ValueError
            ``k`` < 1, wrong dimension, rows holding NaN or an infinity.
        """
        k = check_count(k, "k")
        if not _same(identity, self.identity):
            raise _mismatch(self.identity, identity, "query vectors")
        q = _unit_rows(queries, "query vectors")
        if q.ndim != 2 or (len(self) and q.shape[1] != self.dimension):
            raise ValueError(f"query dimension {q.shape[-1]} != index dimension {self.dimension}")
        k = min(k, len(self))
        if k <= 0:
            return [[] for _ in range(q.shape[0])]
        slack = _slack(self.dimension)
        cand_rows = [np.zeros(0, np.intp) for _ in range(len(q))]
        cand_scores = [np.zeros(0, np.float32) for _ in range(len(q))]
        for p, part in enumerate(self.parts):
            for lo in range(0, len(part), self.block_rows):
                block = _unit_rows(part[lo : lo + self.block_rows], "vectors")
                scores = q @ block.T
                first = int(self._starts[p]) + lo
                for j in range(len(q)):
                    rows = np.concatenate([cand_rows[j], first + np.arange(len(block))])
                    s = np.concatenate([cand_scores[j], scores[j]])
                    if len(s) >= k:
                        kth = np.partition(s, len(s) - k)[len(s) - k]
                        keep = s >= kth - slack
                        rows, s = rows[keep], s[keep]
                    cand_rows[j], cand_scores[j] = rows, s
        if self._ties is None:
            self._ties = tie_keys(self.ids)
        out: list[Ranking] = []
        for query, rows in zip(q, cand_rows, strict=True):
            exact = exact_scores(query, self._rows(rows))
            best = np.lexsort((self._ties[rows], -exact))[:k]
            out.append([(self.ids[rows[i]], float(exact[i])) for i in best.tolist()])
        return out
