"""A sentence-transformers ``CrossEncoder`` as a reranker (needs its model at hand)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

import hierret._clock as _clock
from hierret._quiet import quiet_import
from hierret.search.rerank.base import Reranker, RerankerIdentity

__all__ = ["Activation", "CrossEncoderReranker"]

#: Function applied to the cross-encoder's logit: the model's own default, or forced.
Activation = Literal["model", "sigmoid", "identity"]

_WEIGHT_PATTERNS = ("*.safetensors", "pytorch_model*.bin")


def _weights_digest(folder: Path) -> str | None:
    """``sha256:`` + 16 hex digits over the folder's weight files, or ``None``."""
    files = sorted({p for pat in _WEIGHT_PATTERNS for p in folder.glob(pat) if p.is_file()})
    if not files:
        return None
    h = hashlib.sha256()
    for p in files:
        h.update(p.name.encode() + b"\0")
        with p.open("rb") as f:
            while block := f.read(1 << 22):
                h.update(block)
    return "sha256:" + h.hexdigest()[:16]


def _activation_name(fn: Any) -> str:
    name = type(fn).__name__
    return {"Sigmoid": "sigmoid", "Identity": "identity"}.get(name, name)


class CrossEncoderReranker(Reranker):
    """Score (query, candidate) pairs jointly with a sentence-transformers ``CrossEncoder``.

    Works with any single-label cross-encoder sentence-transformers can load,
    e.g. ``cross-encoder/ms-marco-MiniLM-L6-v2`` or ``BAAI/bge-reranker-v2-m3``
    from the Hugging Face hub, or a local folder. No trained cross-encoder
    ships offline with hierret's dependencies.

    Scores are the model's logit passed through an activation:

    * ``activation="model"`` (default): whatever the model's saved
      sentence-transformers configuration names; a model without one (e.g. a
      plain ``BertForSequenceClassification`` folder, or ``bge-reranker-v2-m3``)
      gets sentence-transformers' default for one label, the **sigmoid**, so
      scores lie in (0, 1). Models saved with an identity activation (the
      ``cross-encoder/ms-marco-*`` family) give raw logits.
    * ``"sigmoid"`` or ``"identity"`` force one or the other.

    The activation actually used is recorded in :attr:`identity` (``settings``),
    since a ``min_score`` on one scale means nothing on the other. Pairs longer
    than ``max_length`` tokens are cut by the model (the candidate loses its
    end).

    Parameters
    ----------
    model : str or path
        Hub id or local folder.
    activation : {"model", "sigmoid", "identity"}
    max_length : int, optional
        Token limit for a (query, candidate) pair; the model's by default.
    batch_size : int, default 32
        Pairs per forward pass.
    device : str, default "cpu"
    num_threads : int, optional
        Torch CPU threads; by default torch's choice, lowered to the CPUs this
        process may use.
    name : str, optional
        Label; defaults to ``model``.
    **kwargs
        Passed to ``CrossEncoder`` (e.g. ``local_files_only=True``, ``revision``).

    Raises
    ------
    ValueError
        The model has more than one output label.

    Examples
    --------
    With a trained cross-encoder from the hub (not run in the tests: none ships
    offline, so ``tests/study/test_rerank.py`` runs this code path on a tiny random model):

    >>> rr = CrossEncoderReranker("cross-encoder/ms-marco-MiniLM-L6-v2")  # doctest: +SKIP
    >>> rr.score("who wrote it?", ["a passage", "another"]).shape  # doctest: +SKIP
    (2,)
    """

    def __init__(
        self,
        model: str | os.PathLike[str],
        *,
        activation: Activation = "model",
        max_length: int | None = None,
        batch_size: int = 32,
        device: str = "cpu",
        num_threads: int | None = None,
        name: str | None = None,
        **kwargs: Any,
    ) -> None:
        if activation not in ("model", "sigmoid", "identity"):
            raise ValueError(
                f"activation must be 'model', 'sigmoid' or 'identity', got {activation!r}"
            )
        if batch_size < 1:
            raise ValueError(f"batch_size must be positive, got {batch_size}")
        try:
            with quiet_import():
                import torch
                from sentence_transformers import CrossEncoder
        except ImportError:  # pragma: no cover - both are dependencies
            raise ImportError(
                "CrossEncoderReranker needs sentence-transformers and torch"
            ) from None
        if num_threads is not None:
            torch.set_num_threads(num_threads)
        else:
            cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
            if cpus and torch.get_num_threads() > cpus:
                torch.set_num_threads(cpus)
        forced = {"model": None, "sigmoid": torch.nn.Sigmoid(), "identity": torch.nn.Identity()}
        source = str(Path(model).expanduser()) if Path(model).expanduser().is_dir() else str(model)
        with _clock.stage("models"):
            self._model = CrossEncoder(
                source,
                device=device,
                max_length=max_length,
                activation_fn=forced[activation],
                **kwargs,
            )
        architectures = list(getattr(self._model.config, "architectures", None) or [])
        if architectures and not any(
            a.endswith("ForSequenceClassification") for a in architectures
        ):
            raise ValueError(
                f"{source}: the saved model is {', '.join(architectures)}, with no trained "
                "classification head; transformers gives it a random head at every load, so "
                "its scores would mean nothing and change between loads under one identity. "
                "Give a cross-encoder trained for reranking (saved as *ForSequenceClassification, "
                "e.g. cross-encoder/ms-marco-MiniLM-L-6-v2)"
            )
        if self._model.num_labels != 1:
            raise ValueError(
                f"{source}: a reranker needs one score per pair; the model has "
                f"{self._model.num_labels} labels"
            )
        self.batch_size = batch_size
        local = Path(source)
        digest = _weights_digest(local) if local.is_dir() else None
        self._identity = RerankerIdentity(
            name=name or str(model),
            kind="cross-encoder",
            model=source + (f" (weights {digest})" if digest else ""),
            settings=(
                f"activation={_activation_name(self._model.activation_fn)}, "
                f"max_length={self._model.max_seq_length}"
            ),
        )

    @property
    def identity(self) -> RerankerIdentity:
        return self._identity

    @property
    def model(self) -> Any:
        """The underlying sentence-transformers ``CrossEncoder``."""
        return self._model

    def score(self, query: str, candidates: Sequence[str]) -> NDArray[np.float64]:
        """The cross-encoder's score for each (query, candidate) pair."""
        if isinstance(candidates, str):
            raise TypeError("candidates must be a sequence of strings, not a single str")
        if len(candidates) == 0:
            return np.zeros(0, dtype=np.float64)
        scores = self._model.predict(
            [(query, c) for c in candidates],
            batch_size=self.batch_size,
            show_progress_bar=False,
            convert_to_numpy=True,
        )
        return np.asarray(scores, dtype=np.float64).reshape(len(candidates))
