"""A cache folder written by an earlier hierret is read, and written, exactly as it was.

``tests/data/cache_format1/`` was written by :func:`fill` with hierret at commit
88a0aa2 (``hierret/encoders/cache.py`` as one module, before it became a package; ``<88a0aa2>``
a checkout of it; the file was then ``tests/test_cache_format.py``)::

    PYTHONPATH=<88a0aa2>/src python tests/core/test_cache_format.py tests/data/cache_format1

It holds two vector shards (passages, queries) and one token-matrix shard, each with
its key index and ``identity.json``. Today's code must serve every vector and matrix
from it as a hit (nothing embedded), and writing the same things must give the same
bytes, file by file (shard names aside: they hold the time and the process id).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from hierret.encoders import HashEncoder
from hierret.encoders.cache import CachedEncoder, TokenIdentity, VectorCache, text_keys

FIXTURE = Path(__file__).parents[1] / "data" / "cache_format1"
PASSAGES = ["a cat sat", "a dog ran", "", "naïve café ☕", "line\nbreak"]
QUERIES = ["which cat?", "a dog ran"]
TOKENS = "fixture-tokens-v1"


def encoder() -> HashEncoder:
    return HashEncoder(dimension=8)


def matrices(n: int) -> list[np.ndarray]:
    """``n`` token matrices of 1, 2, ... rows, fixed values."""
    return [np.arange(8 * (i + 1), dtype=np.float32).reshape(i + 1, 8) / 7 for i in range(n)]


def fill(root: Path) -> None:
    """Write the fixture's contents under ``root``: one shard per call."""
    enc = encoder()
    cache = VectorCache(root)
    ident = enc.identity
    cache.put(ident, text_keys(ident, "passage", PASSAGES), enc.encode_passages(PASSAGES))
    cache.put(ident, text_keys(ident, "query", QUERIES), enc.encode_queries(QUERIES))
    tok = TokenIdentity(ident, TOKENS)
    cache.put_matrices(tok, text_keys(tok, "passage", PASSAGES[:3]), matrices(3))


def contents(root: Path) -> list[tuple[str, str, bytes]]:
    """Every file under ``root`` as (folder, suffix, bytes), sorted: names left out."""
    return sorted((p.parent.name, p.suffix, p.read_bytes()) for p in root.rglob("*") if p.is_file())


@pytest.fixture
def old_cache(tmp_path: Path) -> Path:
    """A copy of the fixture (a cache is written to when it is read: never the original)."""
    assert FIXTURE.is_dir(), f"{FIXTURE} missing: run this file with the old hierret"
    return Path(shutil.copytree(FIXTURE, tmp_path / "old"))


def test_the_fixture_holds_what_fill_writes() -> None:
    suffixes = sorted(p.suffix for p in FIXTURE.rglob("*") if p.is_file())
    assert suffixes == [".hvc"] * 3 + [".hvk"] * 3 + [".json"] * 2


def test_a_cache_written_before_is_a_hit(old_cache: Path) -> None:
    enc = encoder()
    cached = CachedEncoder(enc, VectorCache(old_cache))
    got = cached.encode_passages(PASSAGES)
    queries = cached.encode_queries(QUERIES)
    assert cached.stats.misses == 0
    assert cached.stats.hits == len(PASSAGES) + len(QUERIES)
    np.testing.assert_array_equal(got, enc.encode_passages(PASSAGES))
    np.testing.assert_array_equal(queries, enc.encode_queries(QUERIES))
    tok = TokenIdentity(enc.identity, TOKENS)
    found = VectorCache(old_cache).get_matrices(tok, text_keys(tok, "passage", PASSAGES))
    assert [m is None for m in found] == [False, False, False, True, True]
    for m, want in zip(found[:3], matrices(3), strict=True):
        np.testing.assert_array_equal(m, want)
    assert contents(old_cache) == contents(FIXTURE)  # reading changed no file


def test_writing_the_same_gives_the_same_bytes(tmp_path: Path) -> None:
    fill(tmp_path / "new")
    new, old = contents(tmp_path / "new"), contents(FIXTURE)
    assert [(f, s) for f, s, _ in new] == [(f, s) for f, s, _ in old]
    for (folder, suffix, got), (_, _, want) in zip(new, old, strict=True):
        assert got == want, f"{folder}/*{suffix} differs from the fixture written by 88a0aa2"


def test_the_test_can_fail(old_cache: Path) -> None:
    """A flipped byte in a vector record is noticed (the comparison is not vacuous)."""
    shard = max(old_cache.rglob("*.hvc"), key=lambda p: p.stat().st_size)
    data = bytearray(shard.read_bytes())
    data[-5] ^= 0xFF
    shard.write_bytes(bytes(data))
    assert contents(old_cache) != contents(FIXTURE)


if __name__ == "__main__":  # write the fixture (with the hierret to pin)
    target = Path(sys.argv[1])
    if target.exists():
        raise SystemExit(f"{target} exists: remove it first, or name a new folder")
    fill(target)
    print(f"wrote {len(list(target.rglob('*')))} paths under {target}")
