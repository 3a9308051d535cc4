"""Bad input to encoders and their identities (run by ``docs/bad_input.py``).

The identity of an encoder decides which cached vectors it is served and which
saved index it may query, so everything that changes a vector must change it:
weights, tokenizer, pooling, normalisation, token window, prefixes, precision,
engine. The cases edit a tiny local sentence-transformers model (a 1-layer
BERT with random weights and a 13-word vocabulary, built here: no download) in
place, after its vectors were cached and indexed, and check that the cache
serves no stale vector and that the old index refuses the new queries.
"""

from __future__ import annotations

import dataclasses
import logging
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path

import numpy as np
import transformers

from bad_input_cases import Case, Check, Facts, listen, right
from bad_input_cases import _tiny_model as tiny
from hierret.encoders import (
    HashEncoder,
    SentenceTransformerEncoder,
    load_encoder,
    load_encoder_lazily,
)
from hierret.encoders.base import EncoderIdentity, l2_normalize
from hierret.encoders.cache import CachedEncoder, VectorCache
from hierret.search.vectors.index import IdentityMismatchError, VectorIndex


@contextmanager
def _hushed() -> Iterator[None]:
    """Without the libraries' own progress bars and notes (hierret's warnings still count)."""
    logger = logging.getLogger("sentence_transformers")
    hf = transformers.utils.logging
    level, verbosity, bars = logger.level, hf.get_verbosity(), hf.is_progress_bar_enabled()
    logger.setLevel(logging.ERROR)
    hf.set_verbosity_error()
    hf.disable_progress_bar()
    try:
        yield
    finally:
        logger.setLevel(level)
        hf.set_verbosity(verbosity)
        if bars:
            hf.enable_progress_bar()


@cache
def _tiny_model() -> Path:
    return tiny.build(Path(tempfile.mkdtemp()))


def _edited(edit: Callable[[Path], None]) -> Facts:
    """Cache and index the model's vectors, edit the folder in place, load it again."""
    with _hushed():
        return _edited_hushed(edit)


def _edited_hushed(edit: Callable[[Path], None]) -> Facts:
    folder = Path(shutil.copytree(_tiny_model(), Path(tempfile.mkdtemp()) / "model"))
    cache_root = Path(tempfile.mkdtemp())
    before = SentenceTransformerEncoder(str(folder), show_progress=False)
    old = CachedEncoder(before, VectorCache(cache_root)).encode_passages(tiny.TEXTS)
    index = VectorIndex(["t1", "t2", "t3"], old, before.identity)
    edit(folder)
    with listen() as heard:
        after = SentenceTransformerEncoder(str(folder), show_progress=False)
    fresh = after.encode_passages(tiny.TEXTS)
    cached = CachedEncoder(after, VectorCache(cache_root))
    wrong = int((cached.encode_passages(tiny.TEXTS) != fresh).any(axis=1).sum())
    moved = not np.allclose(fresh, old, atol=1e-6)
    try:
        index.search(after.encode_queries(["the cat"]), 1, after.identity)
        guard = False
    except IdentityMismatchError:
        guard = True
    same = after.identity == before.identity
    return Facts(
        f"vectors {'changed' if moved else 'unchanged'}, identity "
        f"{'unchanged' if same else 'changed'}; {cached.stats.hits} of 3 vectors served from "
        f"the cache, {wrong} wrong; the old index {'refuses' if guard else 'accepts'} the new "
        "queries" + "".join(f"; {w}" for w in heard),
        moved=moved,
        same=same,
        wrong=wrong,
        guard=guard,
        heard=heard,
    )


_NOT_STALE: tuple[Check, ...] = (
    right("0 wrong vectors served from the cache filled before the edit", lambda f: f.wrong == 0),
    right(
        "the old index refuses the new queries whenever the vectors changed",
        lambda f: f.guard or not f.moved,
    ),
)


def _other_engine() -> object:
    with _hushed():
        enc = SentenceTransformerEncoder(str(_tiny_model()), show_progress=False)
    then = dataclasses.replace(
        enc.identity, engine=re.sub(r"torch [^,]+", "torch 2.12.0", enc.identity.engine)
    )
    folder = Path(tempfile.mkdtemp())
    VectorIndex(["t1", "t2", "t3"], enc.encode_passages(tiny.TEXTS), then).save(folder)
    return VectorIndex.load(folder, enc.identity)


def _unknown_encoder() -> object:
    return load_encoder("no-such-model")


def _nan_rows() -> object:
    return l2_normalize(np.array([[np.nan, 1.0], [0.5, 0.5]]))


def _identity_swap() -> object:
    a, b = HashEncoder(dimension=8), HashEncoder(dimension=8, query_prefix="q: ")
    index = VectorIndex(["u1", "u2"], a.encode_passages(["one text", "another text"]), a.identity)
    return index.search(b.encode_queries(["one"]), 1, b.identity)


def _identity_with_wrong_types() -> object:
    return EncoderIdentity.from_dict(
        {
            "name": "m",
            "backend": "b",
            "weights": "w",
            "precision": "fp32",
            "dimension": "384",
            "window": 256,
        }
    )


def _e5_without_prefix() -> object:
    from hierret.encoders.e5 import E5Encoder

    return E5Encoder(query_prefix="")


def _e5_unknown_engine() -> object:
    from hierret.encoders.e5 import E5Encoder

    return E5Encoder(engine="turbo")


def _edit_case(what: str, edit: Callable[[Path], None]) -> Case:
    return (
        f"a model folder edited in place after its vectors were cached and indexed: {what}",
        lambda: _edited(edit),
        _NOT_STALE,
    )


CASES: list[Case] = [
    ("an encoder name that is not registered, not a folder, not a hub id", _unknown_encoder),
    ("load_encoder('') (an empty name: as a path, the current folder)", lambda: load_encoder("")),
    (
        "load_encoder_lazily('\\t') (whitespace only)",
        lambda: load_encoder_lazily("\t", tempfile.mkdtemp()),
    ),
    ("a vector with NaN given to the normaliser", _nan_rows),
    (
        "an index written by one 8-dimensional encoder, queried with another of the same width "
        "(another query prefix)",
        _identity_swap,
    ),
    ("a stored identity whose dimension is the string '384'", _identity_with_wrong_types),
    ("e5-small asked to embed without its engine's prefix", _e5_without_prefix),
    ("e5-small asked for an engine build that does not exist ('turbo')", _e5_unknown_engine),
    _edit_case("pooling mean -> CLS", tiny.pooling_cls),
    _edit_case("a Normalize module added", tiny.normalize_module),
    _edit_case("the tokenizer keeps case (do_lower_case false)", tiny.keeps_case),
    _edit_case("token window (max_seq_length) 16 -> 8", tiny.window_8),
    _edit_case("weights saved in half precision", tiny.half),
    (
        "a model folder edited in place after its vectors were cached and indexed: a default "
        "prompt ('a ') set in config_sentence_transformers.json",
        lambda: _edited(tiny.default_prompt),
        (
            *_NOT_STALE,
            right(
                "a warning says the default prompt is not applied",
                lambda f: any("default prompt" in w and "not applied" in w for w in f.heard),
            ),
        ),
    ),
    (
        "an index saved by the same model under another torch version (the identity's engine)",
        _other_engine,
    ),
]
