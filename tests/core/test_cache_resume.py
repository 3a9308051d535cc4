"""An interrupted embedding keeps what it made: vectors reach the cache batch by batch.

A child process (``_embed_child.py``) embeds N texts into a cache and is killed
(SIGKILL, SIGINT) after k batches; the rerun embeds exactly the N - kept texts
left. A full disk degrades as a read-only cache does: results and one warning.
"""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import hierret
import hierret.encoders.cache._shelf as shelf_module
from hierret.encoders import HashEncoder
from hierret.encoders.cache import CachedEncoder, CacheNotWritableWarning, VectorCache

sys.path.insert(0, str(Path(__file__).parent))
from _embed_child import BatchedHashEncoder, texts

N, BATCH, STOP = 50, 8, 3  # killed while making batch 3: 3 batches (24 texts) stored
#: A guard against a hung child, not a timing: long enough that a busy machine never
#: reaches it (the child takes about a second on a quiet one).
GUARD_S = 600


def run_child(root: Path, marker: Path) -> subprocess.Popen[str]:
    src = str(Path(hierret.__file__).parents[1])
    env = {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}
    child = Path(__file__).with_name("_embed_child.py")
    args = [sys.executable, str(child), str(root), str(N), str(BATCH), str(STOP), str(marker)]
    return subprocess.Popen(  # Ctrl-C as at a prompt, even if this process ignores it
        args, env=env, stdout=subprocess.PIPE, text=True, preexec_fn=default_sigint
    )


def default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def wait_for(marker: Path, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + GUARD_S
    while not marker.exists():
        assert proc.poll() is None, "the child exited before reaching the stop batch"
        assert time.monotonic() < deadline, "the child never reached the stop batch"
        time.sleep(0.02)


def rerun(root: Path) -> BatchedHashEncoder:
    enc = BatchedHashEncoder(BATCH)
    got = CachedEncoder(enc, VectorCache(root)).encode_passages(texts(N))
    want = BatchedHashEncoder(BATCH).encode_passages(texts(N))
    assert got.view(np.uint32).tolist() == want.view(np.uint32).tolist()  # bit for bit
    return enc


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT])
def test_killed_run_keeps_its_batches(tmp_path: Path, sig: signal.Signals) -> None:
    marker = tmp_path / "stopped"
    proc = run_child(tmp_path / "cache", marker)
    wait_for(marker, proc)
    proc.send_signal(sig)
    out, _ = proc.communicate(timeout=GUARD_S)
    kept = VectorCache(tmp_path / "cache").count(BatchedHashEncoder(BATCH).identity)
    assert kept == STOP * BATCH
    if sig == signal.SIGINT:
        assert proc.returncode == 130
        assert out.strip() == f"stored {kept}"  # the truth
    assert rerun(tmp_path / "cache").embedded == N - kept
    assert rerun(tmp_path / "cache").embedded == 0


def test_full_disk_returns_vectors_with_one_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = shelf_module.atomic_write
    writes = [0]

    def full_after_two_shards(path: Any, content: Any, **kw: Any) -> Path:
        if str(path).endswith(".hvc"):
            writes[0] += 1
            if writes[0] > 2:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        return real(path, content, **kw)

    monkeypatch.setattr(shelf_module, "atomic_write", full_after_two_shards)
    enc = BatchedHashEncoder(BATCH)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = CachedEncoder(enc, VectorCache(tmp_path)).encode_passages(texts(N))
    mine = [w for w in caught if issubclass(w.category, CacheNotWritableWarning)]
    assert len(mine) == 1, [str(w.message) for w in caught]
    assert "No space left on device" in str(mine[0].message)
    assert "HIERRET_CACHE" in str(mine[0].message)
    assert enc.embedded == N  # nothing computed was thrown away
    assert np.array_equal(got, BatchedHashEncoder(BATCH).encode_passages(texts(N)))
    monkeypatch.undo()
    assert VectorCache(tmp_path).count(enc.identity) == 2 * BATCH
    assert rerun(tmp_path).embedded == N - 2 * BATCH


def test_batches_equal_one_call() -> None:
    enc = BatchedHashEncoder(7)
    parts = list(enc.encode_batches(texts(20), "query"))
    assert [len(i) for i, _ in parts] == [7, 7, 6]
    whole = np.empty((20, 16), dtype=np.float32)
    for idx, rows in parts:
        whole[idx] = rows
    assert np.array_equal(whole, HashEncoder(dimension=16).encode(texts(20), "query"))
