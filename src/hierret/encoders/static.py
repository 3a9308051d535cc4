"""Static token embeddings (WordLlama): the mean of a table lookup, no window.

A static encoder has no attention and no position limit: it reads every token
of any text, so its identity's window is :data:`~hierret.encoders.UNLIMITED_WINDOW`
and nothing is ever truncated. It is about a hundred times faster than MiniLM
and much weaker; useful as a floor and for quick experiments.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from hierret._quiet import quiet_import
from hierret._validate import check_texts
from hierret.encoders.base import (
    UNLIMITED_WINDOW,
    Encoder,
    EncoderIdentity,
    Role,
    installed_versions,
)

__all__ = ["WordLlamaEncoder"]

_DIMENSIONS = (64, 128, 256)  # the packaged table is 256-d; smaller ones are its prefixes


class WordLlamaEncoder(Encoder):
    """WordLlama ``l2_supercat`` static embeddings, loaded offline from the package.

    Parameters
    ----------
    dimension : {256, 128, 64}
        Vector length; below 256 the table is truncated (it was trained
        Matryoshka-style, so leading dimensions carry most of the signal).
    batch_size : int
        Texts per lookup batch.
    query_prefix, passage_prefix : str
        Prepended to queries / passages (none by default).

    Notes
    -----
    Tokens come from WordLlama's own (LLaMA-2 SentencePiece) tokenizer; no
    special tokens are added. A text with no tokens (``""``) gets a zero
    vector. The table is stored in fp16 (the identity's precision) and used
    in fp32. The identity's ``weights`` digest is SHA-256 over the loaded
    table (dtype, shape and bytes), so it changes with ``dimension``.

    Examples
    --------
    >>> enc = WordLlamaEncoder()
    >>> enc.identity.dimension, enc.identity.window == UNLIMITED_WINDOW
    (256, True)
    >>> q = enc.encode_queries(["what do cats do?"])
    >>> p = enc.encode_passages(["Cats purr and sleep.", "The stock market fell."])
    >>> p.shape, int((p @ q.T).argmax())  # the cat passage is nearer
    ((2, 256), 0)
    """

    def __init__(
        self,
        dimension: int = 256,
        batch_size: int = 64,
        query_prefix: str = "",
        passage_prefix: str = "",
    ) -> None:
        if dimension not in _DIMENSIONS:
            raise ValueError(f"dimension must be one of {_DIMENSIONS}, got {dimension}")
        if batch_size < 1:
            raise ValueError(f"batch_size must be positive, got {batch_size}")
        try:
            with quiet_import():  # wordllama calls logging.basicConfig(level=INFO) on import
                import wordllama
                from wordllama import WordLlama
        except ImportError:
            raise ImportError(
                "WordLlamaEncoder needs wordllama: pip install wordllama "
                "(or pip install 'hierret[models]')"
            ) from None
        config = "l2_supercat"
        self._model = WordLlama.load(
            config=config,
            cache_dir=Path(wordllama.__file__).parent,
            dim=256,
            trunc_dim=None if dimension == 256 else dimension,
            disable_download=True,
        )
        counter = type(self._model.tokenizer).from_str(self._model.tokenizer.to_str())
        counter.no_padding()  # WordLlama pads batches; counts must not include padding
        counter.no_truncation()
        self._tokenizer = counter
        table = np.ascontiguousarray(self._model.embedding)
        h = hashlib.sha256(f"{table.dtype.str} {table.shape}".encode())
        h.update(table.tobytes())
        precision = {"float16": "fp16", "float32": "fp32"}.get(table.dtype.name, table.dtype.name)
        if table.dtype == np.float32 and np.array_equal(table.astype(np.float16), table):
            precision = "fp16"  # stored as fp16, upcast by WordLlama on load
        self.batch_size = batch_size
        self._identity = EncoderIdentity(
            name=f"dleemiller/word-llama-{config.replace('_', '-')}",
            backend="wordllama",
            weights="table-sha256:" + h.hexdigest()[:16],
            precision=precision,
            dimension=int(table.shape[1]),
            window=UNLIMITED_WINDOW,
            query_prefix=query_prefix,
            passage_prefix=passage_prefix,
            engine=installed_versions("wordllama"),
        )

    @property
    def n_special_tokens(self) -> int:
        return 0

    def _embed(self, texts: list[str]) -> NDArray[Any]:
        vectors = self._model.embed(texts, norm=False, batch_size=self.batch_size)
        return np.asarray(vectors, dtype=np.float32)

    def _token_offsets(self, text: str) -> tuple[list[tuple[int, int]], list[bool]]:
        enc = self._tokenizer.encode(text, add_special_tokens=False)
        offsets = [(int(a), int(b)) for a, b in enc.offsets]
        # SentencePiece marks a word's first piece with "▁" (the tokenizer has no word ids)
        starts = [i == 0 or tok.startswith("\u2581") for i, tok in enumerate(enc.tokens)]
        return offsets, starts

    def count_tokens(self, texts: Sequence[str], role: Role = "passage") -> list[int]:
        items = check_texts(texts)
        if not items:
            return []
        prefix = self._identity.prefix(role)
        encodings = self._tokenizer.encode_batch(
            [prefix + t for t in items], add_special_tokens=False
        )
        return [len(e.ids) for e in encodings]
