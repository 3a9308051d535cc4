"""Bad input to encoders and their identities (run by ``docs/bad_input.py``)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from hierret.encoders import HashEncoder, load_encoder
from hierret.encoders.base import EncoderIdentity, l2_normalize
from hierret.index import VectorIndex


def _unknown_encoder() -> object:
    return load_encoder("no-such-model")


def _nan_rows() -> object:
    return l2_normalize(np.array([[np.nan, 1.0], [0.5, 0.5]]))


def _identity_swap() -> object:
    a, b = HashEncoder(dimension=8), HashEncoder(dimension=8, query_prefix="q: ")
    index = VectorIndex(["u1", "u2"], a.encode_passages(["one text", "another text"]), a.identity)
    return index.search(b.encode_queries(["one"]), 1, b.identity)


def _identity_with_wrong_types() -> object:
    return EncoderIdentity.from_dict({"name": "m", "backend": "b", "weights": "w",
                                      "precision": "fp32", "dimension": "384", "window": 256})


def _e5_without_prefix() -> object:
    from hierret.encoders.e5 import E5Encoder

    return E5Encoder(query_prefix="")


def _e5_unknown_engine() -> object:
    from hierret.encoders.e5 import E5Encoder

    return E5Encoder(engine="fast")


CASES: list[tuple[str, Callable[[], object]]] = [
    ("an encoder name that is not registered, not a folder, not a hub id", _unknown_encoder),
    ("a vector with NaN given to the normaliser", _nan_rows),
    ("an index written by one 8-dimensional encoder, queried with another of the same width",
     _identity_swap),
    ("a stored identity whose dimension is the string '384'", _identity_with_wrong_types),
    ("e5-small asked to embed without its engine's prefix", _e5_without_prefix),
    ("e5-small asked for an engine build that does not exist ('fast')", _e5_unknown_engine),
]
