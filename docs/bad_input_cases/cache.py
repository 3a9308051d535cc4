"""Bad input to the vector cache (run by ``docs/bad_input.py``).

Each case builds its situation in a fresh :func:`tempfile.mkdtemp` folder with a
:class:`~hierret.encoders.HashEncoder` (no model), runs the cache, and says what
happened: how many vectors were recomputed and how many came back wrong
(compared with the encoder called directly), or raises the package's error.
"""

from __future__ import annotations

import logging
import os
import tempfile
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from hierret import cache as cache_mod
from hierret.cache import CachedEncoder, VectorCache, text_keys
from hierret.encoders import Encoder, HashEncoder

_TEXTS = [f"section {i}: a paragraph about topic {i % 5}" for i in range(30)]


class _Counting(HashEncoder):
    def __init__(self) -> None:
        super().__init__(dimension=16)
        self.embedded = 0

    def _embed(self, texts: list[str]) -> Any:
        self.embedded += len(texts)
        return super()._embed(texts)


@contextmanager
def _quiet() -> Iterator[Callable[[], list[str]]]:
    """Collect the cache's log warnings and Python warnings instead of printing them;
    yields a function listing them so far ("log warning", or a warning class name)."""
    logged: list[str] = []

    class _Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            logged.append(f"log {record.levelname.lower()}")

    logger = logging.getLogger("hierret.cache")
    handler, propagate = _Keep(logging.WARNING), logger.propagate
    logger.addHandler(handler)
    logger.propagate = False
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            yield lambda: logged + [type(w.message).__name__ for w in caught]
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate


def _fill(root: Path) -> Path:
    """A cache holding the vectors of ``_TEXTS``; returns its one shard."""
    CachedEncoder(HashEncoder(dimension=16), VectorCache(root)).encode_passages(_TEXTS)
    (shard,) = sorted(root.rglob("*.hvc"))
    return shard


def _reread(root: str | os.PathLike[str] | None, said: Callable[[], list[str]]) -> str:
    """Embed ``_TEXTS`` through the cache at ``root``; count recomputed and wrong vectors."""
    model = _Counting()
    enc: Encoder = CachedEncoder(model, VectorCache(root) if root is not None else None)
    out = enc.encode_passages(_TEXTS)
    wrong = int((out != HashEncoder(dimension=16).encode_passages(_TEXTS)).any(axis=1).sum())
    notes = f"; {len(said())} warning(s): {', '.join(sorted(set(said())))}" if said() else ""
    return f"{model.embedded} of {len(_TEXTS)} vectors recomputed, {wrong} wrong{notes}"


def _damaged(damage: Callable[[bytearray], bytearray]) -> str:
    root = Path(tempfile.mkdtemp())
    shard = _fill(root)
    shard.write_bytes(bytes(damage(bytearray(shard.read_bytes()))))
    with _quiet() as said:
        first = _reread(root, said)
    with _quiet() as said:
        second = _reread(root, said)
    return f"{first}; next run: {second}"


def _appended() -> object:
    return _damaged(lambda b: b + os.urandom(37))


def _overwritten() -> object:
    def scribble(b: bytearray) -> bytearray:
        b[-450:-400] = os.urandom(50)  # inside the records of the last texts
        return b

    return _damaged(scribble)


def _truncated() -> object:
    return _damaged(lambda b: b[: len(b) - 250])


def _vanishing() -> object:
    root = Path(tempfile.mkdtemp())
    enc = CachedEncoder(HashEncoder(dimension=16), VectorCache(root))
    enc.encode_passages(_TEXTS[:15])
    enc.encode_passages(_TEXTS[15:])
    read = cache_mod._Shelf._read
    raced: list[bool] = []

    def racing(self: Any, path: Path) -> Any:
        if not raced:  # another process merges every shard just after our listing
            raced.append(True)
            VectorCache(root).compact(enc.identity)
        return read(self, path)

    cache_mod._Shelf._read = racing  # type: ignore[method-assign]
    try:
        with _quiet() as said:
            return _reread(root, said)
    finally:
        cache_mod._Shelf._read = read  # type: ignore[method-assign]


def _blocked_root() -> Path:
    blocker = Path(tempfile.mkdtemp()) / "a-file"
    blocker.write_text("a regular file where a folder should be")
    return blocker / "cache"


def _unwritable_encoder() -> object:
    root = _blocked_root()
    with _quiet() as said:
        first = _reread(root, said)
    with _quiet() as said:
        second = _reread(root, said)  # a new CachedEncoder: warns again, once
    return f"{first}; again: {second}"


def _unwritable_put() -> object:
    ident = HashEncoder(dimension=16).identity
    keys = text_keys(ident, "passage", ["x"])
    return VectorCache(_blocked_root()).put(ident, keys, np.zeros((1, 16), dtype=np.float32))


def _missing_lookup() -> object:
    root = Path(tempfile.mkdtemp())
    _fill(root)
    ident = HashEncoder(dimension=16).identity
    return VectorCache(root).lookup(ident, [_TEXTS[0], "a text never embedded"])


def _repeated_damaged_key() -> object:
    root = Path(tempfile.mkdtemp())
    shard = _fill(root)
    data = bytearray(shard.read_bytes())
    data[-10] ^= 0xFF  # the last record's vector
    shard.write_bytes(bytes(data))
    ident = HashEncoder(dimension=16).identity
    key = text_keys(ident, "passage", [_TEXTS[-1]])[0]
    with _quiet() as said:
        vecs, found = VectorCache(root).get(ident, [key, key])
    return f"found {found.tolist()}, rows all zero: {not vecs.any()}; {len(said())} warning(s)"


def _env_names_a_file() -> object:
    target = Path(tempfile.mkdtemp()) / "vectors.bin"
    blob = bytes(64)
    target.write_bytes(blob)
    old = os.environ.get("HIERRET_CACHE")
    os.environ["HIERRET_CACHE"] = str(target)
    try:
        with _quiet() as said:
            out = _reread(None, said)
    finally:
        if old is None:
            del os.environ["HIERRET_CACHE"]
        else:
            os.environ["HIERRET_CACHE"] = old
    return f"{out}; file untouched: {target.read_bytes() == blob}"


CASES: list[tuple[str, Callable[[], object]]] = [
    ("a cache shard with random bytes appended", _appended),
    ("a cache shard with 50 random bytes written over its last records", _overwritten),
    ("a cache shard truncated in the middle of a record", _truncated),
    ("a shard merged away by another process between listing and reading", _vanishing),
    ("CachedEncoder on a cache folder whose parent is a regular file", _unwritable_encoder),
    ("VectorCache.put into a folder whose parent is a regular file", _unwritable_put),
    ("VectorCache.lookup of a text that was never stored", _missing_lookup),
    ("VectorCache.get asked twice for one key whose record is damaged", _repeated_damaged_key),
    ("HIERRET_CACHE pointing at a regular file", _env_names_a_file),
]
