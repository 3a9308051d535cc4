"""What a cache record is keyed by: identities (an encoder's, or a token matrix's) and
the 32-byte key of each text (:func:`text_keys`).

Private to :mod:`hierret.encoders.cache`, whose face lists every public name here. A key
is part of the files' format: changing how it is made leaves every cache cold.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from hierret.encoders.base import EncoderIdentity, Role


@dataclass(frozen=True)
class TokenIdentity:
    """Everything that decides which token matrix a text gets (for late interaction).

    Parameters
    ----------
    encoder : EncoderIdentity
        The model whose token vectors are taken: weights, precision, window,
        prefixes and engine.
    tokens : str
        How the matrix is made from the model's output, with a version to
        change when that code changes: which tokens are dropped, how long
        texts are split (e.g. ``"st-tokens-v1: skip_punctuation=True, ..."``).
    normalized : bool, default True
        Whether rows are L2-normalised (as :class:`~hierret.search.rerank.MaxSimReranker`
        keeps them).

    Examples
    --------
    >>> enc = EncoderIdentity("m", "hash", "v1", "fp32", 8, 128)
    >>> ident = TokenIdentity(enc, "rules-v1")
    >>> len(ident.key()), ident.key() == TokenIdentity(enc, "rules-v2").key()
    (16, False)
    >>> ident.key() == enc.key(), ident.dimension, ident.label()
    (False, 8, 'm fp32 tokens')
    """

    encoder: EncoderIdentity
    tokens: str
    normalized: bool = True

    def key(self) -> str:
        """16 hex digits of SHA-256 over all fields (never an encoder identity's key)."""
        blob = json.dumps({"kind": "tokens", **self.as_dict()}, sort_keys=True, ensure_ascii=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    @property
    def name(self) -> str:
        """The model's name."""
        return self.encoder.name

    @property
    def dimension(self) -> int:
        """Columns of every matrix."""
        return self.encoder.dimension

    def label(self) -> str:
        """The encoder's label and ``tokens``, e.g. ``"all-MiniLM-L6-v2 fp32 tokens"``."""
        return f"{self.encoder.label()} tokens"

    def describe(self) -> str:
        """One line for logs and error messages."""
        return f"token vectors ({self.tokens}) of {self.encoder.describe()}"

    def as_dict(self) -> dict[str, Any]:
        """All fields as a JSON-ready ``dict``."""
        return {
            "encoder": self.encoder.as_dict(),
            "tokens": self.tokens,
            "normalized": self.normalized,
        }


#: What makes vectors batch by batch: ``f(texts, role)`` yields ``(positions, vectors)``.
Batches = Callable[[list[str], Role], Iterable[tuple[NDArray[np.intp], NDArray[np.float32]]]]

#: Identities of what a :class:`VectorCache` stores: vectors, or token matrices.
Identity = EncoderIdentity | TokenIdentity


def text_keys(identity: Identity, role: Role, texts: Sequence[str]) -> list[bytes]:
    """32-byte cache keys: SHA-256 of identity key, precision, window, role and text.

    For a :class:`TokenIdentity`: of its key (which covers everything), role and text.

    Examples
    --------
    >>> ident = EncoderIdentity("m", "hash", "v1", "fp32", 8, 128)
    >>> a, b = text_keys(ident, "query", ["x", "x"])
    >>> a == b, len(a), a == text_keys(ident, "passage", ["x"])[0]
    (True, 32, False)
    >>> a == text_keys(TokenIdentity(ident, "rules-v1"), "query", ["x"])[0]
    False
    """
    if isinstance(identity, TokenIdentity):
        identity.encoder.prefix(role)  # validates role
        head = f"hierret-tokens-v1\0{identity.key()}\0{role}\0"
    else:
        identity.prefix(role)  # validates role
        head = (
            f"hierret-vector-v1\0{identity.key()}\0{identity.precision}\0"
            f"{identity.window}\0{role}\0"
        )
    base = hashlib.sha256(head.encode())
    keys = []
    for text in texts:
        h = base.copy()
        h.update(text.encode("utf-8", "surrogatepass"))
        keys.append(h.digest())
    return keys
