"""Exact inner-product scoring of unit vectors: the one arithmetic every index ranks by.

:func:`normalize` makes unit rows; :func:`unit_rows` does the same, refusing rows
that are not finite or cannot be scaled; :func:`exact_scores` scores one query's
candidates independently of batch and backend; :func:`score_slack` bounds a float32
score's error, so candidates picked by float32 scores lose none of the exact top
``k``. :class:`hierret.search.vectors.index.VectorIndex` and
:class:`hierret.search.vectors.index.MappedIndex` both rank with these, which is why
they agree bit for bit; :mod:`hierret.search.vectors.index` lists the public two.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from hierret._validate import describe_rows, nonfinite_rows

__all__ = ["exact_pair_scores", "exact_scores", "normalize"]


def normalize(vectors: npt.ArrayLike) -> npt.NDArray[np.float32]:
    """L2-normalise rows to unit length (zero rows stay zero).

    Examples
    --------
    >>> normalize([[3.0, 4.0], [0.0, 0.0]]).tolist()
    [[0.6000000238418579, 0.800000011920929], [0.0, 0.0]]
    """
    arr = np.array(vectors, dtype=np.float32, ndmin=2)
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    out: npt.NDArray[np.float32] = np.divide(arr, norms, out=np.zeros_like(arr), where=norms > 0)
    return out


def not_unit_rows(mat: npt.NDArray[np.float32]) -> npt.NDArray[np.intp]:
    """Rows neither of unit length (to 1e-4) nor all zero: what :meth:`VectorIndex.load` refuses."""
    if not len(mat):
        return np.array([], dtype=np.intp)
    norms = np.linalg.norm(mat.astype(np.float64), axis=1)
    return np.flatnonzero(~((np.abs(norms - 1.0) < 1e-4) | (norms == 0.0)))


def unit_rows(vectors: npt.ArrayLike, what: str) -> npt.NDArray[np.float32]:
    """:func:`normalize` of ``vectors``, refusing rows that are not finite or not normalisable.

    The arithmetic is :func:`normalize`'s; only the checks are added. A row
    holding NaN or an infinity (after conversion to float32), a non-zero row
    whose values all underflow to zero in float32 (it would pass for a zero row),
    or a non-zero row whose norm over- or underflows in float32 so that it cannot
    be scaled to unit length, raises :class:`ValueError` naming how many rows and
    which.
    """
    with np.errstate(over="ignore"):  # a float64 too large for float32 is refused below
        arr = np.array(vectors, dtype=np.float32, ndmin=2)
    bad = nonfinite_rows(arr)
    if len(bad):
        raise ValueError(
            f"{what}: {describe_rows(bad, arr.shape[0], 'hold NaN or infinite values')}; "
            "vectors must be finite (check the encoder's output before indexing or searching)"
        )
    if arr.ndim == 2 and len(arr):
        zero = ~np.any(arr != 0, axis=1)
        if zero.any():  # zero rows stay zero, but only rows that were zero before float32
            with np.errstate(over="ignore"):
                given = np.array(vectors, ndmin=2)
            if given.shape == arr.shape and np.issubdtype(given.dtype, np.number):
                gone = np.flatnonzero(zero & np.any(given != 0, axis=1))
                if len(gone):
                    raise ValueError(
                        f"{what}: {describe_rows(gone, arr.shape[0], 'become all zero')} in "
                        "float32 (every value is smaller than about 1e-45): rescale them"
                    )
    with np.errstate(over="ignore", under="ignore"):  # rows whose norm overflows: below
        mat = normalize(arr)
    if mat.ndim == 2 and len(mat):
        norms = np.linalg.norm(mat.astype(np.float64), axis=1)
        # zero rows stay zero, as documented; any other row must come out unit length
        lost = np.flatnonzero((np.abs(norms - 1.0) >= 1e-4) & np.any(arr != 0, axis=1))
        if len(lost):
            raise ValueError(
                f"{what}: {describe_rows(lost, arr.shape[0], 'cannot be scaled to unit length')} "
                "in float32 (their norm over- or underflows): rescale them"
            )
    return mat


def exact_scores(
    query: npt.NDArray[np.float32], rows: npt.NDArray[np.float32]
) -> npt.NDArray[np.float32]:
    """Inner products of one query with some rows, independent of batch and backend.

    Products of float32 values are exact in float64; each row's sum is numpy's
    pairwise sum along that row alone, so a (query, row) pair gets the same
    score whichever rows and queries are computed with it. The result is
    rounded to float32.

    Examples
    --------
    >>> q = np.array([0.6, 0.8], dtype=np.float32)
    >>> exact_scores(q, np.array([[0.6, 0.8], [1.0, 0.0]], dtype=np.float32)).tolist()
    [1.0, 0.6000000238418579]
    """
    prods = rows.astype(np.float64) * query.astype(np.float64)
    out: npt.NDArray[np.float32] = prods.sum(axis=1).astype(np.float32)
    return out


def exact_pair_scores(
    queries: npt.NDArray[np.float32],
    owners: npt.NDArray[np.intp],
    vectors: npt.NDArray[np.float32],
    rows: npt.NDArray[np.intp],
    block: int = 8192,
) -> npt.NDArray[np.float32]:
    """:func:`exact_scores` of ``vectors[rows[i]]`` against ``queries[owners[i]]``, for every ``i``.

    The same float32 values as one :func:`exact_scores` call per query (each
    pair's products and pairwise sum are computed alone), for many queries in
    one pass of ``block`` pairs at a time: a search's candidates are scored
    without a Python loop over its queries.

    Examples
    --------
    >>> q = np.array([[0.6, 0.8], [1.0, 0.0]], dtype=np.float32)
    >>> v = np.array([[0.6, 0.8], [1.0, 0.0]], dtype=np.float32)
    >>> exact_pair_scores(q, np.array([0, 0, 1]), v, np.array([0, 1, 1])).tolist()
    [1.0, 0.6000000238418579, 1.0]
    """
    wide = queries.astype(np.float64)
    out = np.empty(len(rows), dtype=np.float32)
    for lo in range(0, len(rows), block):
        prods = np.multiply(
            vectors[rows[lo : lo + block]], wide[owners[lo : lo + block]], dtype=np.float64
        )
        out[lo : lo + block] = prods.sum(axis=1).astype(np.float32)
    return out


def score_slack(dimension: int) -> float:
    """Twice the largest error of a float32 inner product of unit vectors (γ_d, with room).

    Every unit whose exact score can reach the k-th best lies within this of the
    k-th best float32 score, so selecting by float32 scores loses none of them.
    """
    return 4.0 * max(dimension, 1) * 2.0**-24
