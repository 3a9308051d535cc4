"""A FAISS index of unit vectors that knows which encoder wrote it.

Dense ranking is the inner product of unit vectors (cosine similarity), as in
the study this package starts from, computed exactly by ``faiss.IndexFlatIP``.
Every index records the identity of the encoder that wrote its vectors;
searching it with queries from another encoder raises an error naming both,
even when the two have the same dimension.

Examples
--------
>>> import numpy as np
>>> vecs = np.eye(3, dtype=np.float32)
>>> index = VectorIndex(["a", "b", "c"], vecs, identity="toy-encoder")
>>> index.search(np.array([[0.0, 1.0, 0.0]], dtype=np.float32), k=2, identity="toy-encoder")
[[('b', 1.0), ('a', 0.0)]]
"""

from __future__ import annotations

from collections.abc import Sequence

import faiss
import numpy as np
import numpy.typing as npt

from hierret.evaluation.runs import Ranking

__all__ = ["IdentityMismatchError", "VectorIndex", "normalize"]


class IdentityMismatchError(ValueError):
    """Vectors from one encoder met an index written by another."""


def normalize(vectors: npt.ArrayLike) -> npt.NDArray[np.float32]:
    """L2-normalise rows to unit length (zero rows stay zero).

    Examples
    --------
    >>> normalize([[3.0, 4.0], [0.0, 0.0]]).tolist()
    [[0.6000000238418579, 0.800000011920929], [0.0, 0.0]]
    """
    arr = np.array(vectors, dtype=np.float32, ndmin=2)
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    return np.divide(arr, norms, out=np.zeros_like(arr), where=norms > 0)


class VectorIndex:
    """Exact inner-product search over unit vectors, with an identity guard.

    Parameters
    ----------
    ids : sequence of str
        Unit ids, one per row of ``vectors``.
    vectors : array, shape (n, d)
        Vectors; L2-normalised here whatever they were.
    identity : str
        Identity of the encoder that wrote them (``EncoderIdentity.describe()``
        or any stable string).
    """

    def __init__(self, ids: Sequence[str], vectors: npt.ArrayLike, identity: str) -> None:
        mat = normalize(vectors)
        if len(ids) != mat.shape[0]:
            raise ValueError(f"{len(ids)} ids for {mat.shape[0]} vectors: pass one id per row")
        if len(set(ids)) != len(ids):
            raise ValueError("unit ids must be unique")
        self.ids = list(ids)
        self.identity = identity
        self.dimension = int(mat.shape[1])
        self._index = faiss.IndexFlatIP(self.dimension)
        if len(ids):
            self._index.add(mat)
        self._vectors = mat

    def __len__(self) -> int:
        return len(self.ids)

    def check(self, identity: str) -> None:
        """Raise :class:`IdentityMismatchError` unless ``identity`` wrote this index."""
        if identity != self.identity:
            raise IdentityMismatchError(
                "query vectors come from a different encoder than the index:\n"
                f"  index written by: {self.identity}\n  queries from:     {identity}\n"
                "Encode the queries with the index's encoder, or rebuild the index with the "
                "new encoder."
            )

    def scores(self, queries: npt.ArrayLike, identity: str) -> npt.NDArray[np.float32]:
        """Cosine of every query with every unit, shape (n_queries, n_units)."""
        self.check(identity)
        return normalize(queries) @ self._vectors.T

    def search(self, queries: npt.ArrayLike, k: int, identity: str) -> list[Ranking]:
        """Top ``k`` units per query, ties broken by unit id.

        Parameters
        ----------
        queries : array, shape (n_queries, d)
            Query vectors (normalised here).
        k : int
            Depth; capped at the index size.
        identity : str
            Identity of the encoder that wrote ``queries``; must equal the index's.
        """
        self.check(identity)
        q = normalize(queries)
        if q.shape[1] != self.dimension:
            raise ValueError(f"query dimension {q.shape[1]} != index dimension {self.dimension}")
        k = min(k, len(self))
        if k <= 0:
            return [[] for _ in range(q.shape[0])]
        # ask FAISS for a few more than k so ties at the cut can be ordered by id
        extra = min(len(self), k + 16)
        scores, rows = self._index.search(q, extra)
        out: list[Ranking] = []
        for srow, irow in zip(scores, rows, strict=True):
            pairs = [(self.ids[i], float(s)) for s, i in zip(srow, irow, strict=True) if i >= 0]
            pairs.sort(key=lambda p: (-p[1], p[0]))
            out.append(pairs[:k])
        return out
