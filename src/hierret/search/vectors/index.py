"""A FAISS index of unit vectors that knows which encoder wrote it.

Dense ranking is the inner product of unit vectors (cosine similarity), as in
the study this package starts from, by exact (flat) search: a numpy matrix
product per block of queries up to :data:`FAISS_MIN_ROWS` units, where it is the
faster of the two, and ``faiss.IndexFlatIP`` above. Either backend only picks
the candidates; their scores are then computed once more, the same way for both
(:func:`exact_scores`), so the two give identical rankings, ordered by
:func:`hierret.search.runs.rank`'s rule.
Every index records the identity of the encoder that wrote its vectors;
searching it with queries from another encoder, or extending it with vectors
from another encoder, raises an :class:`IdentityMismatchError` naming both,
even when the two have the same dimension (MiniLM fp32, MiniLM int8 and
e5-small are all 384-d). An index can be saved to a folder and loaded back
with the same guard. :class:`MappedIndex` ranks the same way, bit for bit, over
vectors kept in parts (memory-mapped vector cache shards) without copying them.
Both rank with one arithmetic, kept apart in ``hierret.search.vectors._exact`` (:func:`normalize`,
:func:`exact_scores`, listed here).

Examples
--------
>>> import numpy as np
>>> vecs = np.eye(3, dtype=np.float32)
>>> index = VectorIndex(["a", "b", "c"], vecs, identity="toy-encoder")
>>> index.search(np.array([[0.0, 1.0, 0.0]], dtype=np.float32), k=2, identity="toy-encoder")
[[('b', 1.0), ('c', 0.0)]]
"""

from __future__ import annotations

import hashlib
import json
import os
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import faiss
import numpy as np
import numpy.typing as npt

from hierret._files import atomic_write
from hierret._mapped import check_mapped
from hierret._validate import check_count, describe_rows, nonfinite_rows
from hierret.encoders.base import EncoderIdentity
from hierret.search.runs import Ranking, tie_keys
from hierret.search.vectors._exact import (
    exact_pair_scores,
    exact_scores,
    normalize,
    not_unit_rows,
    score_slack,
    unit_rows,
)

__all__ = [
    "FAISS_MIN_ROWS",
    "INDEX_FILE",
    "IdentityLike",
    "IdentityMismatchError",
    "IndexFileError",
    "MappedIndex",
    "StaleIndexWarning",
    "VectorIndex",
    "exact_scores",
    "normalize",
]

#: Name of the JSON file of a saved index (the vectors sit next to it, named in it).
INDEX_FILE = "index.json"
_FORMAT = 1

#: What identifies an encoder: its :class:`~hierret.encoders.EncoderIdentity`, or any
#: stable string (e.g. ``EncoderIdentity.describe()``).
IdentityLike = EncoderIdentity | str

#: Indexes with at least this many units are searched with FAISS, smaller ones with
#: numpy. On two cores numpy was 1.3-6x faster at every size measured (10,000 to
#: 200,000 units of 384 dimensions, 1 to 300 queries; ``nox -s bench`` measures
#: SciFact's size); FAISS is kept for the sizes beyond, where it was not measured.
FAISS_MIN_ROWS = 1_000_000
#: Most query-by-unit scores one numpy block holds (64 MiB of float32).
_BLOCK_SCORES = 1 << 24
Backend = Literal["auto", "numpy", "faiss"]


class IdentityMismatchError(ValueError):
    """Vectors from one encoder met an index written by another."""


class IndexFileError(ValueError):
    """A saved index is missing, incomplete or damaged."""


class StaleIndexWarning(UserWarning):
    """A saved index lacks a guarantee this version makes (e.g. unit vectors)."""


def _describe(identity: IdentityLike) -> str:
    return identity.describe() if isinstance(identity, EncoderIdentity) else str(identity)


def _same(a: IdentityLike, b: IdentityLike) -> bool:
    """Equal identities; an identity and a string match when the string is its describe()."""
    if isinstance(a, EncoderIdentity) and isinstance(b, EncoderIdentity):
        return a == b
    return _describe(a) == _describe(b)


