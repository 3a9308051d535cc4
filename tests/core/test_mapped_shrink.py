"""A memory-mapped cache file cut short under a running process: a clear error or a
recomputation, never SIGBUS (each case runs in a child process, so a SIGBUS shows
as its exit status instead of killing the test session)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import hierret
from hierret._mapped import MappedFileShrankError, check_mapped

SETUP = """
import os, sys, numpy as np
from pathlib import Path
from hierret.encoders.cache import CachedEncoder, VectorCache
from hierret.encoders import HashEncoder
from hierret.search.vectors.index import MappedIndex
root = Path(sys.argv[1])
texts = [f"passage {i} about topic {i % 7}" for i in range(4000)]
enc = CachedEncoder(HashEncoder(dimension=64), VectorCache(root))
truth = enc.encode_passages(texts)
(shard,) = sorted(root.rglob("*.hvc"))
def cut(path, keep):  # what cp over a file in use does: O_TRUNC, then write
    data = path.read_bytes()[:keep]
    with open(path, "wb") as f:
        f.write(data)
"""


def run(tmp_path: Path, body: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(Path(hierret.__file__).parents[1])}
    code = SETUP + textwrap.dedent(body)
    return subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_mapped_index_over_a_shard_cut_short_raises_a_clear_error(tmp_path: Path) -> None:
    proc = run(
        tmp_path,
        """
        from hierret._mapped import MappedFileShrankError
        cache = VectorCache(root)
        index = MappedIndex(cache.mapped(enc.identity), enc.identity, block_rows=512)
        q = truth[:1]
        assert len(index.search(q, 3, enc.identity)[0]) == 3
        cut(shard, 4096)
        try:
            index.search(q, 3, enc.identity)
        except MappedFileShrankError as err:
            print("REFUSED", err)
        """,
    )
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])  # -7 would be SIGBUS
    assert "REFUSED" in proc.stdout
    assert "shrank from" in proc.stdout
    assert "copy it to a new folder" in proc.stdout


def test_lookups_in_a_cache_cut_short_recompute_what_was_lost(tmp_path: Path) -> None:
    proc = run(
        tmp_path,
        """
        import logging
        logging.basicConfig()
        reader = CachedEncoder(HashEncoder(dimension=64), VectorCache(root))
        reader.encode_passages(texts[:10])  # the shard is mapped now
        cut(shard, 16384)
        out = reader.encode_passages(texts)
        print("WRONG", int((out != truth).any(axis=1).sum()))
        """,
    )
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
    assert "WRONG 0" in proc.stdout
    assert "shrank from" in proc.stderr  # the warning names what happened


def test_a_key_index_cut_short_is_read_again(tmp_path: Path) -> None:
    proc = run(
        tmp_path,
        """
        reader = CachedEncoder(HashEncoder(dimension=64), VectorCache(root))
        reader.encode_passages(texts[:10])  # the shard and its key index are mapped now
        cut(shard.with_suffix(".hvk"), 20)
        out = reader.encode_passages(texts[:50])
        print("WRONG", int((out != truth[:50]).any(axis=1).sum()))
        """,
    )
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
    assert "WRONG 0" in proc.stdout


def test_check_mapped_passes_whole_and_replaced_files(tmp_path: Path) -> None:
    path = tmp_path / "v.bin"
    np.arange(8192, dtype=np.float32).tofile(path)
    mapped = np.memmap(path, dtype=np.float32, mode="r", offset=4096)
    check_mapped([mapped, mapped[10:20], np.zeros(3)], "vectors")  # sound; in memory: skipped
    replacement = tmp_path / "new.bin"
    replacement.write_bytes(b"short")
    os.replace(replacement, path)  # a rename: the old pages stay valid
    check_mapped([mapped], "vectors")
    assert float(mapped[0]) == 1024.0
    with open(path, "r+b") as f:  # the new file, mapped, then cut in place
        f.write(b"\0" * 8192)
    again = np.memmap(path, dtype=np.uint8, mode="r")
    os.truncate(path, 10)
    with pytest.raises(MappedFileShrankError, match="shrank from 8192 to 10 bytes") as err:
        check_mapped([again[:5]], "vectors")
    assert (err.value.mapped, err.value.size) == (8192, 10)