_REBUILD = (
    "Rebuild it with the encoder you mean to use: "
    "VectorIndex(ids, encoder.encode_passages(texts), encoder.identity).save(folder)"
)


def _mismatch(
    index_identity: IdentityLike, other: IdentityLike, what: str, where: str = "the index"
) -> IdentityMismatchError:
    return IdentityMismatchError(
        f"{what} come from a different encoder than {where}:\n"
        f"  {where} was written by: {_describe(index_identity)}\n"
        f"  {what} come from: {_describe(other)}\n"
        "Vectors of different encoders are not comparable, even with the same dimension. "
        "Encode with the index's encoder, or rebuild the index with the new one: "
        "VectorIndex(ids, encoder.encode_passages(texts), encoder.identity)."
    )


def _vectors_digest(mat: npt.NDArray[np.float32]) -> str:
    return hashlib.sha256(np.ascontiguousarray(mat, dtype="<f4").tobytes()).hexdigest()


class VectorIndex:
    """Exact inner-product search over unit vectors, with an identity guard.

    Parameters
    ----------
    ids : sequence of str
        Unit ids, one per row of ``vectors``.
    vectors : array, shape (n, d)
        Finite vectors; L2-normalised here whatever they were (zero rows stay
        zero). A row holding NaN or an infinity raises :class:`ValueError`
        naming the rows, as in :meth:`add` and :meth:`search`.
    identity : EncoderIdentity or str
        Identity of the encoder that wrote them: best the encoder's
        :class:`~hierret.encoders.EncoderIdentity` (compared field by field
        and saved with the index), or any stable string such as its
        ``describe()`` (compared as text).

    Examples
    --------
    >>> from hierret.encoders import HashEncoder
    >>> enc = HashEncoder(dimension=16)
    >>> index = VectorIndex(["a", "b"], enc.encode_passages(["cats purr", "dogs bark"]),
    ...                     enc.identity)
    >>> index.search(enc.encode_queries(["dogs"]), k=1, identity=enc.identity)[0][0][0]
    'b'
    >>> other = HashEncoder(dimension=16, query_prefix="query: ")
    >>> index.search(other.encode_queries(["dogs"]), k=1, identity=other.identity)
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    hierret.search.vectors.index.IdentityMismatchError: query vectors come from ...
    """

    def __init__(self, ids: Sequence[str], vectors: npt.ArrayLike, identity: IdentityLike) -> None:
        self._setup(list(ids), unit_rows(vectors, "vectors"), identity)

    def _setup(self, ids: list[str], mat: npt.NDArray[np.float32], identity: IdentityLike) -> None:
        """Fill the index from rows that are unit length already."""
        if not isinstance(identity, EncoderIdentity | str):
            raise TypeError(
                f"identity must be an EncoderIdentity or a str, got {type(identity).__name__}"
            )
        if mat.ndim != 2:
            raise ValueError(f"vectors must be a 2-d array, got shape {mat.shape}")
        if len(ids) != mat.shape[0]:
            raise ValueError(f"{len(ids)} ids for {mat.shape[0]} vectors: pass one id per row")
        if len(set(ids)) != len(ids):
            raise ValueError("unit ids must be unique")
        if (
            isinstance(identity, EncoderIdentity)
            and mat.shape[0]
            and (mat.shape[1] != identity.dimension)
        ):
            raise ValueError(
                f"vectors have {mat.shape[1]} dimensions but {identity.describe()} "
                f"makes {identity.dimension}"
            )
        self.ids = ids
        self.identity: IdentityLike = identity
        self.dimension = int(
            identity.dimension
            if isinstance(identity, EncoderIdentity) and not mat.shape[0]
            else mat.shape[1]
        )
        self._faiss: faiss.IndexFlatIP | None = None  # built on the first FAISS search
        self._ties: npt.NDArray[np.int64] | None = None  # rank()'s tie order, on first search
        self._vectors = mat.reshape(len(ids), self.dimension)
        self._positions = {u: i for i, u in enumerate(ids)}

    def __len__(self) -> int:
        return len(self.ids)

    def __repr__(self) -> str:
        return (
            f"VectorIndex({len(self)} vectors, {self.dimension} dims, {_describe(self.identity)})"
        )

    @property
    def vectors(self) -> npt.NDArray[np.float32]:
        """The unit vectors, one row per id (a read-only view)."""
        view = self._vectors.view()
        view.flags.writeable = False
        return view

    def check(self, identity: IdentityLike, what: str = "query vectors") -> None:
        """Raise :class:`IdentityMismatchError` unless ``identity`` wrote this index.

        Parameters
        ----------
        identity : EncoderIdentity or str
            Identity of the encoder behind the vectors about to meet the index.
        what : str
            What those vectors are, for the message.
        """
        if not _same(identity, self.identity):
            raise _mismatch(self.identity, identity, what)

    def _queries(self, queries: npt.ArrayLike) -> npt.NDArray[np.float32]:
        q = unit_rows(queries, "query vectors")
        if q.ndim != 2 or q.shape[1] != self.dimension:
            raise ValueError(f"query dimension {q.shape[-1]} != index dimension {self.dimension}")
        return q

    def scores(self, queries: npt.ArrayLike, identity: IdentityLike) -> npt.NDArray[np.float32]:
        """Cosine of every query with every unit, shape (n_queries, n_units)."""
        self.check(identity)
        return self._queries(queries) @ self._vectors.T

    def search(
        self, queries: npt.ArrayLike, k: int, identity: IdentityLike, backend: Backend = "auto"
    ) -> list[Ranking]:
        """Top ``k`` units per query, ordered by :func:`~hierret.search.runs.rank`.

        Parameters
        ----------
        queries : array, shape (n_queries, d)
            Finite query vectors (normalised here).
        k : int
            Depth, at least 1; capped at the index size (an empty index gives
            empty rankings).
        identity : EncoderIdentity or str
            Identity of the encoder that wrote ``queries``; must equal the index's.
        backend : {"auto", "numpy", "faiss"}, default "auto"
            What picks the candidates: ``"auto"`` takes FAISS from
            :data:`FAISS_MIN_ROWS` units on, numpy below. The rankings are the
            same with either (scores by :func:`exact_scores`).

        Returns
        -------
        list of Ranking
            One ``[(unit id, cosine), ...]`` per query, best first.

        Raises
        ------
        TypeError
            ``k`` is not an int.
        ValueError
            ``k`` < 1; a query row holds NaN or an infinity; wrong dimension;
            an unknown ``backend``.

        Examples
        --------
        >>> index = VectorIndex(["a", "b"], [[1.0, 0.0], [0.0, 1.0]], identity="toy")
        >>> index.search([[float("nan"), 1.0]], k=1, identity="toy")
        Traceback (most recent call last):
        ...
        ValueError: query vectors: 1 of 1 rows hold NaN or infinite values (row 0); vectors \
must be finite (check the encoder's output before indexing or searching)
        """
        k = check_count(k, "k")
        if backend not in ("auto", "numpy", "faiss"):
            raise ValueError(f"backend must be 'auto', 'numpy' or 'faiss', got {backend!r}")
        self.check(identity)
        q = self._queries(queries)
        k = min(k, len(self))
        if k <= 0:
            return [[] for _ in range(q.shape[0])]
        use_faiss = backend == "faiss" or (backend == "auto" and len(self) >= FAISS_MIN_ROWS)
        owners, rows = self._faiss_candidates(q, k) if use_faiss else self._numpy_candidates(q, k)
        if self._ties is None:
            self._ties = tie_keys(self.ids)
        scores = exact_pair_scores(q, owners, self._vectors, rows)
        # one sort for every query: by query, then score (best first), then the tie order;
        # each query holds at least k candidates, so its k best are the first k of its run
        order = np.lexsort((self._ties[rows], -scores, owners))
        starts = np.searchsorted(owners, np.arange(q.shape[0]))
        best = order[starts[:, None] + np.arange(k)]
        ids = self.ids
        return [
            [(ids[r], s) for r, s in zip(rr, ss, strict=True)]
            for rr, ss in zip(rows[best].tolist(), scores[best].tolist(), strict=True)
        ]

    def _numpy_candidates(
        self, q: npt.NDArray[np.float32], k: int
    ) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]:
        """Every (query, row) pair whose float32 score is within :func:`score_slack` of the
        query's k-th best float32 score, as two arrays sorted by query."""
        slack, n = score_slack(self.dimension), len(self)
        owners: list[npt.NDArray[np.intp]] = []
        rows: list[npt.NDArray[np.intp]] = []
        step = max(1, _BLOCK_SCORES // n)
        for lo in range(0, q.shape[0], step):
            block = q[lo : lo + step] @ self._vectors.T
            kth = np.partition(block, n - k, axis=1)[:, n - k]
            flat = np.flatnonzero(block >= (kth - slack)[:, None])  # by query, then row
            owners.append(flat // n + lo)
            rows.append(flat % n)
        return np.concatenate(owners), np.concatenate(rows)

    def _faiss_candidates(
        self, q: npt.NDArray[np.float32], k: int
    ) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]:
        """As :meth:`_numpy_candidates`, the float32 scores and the top rows from FAISS."""
        if self._faiss is None:
            self._faiss = faiss.IndexFlatIP(self.dimension)
            self._faiss.add(np.ascontiguousarray(self._vectors))
        slack, n = score_slack(self.dimension), len(self)
        extra = min(n, k + 16)
        while True:  # more than k, until the last one is clearly below the k-th
            scores, rows = self._faiss.search(q, extra)
            if extra == n or np.all(scores[:, extra - 1] < scores[:, k - 1] - slack):
                break
            extra = min(n, 2 * extra)
        who, col = np.nonzero((rows >= 0) & (scores >= scores[:, k - 1 : k] - slack))
        return who, rows[who, col].astype(np.intp)

    def add(self, ids: Sequence[str], vectors: npt.ArrayLike, identity: IdentityLike) -> None:
        """Append vectors from the index's encoder.

        Parameters
        ----------
        ids : sequence of str
            New unit ids, none already in the index.
        vectors : array, shape (len(ids), d)
            Their vectors, finite (normalised here).
        identity : EncoderIdentity or str
            Identity of the encoder that wrote ``vectors``; must equal the index's.

        Raises
        ------
        IdentityMismatchError
            ``identity`` is not the index's.
        ValueError
            Wrong shape, duplicate or already indexed ids, or rows holding NaN
            or an infinity (named in the message; nothing is added).

        Examples
        --------
        >>> index = VectorIndex(["a"], [[1.0, 0.0]], identity="toy")
        >>> index.add(["b"], [[0.0, 2.0]], identity="toy")
        >>> index.search([[0.0, 1.0]], k=1, identity="toy")
        [[('b', 1.0)]]
        """
        self.check(identity, "new vectors")
        new_ids = list(ids)
        mat = unit_rows(vectors, "new vectors")
        if mat.ndim != 2 or mat.shape != (len(new_ids), self.dimension):
            raise ValueError(
                f"expected {len(new_ids)} vectors of {self.dimension} dimensions, "
                f"got shape {mat.shape}"
            )
        if len(set(new_ids)) != len(new_ids):
            raise ValueError("unit ids must be unique")
        clash = sorted(set(new_ids) & self._positions.keys())
        if clash:
            raise ValueError(f"{len(clash)} ids are already in the index, e.g. {clash[:3]}")
        if not new_ids:
            return
        self._faiss = self._ties = None  # rebuilt for the new rows on the next search
        for i, u in enumerate(new_ids, start=len(self.ids)):
            self._positions[u] = i
        self.ids.extend(new_ids)
        self._vectors = np.concatenate([self._vectors, mat])

    def save(self, folder: str | os.PathLike[str]) -> Path:
        """Write the index to ``folder`` (created if needed); returns the JSON file.

        The folder gets ``vectors-<digest>.npy`` (float32 unit rows) and
        :data:`INDEX_FILE`: ids, the encoder identity (as a dict and its
        ``describe()``), dimension, ``normalized: true`` and the vectors' SHA-256.
        Both are written under temporary names and moved into place, the JSON
        last, so a reader sees the old index or the new one, never a mix.
        Both are always written, so saving again repairs a folder whose files
        were damaged since the last save.

        Nothing is written unless :meth:`load` would read it back: an index
        whose ids are not ``str``, whose identity would not load, or whose rows
        are not finite unit (or zero) rows raises :class:`ValueError` first (the
        constructor and :meth:`add` refuse such rows already), and a ``folder``
        that is a file raises :class:`NotADirectoryError`.

        Examples
        --------
        >>> import tempfile
        >>> tmp = tempfile.TemporaryDirectory()
        >>> index = VectorIndex(["a", "b"], [[1.0, 0.0], [0.0, 1.0]], identity="toy")
        >>> _ = index.save(tmp.name)
        >>> VectorIndex.load(tmp.name, expected_identity="toy").ids
        ['a', 'b']
        >>> tmp.cleanup()
        """
        mat = np.ascontiguousarray(self._vectors, dtype="<f4")
        self._check_saveable(mat)
        root = Path(folder)
        if root.exists() and not root.is_dir():
            raise NotADirectoryError(
                f"cannot save the index to {root}: it is a file, not a folder; give save() "
                "the path of a folder (created if needed), e.g. a new one next to that file"
            )
        root.mkdir(parents=True, exist_ok=True)
        digest = _vectors_digest(mat)
        vectors_name = f"vectors-{digest[:16]}.npy"
        ident = self.identity
        doc: dict[str, Any] = {
            "format": _FORMAT,
            "ids": self.ids,
            "identity": ident.as_dict() if isinstance(ident, EncoderIdentity) else None,
            "identity_describe": _describe(ident),
            "identity_key": ident.key() if isinstance(ident, EncoderIdentity) else None,
            "dimension": self.dimension,
            "count": len(self.ids),
            "normalized": True,
            "vectors_file": vectors_name,
            "vectors_sha256": digest,
        }
        blob = json.dumps(doc, indent=1, ensure_ascii=False).encode()
        # written even when a file of that name exists: it may have been damaged since
        # (a save must always load again), and the rename keeps concurrent readers safe
        atomic_write(root / vectors_name, lambda f: np.save(f, mat, allow_pickle=False))
        target = root / INDEX_FILE
        atomic_write(target, blob)
        for old in root.glob("vectors-*.npy"):  # earlier saves, now unreferenced
            if old.name != vectors_name:
                old.unlink(missing_ok=True)
        return target

    def _check_saveable(self, mat: npt.NDArray[np.float32]) -> None:
        """Refuse to save what :meth:`load` would refuse, before anything is written."""
        problem = ""
        bad_ids = [i for i, u in enumerate(self.ids) if not isinstance(u, str)]
        if bad_ids:
            problem = f"ids at positions {bad_ids[:5]} are not str (a saved index holds str ids)"
        elif any(not _utf8(u) for u in self.ids):
            problem = "an id is not valid Unicode text (it holds a lone surrogate)"
        elif isinstance(self.identity, EncoderIdentity):
            try:
                EncoderIdentity.from_dict(self.identity.as_dict())
            except ValueError as err:
                problem = f"its encoder identity would not load back ({err})"
        elif not _utf8(self.identity):
            problem = "its identity string is not valid Unicode text"
        if not problem:
            bad = nonfinite_rows(mat)
            if not len(bad):
                bad = not_unit_rows(mat)
            if len(bad):
                problem = describe_rows(bad, len(mat), "are neither finite unit rows nor zero")
        if problem:
            raise ValueError(f"cannot save this index, it would not load back: {problem}")

    @classmethod
    def load(
        cls,
        folder: str | os.PathLike[str],
        expected_identity: IdentityLike | None = None,
    ) -> VectorIndex:
        """Read an index written by :meth:`save`.

        Parameters
        ----------
        folder : str or Path
            The folder given to :meth:`save`.
        expected_identity : EncoderIdentity or str, optional
            The encoder you will query it with; a different one raises.

        Returns
        -------
        VectorIndex

        Raises
        ------
        IndexFileError
            A file is missing, unreadable, incomplete or fails its checksum.
        IdentityMismatchError
            The index was written by another encoder than ``expected_identity``.

        Warns
        -----
        StaleIndexWarning
            The index does not say its vectors are unit length (saved by an
            older version): they are normalised on load, but it should be rebuilt.
        """
        root = Path(folder)
        meta_path = root / INDEX_FILE
        try:
            doc = json.loads(meta_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise IndexFileError(
                f"no saved index at {root}: {INDEX_FILE} is missing. {_REBUILD}"
            ) from None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
            raise IndexFileError(f"{meta_path} is damaged ({err}). {_REBUILD}") from err
        fmt = doc.get("format", _FORMAT) if isinstance(doc, dict) else None  # older: none
        if fmt != _FORMAT:
            raise IndexFileError(
                f"{meta_path} is in format {fmt!r}, and this hierret reads format {_FORMAT} "
                "only (a newer hierret, or another program, wrote it): load it with the "
                f"version that saved it, or {_REBUILD[0].lower()}{_REBUILD[1:]}"
            )
        try:
            ids = doc["ids"]
            dimension = int(doc["dimension"])
            vectors_name = str(doc.get("vectors_file", "vectors.npy"))
            raw_identity = doc.get("identity")
            identity: IdentityLike = (
                EncoderIdentity.from_dict(raw_identity)
                if raw_identity is not None
                else str(doc["identity_describe"])
            )
            if not isinstance(ids, list) or not all(isinstance(u, str) for u in ids):
                raise ValueError("ids must be a list of strings")
        except (KeyError, TypeError, ValueError) as err:
            raise IndexFileError(
                f"{meta_path} is not a saved index ({type(err).__name__}: {err}). {_REBUILD}"
            ) from err
        if Path(vectors_name).name != vectors_name:
            raise IndexFileError(f"{meta_path} names a vectors file outside its folder")
        vec_path = root / vectors_name
        try:
            mat = np.load(vec_path, allow_pickle=False)
        except FileNotFoundError:
            raise IndexFileError(
                f"{vec_path} is missing: the index at {root} is incomplete. {_REBUILD}"
            ) from None
        except (OSError, ValueError, EOFError) as err:
            raise IndexFileError(f"{vec_path} is damaged ({err}). {_REBUILD}") from err
        if mat.ndim != 2 or mat.shape != (len(ids), dimension):
            raise IndexFileError(
                f"{vec_path} holds an array of shape {mat.shape}, but {meta_path} lists "
                f"{len(ids)} ids of {dimension} dimensions. {_REBUILD}"
            )
        expected_digest = doc.get("vectors_sha256")
        if expected_digest is not None and _vectors_digest(mat) != expected_digest:
            raise IndexFileError(
                f"{vec_path} fails its SHA-256 check: the vectors changed after saving. {_REBUILD}"
            )
        if doc.get("normalized") is not True:
            warnings.warn(
                f"the index at {root} does not record unit-length vectors "
                f"(normalized={doc.get('normalized')!r}): it was saved by an older version or "
                "from vectors that were not unit length. "
                "Its vectors are normalised on load, but scores may differ from when it was "
                f"built. {_REBUILD}",
                StaleIndexWarning,
                stacklevel=2,
            )
        if expected_identity is not None and not _same(expected_identity, identity):
            raise _mismatch(
                identity,
                expected_identity,
                "the expected encoder's vectors",
                f"the index at {root}",
            )
        unit = doc.get("normalized") is True  # then keep the saved rows bit for bit
        bad = nonfinite_rows(mat) if np.issubdtype(mat.dtype, np.number) else np.arange(len(mat))
        if len(bad):
            rows = describe_rows(bad, len(mat), "hold NaN, infinite or non-numeric values")
            raise IndexFileError(f"{vec_path}: {rows}. {_REBUILD}")
        if unit and len(mat):
            norms = np.linalg.norm(mat.astype(np.float64), axis=1)
            if len(not_unit_rows(mat)):
                raise IndexFileError(
                    f"{meta_path} says its vectors are unit length, but {vec_path} holds rows "
                    f"of norm {norms.min():.4g} to {norms.max():.4g}. {_REBUILD}"
                )
        index = cls.__new__(cls)
        index._setup(ids, np.asarray(mat, dtype=np.float32) if unit else normalize(mat), identity)
        return index


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _shown(unit: object) -> str:
    """An id for a message: a cache key (32 bytes) as hex, others as their repr."""
    if isinstance(unit, bytes):
        return f"key {unit.hex()[:16]}..."
    return repr(unit)


class MappedIndex:
    """Exact inner-product search over parts of vectors, as one :class:`VectorIndex`.

    :class:`MappedIndex` ranks like :class:`~hierret.search.vectors.index.VectorIndex` over the
    same rows put together, bit for bit (same scores, same tie rule), without
    copying the rows into one matrix: each part (a shard's memory-mapped vectors,
    :meth:`hierret.encoders.cache.VectorCache.mapped`) is read a block of rows at a time.
    Rows are normalised block by block with the index's own arithmetic (row by
    row, so a row's unit vector does not depend on its block); the candidates of
    each block are kept when within :func:`~hierret.search.vectors.index.exact_scores`' float32
    slack of the best ``k`` so far (a threshold that only rises, so no row of the
    final top ``k`` is dropped), and the candidates are scored once more with
    :func:`~hierret.search.vectors.index.exact_scores` and ordered by
    :func:`hierret.search.runs.rank`'s
    rule, as the one-matrix index does.

    Memory: one block of scores (``block_rows`` x queries float32) and the
    candidates; the parts stay on disk until read. Before each block of a
    memory-mapped part is read, its file's size is checked
    (:func:`hierret._mapped.check_mapped`, one ``fstat``): a file cut short
    since (``cp`` over a cache in use) raises
    :class:`~hierret._mapped.MappedFileShrankError` naming it and the fix,
    instead of the process dying of SIGBUS.

    Parameters
    ----------
    parts : sequence of (ids, vectors)
        Unit ids and their vectors (any array, e.g. a :class:`numpy.memmap`),
        part by part. An id given more than once with the same vector (a key
        two writers stored in two shards of a cache, which
        :meth:`~hierret.encoders.cache.VectorCache.mapped` documents) is ranked once,
        as its last copy; copies with different vectors raise
        :class:`ValueError` naming the ids and the fix.
    identity : EncoderIdentity or str
        The encoder that wrote the vectors (checked against the queries').
    block_rows : int, default 65536
        Rows read and scored at a time.

    Examples
    --------
    >>> import numpy as np
    >>> parts = [(["a", "b"], np.eye(3, dtype=np.float32)[:2]),
    ...          (["c"], np.eye(3, dtype=np.float32)[2:])]
    >>> MappedIndex(parts, identity="toy").search([[0.0, 0.0, 1.0]], k=2, identity="toy")
    [[('c', 1.0), ('b', 0.0)]]
    """

    def __init__(
        self,
        parts: Sequence[tuple[Sequence[str], npt.ArrayLike]],
        identity: IdentityLike,
        block_rows: int = 1 << 16,
    ) -> None:
        self._maps = [m for _, m in parts]  # memory-mapped parts, checked before each read
        self.parts = [np.asarray(m) for _, m in parts]
        self.ids = [u for ids, _ in parts for u in ids]
        if any(p.ndim != 2 for p in self.parts):
            raise ValueError("each part's vectors must be a 2-d array")
        if sum(len(p) for p in self.parts) != len(self.ids):
            raise ValueError("give one id per row of each part")
        dims = {p.shape[1] for p in self.parts if len(p)}
        if len(dims) > 1:
            raise ValueError(f"parts have different dimensions: {sorted(dims)}")
        self.dimension = dims.pop() if dims else 0
        self.identity = identity
        self.block_rows = check_count(block_rows, "block_rows")
        self._starts = np.cumsum([0] + [len(p) for p in self.parts])
        self._ties: npt.NDArray[np.int64] | None = None
        self._skip = self._duplicates()
        self._n = len(self.ids) - (int(self._skip.sum()) if self._skip is not None else 0)

    def __len__(self) -> int:
        return self._n

    def _duplicates(self) -> npt.NDArray[np.bool_] | None:
        """Rows left out as copies of a later row with the same id and the same vector
        (a key two writers stored in two shards); ``None`` when every id is unique.

        Raises :class:`ValueError` naming the ids whose copies hold different vectors.
        """
        last: dict[object, int] = {}
        groups: dict[object, list[int]] = {}
        for row, unit in enumerate(self.ids):
            if unit in last:
                groups.setdefault(unit, [last[unit]]).append(row)
            last[unit] = row
        if not groups:
            return None
        skip = np.zeros(len(self.ids), dtype=bool)
        differ = []
        for uid, rows in groups.items():
            vecs = self._raw_rows(np.asarray(rows, dtype=np.intp))
            if not (vecs == vecs[-1]).all():
                differ.append((uid, rows))
            skip[rows[:-1]] = True  # the last copy (the newest shard's) is kept
        if differ:
            shown = "; ".join(f"{_shown(u)} at rows {rows[:4]}" for u, rows in differ[:3]) + (
                f"; and {len(differ) - 3} more" if len(differ) > 3 else ""
            )
            raise ValueError(
                f"{len(differ)} unit id(s) appear more than once with different vectors "
                f"({shown}): the index cannot tell which to rank. Give each id once; for "
                "the parts of VectorCache.mapped(identity), VectorCache.compact(identity) "
                "first keeps one copy of each key (copies with equal vectors, as two "
                "writers store them, are resolved here by keeping the last)"
            )
        return skip

    def _raw_rows(self, rows: npt.NDArray[np.intp]) -> npt.NDArray[np.float32]:
        """The stored vectors of global ``rows`` (not normalised), read from their parts."""
        out = np.empty((len(rows), self.dimension), dtype=np.float32)
        part = np.searchsorted(self._starts, rows, side="right") - 1
        for j, (p, r) in enumerate(zip(part.tolist(), rows.tolist(), strict=True)):
            check_mapped([self._maps[p]], "vectors")
            out[j] = self.parts[p][r - self._starts[p]]
        return out

    def _rows(self, rows: npt.NDArray[np.intp]) -> npt.NDArray[np.float32]:
        """Unit vectors of global ``rows`` (any order), read from their parts."""
        out = np.empty((len(rows), self.dimension), dtype=np.float32)
        part = np.searchsorted(self._starts, rows, side="right") - 1
        for p in np.unique(part).tolist():
            check_mapped([self._maps[p]], "vectors")
            sel = np.flatnonzero(part == p)
            local = rows[sel] - self._starts[p]
            out[sel] = unit_rows(self.parts[p][np.sort(local)], "vectors")[
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
        q = unit_rows(queries, "query vectors")
        if q.ndim != 2 or (len(self) and q.shape[1] != self.dimension):
            raise ValueError(f"query dimension {q.shape[-1]} != index dimension {self.dimension}")
        k = min(k, len(self))
        if k <= 0:
            return [[] for _ in range(q.shape[0])]
        slack = score_slack(self.dimension)
        cand_rows = [np.zeros(0, np.intp) for _ in range(len(q))]
        cand_scores = [np.zeros(0, np.float32) for _ in range(len(q))]
        for p, part in enumerate(self.parts):
            for lo in range(0, len(part), self.block_rows):
                check_mapped([self._maps[p]], "vectors")  # not SIGBUS: see hierret._mapped
                block = unit_rows(part[lo : lo + self.block_rows], "vectors")
                scores = q @ block.T
                first = int(self._starts[p]) + lo
                fresh = first + np.arange(len(block))
                live = None if self._skip is None else ~self._skip[fresh]
                for j in range(len(q)):
                    new_rows, new_scores = fresh, scores[j]
                    if live is not None:
                        new_rows, new_scores = fresh[live], new_scores[live]
                    rows = np.concatenate([cand_rows[j], new_rows])
                    s = np.concatenate([cand_scores[j], new_scores])
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
