"""The vector cache: hits, misses, identity, corruption, atomic writes, compaction,
concurrent processes, permissions and unusable folders."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _toy import CountingEncoder
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray

import hierret
from hierret.encoders import EncoderIdentity, HashEncoder, Role
from hierret.encoders import cache as cache_mod
from hierret.encoders.cache import (
    CachedEncoder,
    CacheNotReadableError,
    CacheNotWritableError,
    CacheNotWritableWarning,
    MissingVectorsError,
    VectorCache,
    default_cache_dir,
    text_keys,
)
from hierret.encoders.cache import _shelf as shelf_mod

TEXTS = [f"passage number {i} about topic {i % 7}" for i in range(40)]


def shards(root: Path) -> list[Path]:
    return sorted(root.rglob("*.hvc"))


def leftovers(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.name.startswith(".tmp-")]


@pytest.fixture
def fake() -> CountingEncoder:
    return CountingEncoder(dimension=16)


def test_second_call_encodes_nothing(tmp_path: Path, fake: CountingEncoder) -> None:
    enc = CachedEncoder(fake, VectorCache(tmp_path))
    first = enc.encode_passages(TEXTS)
    assert len(fake.calls) == 1
    second = enc.encode_passages(TEXTS)
    assert len(fake.calls) == 1
    np.testing.assert_array_equal(first, second)
    np.testing.assert_array_equal(first, fake.encode_passages(TEXTS))
    assert (enc.stats.hits, enc.stats.misses, enc.stats.stored) == (40, 40, 40)
    assert enc.stats.hit_rate == 0.5
    assert enc.stats.as_dict()["hit_rate"] == 0.5
    # a new cache object on the same folder (a later run) finds them too
    again = CachedEncoder(fake, VectorCache(tmp_path))
    np.testing.assert_array_equal(again.encode_passages(TEXTS[::-1]), first[::-1])
    assert len(fake.calls) == 2  # the direct fake.encode_passages above, nothing more
    assert again.cache.stats.hits == 40
    assert not leftovers(tmp_path)


def test_misses_are_deduplicated_and_batched(tmp_path: Path, fake: CountingEncoder) -> None:
    enc = CachedEncoder(fake, VectorCache(tmp_path))
    enc.encode_passages(["a", "b"])
    out = enc.encode_passages(["c", "a", "c", "d", "b", "c"])
    assert fake.calls == [["a", "b"], ["c", "d"]]
    assert enc.stats.duplicates == 2
    np.testing.assert_array_equal(out, fake.encode_passages(["c", "a", "c", "d", "b", "c"]))
    assert enc.encode_passages([]).shape == (0, 16)


def test_identity_and_role_change_are_misses(tmp_path: Path) -> None:
    cache = VectorCache(tmp_path)
    plain, prefixed = (
        CountingEncoder(dimension=16),
        CountingEncoder(dimension=16, query_prefix="q: "),
    )
    CachedEncoder(plain, cache).encode_passages(["x"])
    CachedEncoder(plain, cache).encode_queries(["x"])  # another role: another key
    CachedEncoder(prefixed, cache).encode_passages(["x"])  # another identity
    CachedEncoder(CountingEncoder(dimension=8), cache).encode_passages(["x"])
    assert len(plain.calls) == 2
    assert len(prefixed.calls) == 1
    assert len({p.parent for p in shards(tmp_path)}) == 3
    ident = plain.identity
    assert text_keys(ident, "query", ["x"]) != text_keys(ident, "passage", ["x"])


def corrupt_and_reencode(
    tmp_path: Path, damage: Any, caplog: pytest.LogCaptureFixture, says: str
) -> tuple[CountingEncoder, NDArray[np.float32]]:
    writer = CountingEncoder(dimension=16)
    CachedEncoder(writer, VectorCache(tmp_path)).encode_passages(TEXTS)
    (shard,) = shards(tmp_path)
    damage(shard)
    reader = CountingEncoder(dimension=16)
    enc = CachedEncoder(reader, VectorCache(tmp_path))
    out = enc.encode_passages(TEXTS)
    np.testing.assert_array_equal(out, HashEncoder(dimension=16).encode_passages(TEXTS))
    assert shard.name in caplog.text
    assert says in caplog.text
    assert len(reader.calls) == 1
    # repaired: a later run reads everything back without warnings or work
    caplog.clear()
    later = CountingEncoder(dimension=16)
    np.testing.assert_array_equal(
        CachedEncoder(later, VectorCache(tmp_path)).encode_passages(TEXTS), out
    )
    assert not later.calls
    assert "vector cache" not in caplog.text
    assert not leftovers(tmp_path)
    return reader, out


def test_flipped_bytes_are_detected_and_recomputed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    def flip(path: Path) -> None:
        data = bytearray(path.read_bytes())
        data[-30] ^= 0xFF  # inside the last record's vector
        data[-170] ^= 0x01  # inside the vector of the record before
        path.write_bytes(bytes(data))

    reader, _ = corrupt_and_reencode(tmp_path, flip, caplog, "checksum mismatch")
    assert len(reader.calls[0]) == 2


def test_truncated_shard_is_detected_and_recomputed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    def truncate(path: Path) -> None:
        size = path.stat().st_size
        with path.open("r+b") as f:
            f.truncate(size - 150)  # records are 100 bytes: one and a half lost

    reader, _ = corrupt_and_reencode(tmp_path, truncate, caplog, "truncated")
    assert len(reader.calls[0]) == 2


def test_broken_header_is_detected_and_recomputed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    def scramble(path: Path) -> None:
        data = bytearray(path.read_bytes())
        data[20] ^= 0xFF
        path.write_bytes(bytes(data))

    reader, _ = corrupt_and_reencode(tmp_path, scramble, caplog, "header checksum")
    assert len(reader.calls[0]) == len(TEXTS)


def test_empty_shard_file_is_detected_and_recomputed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    reader, _ = corrupt_and_reencode(tmp_path, lambda p: p.write_bytes(b""), caplog, "unreadable")
    assert len(reader.calls[0]) == len(TEXTS)


def test_failed_write_leaves_nothing_behind(
    tmp_path: Path, fake: CountingEncoder, monkeypatch: pytest.MonkeyPatch
) -> None:
    enc = CachedEncoder(fake, VectorCache(tmp_path))
    enc.encode_passages(["first"])
    before = sorted(p.name for p in tmp_path.rglob("*"))

    def boom(*args: Any) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.warns(CacheNotWritableWarning, match="disk full"):
        got = enc.encode_passages(["second"])  # a failed write degrades: vectors returned
    monkeypatch.undo()
    assert (got == fake.encode_passages(["second"])).all()
    assert sorted(p.name for p in tmp_path.rglob("*")) == before
    assert not leftovers(tmp_path)
    fresh = CountingEncoder(dimension=16)
    CachedEncoder(fresh, VectorCache(tmp_path)).encode_passages(["first", "second"])
    assert fresh.calls == [["second"]]


def test_many_batches_are_compacted(tmp_path: Path, fake: CountingEncoder) -> None:
    cache = VectorCache(tmp_path, max_shards=3)
    enc = CachedEncoder(fake, cache)
    for text in TEXTS[:10]:
        enc.encode_queries([text])
    assert len(shards(tmp_path)) <= 3
    assert cache.count(fake.identity) == 10
    cache.compact(fake.identity)
    assert len(shards(tmp_path)) == 1
    fresh = CountingEncoder(dimension=16)
    out = CachedEncoder(fresh, VectorCache(tmp_path)).encode_queries(TEXTS[:10])
    assert not fresh.calls
    np.testing.assert_array_equal(out, fake.encode_queries(TEXTS[:10]))
    assert not leftovers(tmp_path)


def test_put_get_validation_and_clear(tmp_path: Path) -> None:
    cache = VectorCache(tmp_path)
    ident = EncoderIdentity("m", "hash", "v1", "fp32", 2, 16)
    keys = text_keys(ident, "passage", ["x", "y"])
    with pytest.raises(ValueError, match="shape"):
        cache.put(ident, keys, np.zeros((1, 2), dtype=np.float32))
    with pytest.raises(ValueError, match="32-byte"):
        cache.put(ident, [b"short"], np.zeros((1, 2), dtype=np.float32))
    cache.put(ident, keys, np.eye(2, dtype=np.float32))
    vecs, found = cache.get(ident, keys[::-1])
    assert found.all()
    assert vecs.tolist() == [[0.0, 1.0], [1.0, 0.0]]
    assert (cache.folder(ident) / "identity.json").is_file()
    cache.clear(ident)
    assert not cache.folder(ident).exists()
    assert not VectorCache(tmp_path).get(ident, keys)[1].any()
    with pytest.raises(ValueError, match="max_shards"):
        VectorCache(tmp_path, max_shards=0)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_put_refuses_non_finite_vectors_and_stores_nothing(tmp_path: Path, bad: float) -> None:
    cache = VectorCache(tmp_path)
    ident = EncoderIdentity("m", "hash", "v1", "fp32", 2, 16)
    keys = text_keys(ident, "passage", ["x", "y", "z"])
    vectors = np.eye(3, 2, dtype=np.float32)
    vectors[2, 1] = bad
    with pytest.raises(ValueError, match="NaN or infinite") as info:
        cache.put(ident, keys, vectors)
    msg = str(info.value)
    assert "1 of 3 rows" in msg
    assert keys[2].hex()[:16] in msg
    assert keys[0].hex()[:16] not in msg
    assert "nothing of this call was stored" in msg
    # atomic: not even the finite rows of the call were stored, in this process or on disk
    assert not cache.get(ident, keys)[1].any()
    assert not VectorCache(tmp_path).get(ident, keys)[1].any()
    assert shards(tmp_path) == []
    assert leftovers(tmp_path) == []


def test_put_matrices_refuses_non_finite_rows_and_stores_nothing(tmp_path: Path) -> None:
    cache = VectorCache(tmp_path)
    ident = cache_mod.TokenIdentity(EncoderIdentity("m", "hash", "v1", "fp32", 2, 16), "v1")
    keys = text_keys(ident, "passage", ["x", "y"])
    good, bad = np.ones((3, 2), np.float32), np.ones((2, 2), np.float32)
    bad[1, 0] = np.nan
    with pytest.raises(ValueError, match=r"token matrices .* NaN or infinite"):
        cache.put_matrices(ident, keys, [good, bad])
    assert VectorCache(tmp_path).get_matrices(ident, keys) == [None, None]
    assert shards(tmp_path) == []


def test_clear_deletes_only_the_caches_own_files(tmp_path: Path) -> None:
    project = tmp_path / "project"  # HIERRET_CACHE set to a folder that holds other work
    project.mkdir()
    (project / "config.json").write_text("{}")
    (project / "notes.part").write_text("draft")
    enc = CachedEncoder(HashEncoder(dimension=4), VectorCache(tmp_path))
    enc.encode_passages(["x"])
    folder = enc.cache.folder(enc.identity)
    (folder / "mine.json").write_text("{}")  # a file the cache did not write
    VectorCache(tmp_path).clear()
    assert (project / "config.json").read_text() == "{}"
    assert (project / "notes.part").read_text() == "draft"
    assert sorted(p.name for p in folder.iterdir()) == ["mine.json"]
    VectorCache(tmp_path).clear(enc.identity)
    assert (folder / "mine.json").is_file()
    assert not shards(tmp_path)


def test_default_cache_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HIERRET_CACHE", str(tmp_path / "vec"))
    assert default_cache_dir() == (tmp_path / "vec").resolve()
    assert VectorCache().root == (tmp_path / "vec").resolve()
    monkeypatch.delenv("HIERRET_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == (tmp_path / "xdg" / "hierret" / "vectors").resolve()


# --- several processes on one folder ------------------------------------------------

_WORKER = r"""
import random, sys, time
from pathlib import Path
from hierret.encoders.cache import CachedEncoder, VectorCache
from hierret.encoders import HashEncoder
root, ready, seed = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
texts = [f"shared text {i}" for i in range(600)]
truth = HashEncoder(dimension=16).encode_passages(texts)
rng = random.Random(seed)
(ready / str(seed)).touch()  # both interpreters up before either starts, however long
while len(list(ready.iterdir())) < 2:  # that takes on a busy machine
    time.sleep(0.001)
deadline, rounds, wrong = time.monotonic() + 6.0, 0, 0
while rounds < 20 and time.monotonic() < deadline:
    # a fresh reader each round lists and reads up to ~25 shards while the other
    # process may be compacting (deleting) them
    cache = VectorCache(root, max_shards=64)
    enc = CachedEncoder(HashEncoder(dimension=16), cache)
    for _ in range(12):  # one new shard each
        idx = rng.sample(range(600), 3)
        out = enc.encode_passages([texts[i] for i in idx])
        wrong += int((out != truth[idx]).any(axis=1).sum())
    cache.compact(enc.identity)
    rounds += 1
print(rounds, wrong)
"""


def test_two_processes_embedding_and_compacting_at_once(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    env = dict(os.environ)
    src = str(Path(hierret.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH")) if p)
    ready = tmp_path_factory.mktemp("ready")  # not in the cache's folder
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WORKER, str(tmp_path), str(ready), str(seed)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for seed in (1, 2)
    ]
    results = [p.communicate(timeout=600) for p in procs]  # a guard against a hang only
    for proc, (out, err) in zip(procs, results, strict=True):
        assert proc.returncode == 0, err
        assert err == ""  # no damaged or unreadable shard was ever seen
        rounds, wrong = map(int, out.split())
        assert rounds >= 1
        assert wrong == 0
    texts = [f"shared text {i}" for i in range(600)]
    ident = HashEncoder(dimension=16).identity
    vecs, found = VectorCache(tmp_path).get(ident, text_keys(ident, "passage", texts))
    truth = HashEncoder(dimension=16).encode_passages(texts)
    assert found.any()
    np.testing.assert_array_equal(vecs[found], truth[found])
    assert not leftovers(tmp_path)


def test_shard_compacted_away_between_listing_and_reading(
    tmp_path: Path, fake: CountingEncoder, monkeypatch: pytest.MonkeyPatch
) -> None:
    enc = CachedEncoder(fake, VectorCache(tmp_path))
    enc.encode_passages(TEXTS[:10])
    enc.encode_passages(TEXTS[10:20])
    assert len(shards(tmp_path)) == 2
    read = shelf_mod.Shelf._read
    raced: list[Path] = []

    def racing(self: Any, path: Path) -> Any:
        if not raced:  # "another process" merges both shards just after our listing
            raced.append(path)
            VectorCache(tmp_path).compact(fake.identity)
        return read(self, path)

    monkeypatch.setattr(shelf_mod.Shelf, "_read", racing)
    reader = CountingEncoder(dimension=16)
    out = CachedEncoder(reader, VectorCache(tmp_path)).encode_passages(TEXTS[:20])
    assert raced
    assert not raced[0].exists()
    assert not reader.calls  # found everything in the merged shard after listing again
    np.testing.assert_array_equal(out, HashEncoder(dimension=16).encode_passages(TEXTS[:20]))


def test_shards_that_keep_vanishing_are_recomputed_not_raised(
    tmp_path: Path, fake: CountingEncoder, monkeypatch: pytest.MonkeyPatch
) -> None:
    CachedEncoder(fake, VectorCache(tmp_path)).encode_passages(TEXTS[:5])

    def gone(self: Any, path: Path) -> Any:
        raise FileNotFoundError(2, "No such file or directory", str(path))

    monkeypatch.setattr(shelf_mod.Shelf, "_read", gone)
    reader = CountingEncoder(dimension=16)
    out = CachedEncoder(reader, VectorCache(tmp_path)).encode_passages(TEXTS[:5])
    assert reader.calls == [TEXTS[:5]]
    np.testing.assert_array_equal(out, HashEncoder(dimension=16).encode_passages(TEXTS[:5]))


def test_misses_see_shards_written_by_another_process_since(tmp_path: Path) -> None:
    ident = HashEncoder(dimension=16).identity
    keys = text_keys(ident, "passage", ["late"])
    early = VectorCache(tmp_path)
    assert not early.get(ident, keys)[1].any()  # folder read, nothing there
    CachedEncoder(HashEncoder(dimension=16), VectorCache(tmp_path)).encode_passages(["late"])
    vecs, found = early.get(ident, keys)
    assert found.all()
    np.testing.assert_array_equal(vecs, HashEncoder(dimension=16).encode_passages(["late"]))


# --- damaged files (property test) -----------------------------------------------------


@settings(max_examples=30, deadline=None)
@given(
    kind=st.sampled_from(["overwrite", "append", "truncate"]),
    where=st.floats(min_value=0.0, max_value=1.0),
    blob=st.binary(min_size=1, max_size=48),
    which=st.integers(min_value=0, max_value=1),
)
def test_damaged_shards_never_give_wrong_vectors(
    kind: str, where: float, blob: bytes, which: int
) -> None:
    truth = HashEncoder(dimension=8).encode_passages(TEXTS[:20])
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        enc = CachedEncoder(HashEncoder(dimension=8), VectorCache(root))
        enc.encode_passages(TEXTS[:12])
        enc.encode_passages(TEXTS[12:20])
        path = shards(root)[which]
        data = bytearray(path.read_bytes())
        at = int(where * len(data))
        if kind == "overwrite":
            data[at : at + len(blob)] = blob
        elif kind == "append":
            data += blob
        else:
            del data[at:]
        path.write_bytes(bytes(data))
        for _ in range(2):  # the damaged cache, then the repaired one
            counting = CountingEncoder(dimension=8)
            out = CachedEncoder(counting, VectorCache(root)).encode_passages(TEXTS[:20])
            np.testing.assert_array_equal(out, truth)
        assert not counting.calls
        assert not leftovers(root)
        shelf = VectorCache(root)._shelf(HashEncoder(dimension=8).identity)
        assert not shelf.broken  # unreadable shards were deleted,
        assert not any(s.damaged for s in shelf.shards)  # truncated/padded ones rewritten


# --- modes, unwritable and unreadable folders ------------------------------------------


def test_files_and_folders_follow_the_umask(tmp_path: Path) -> None:
    root = tmp_path / "new" / "cache"
    old = os.umask(0o022)
    try:
        CachedEncoder(HashEncoder(dimension=8), VectorCache(root)).encode_passages(["x"])
        os.umask(0o002)
        CachedEncoder(HashEncoder(dimension=4), VectorCache(root)).encode_passages(["x"])
    finally:
        os.umask(old)
    ident8, ident4 = HashEncoder(dimension=8).identity, HashEncoder(dimension=4).identity
    for ident, file_mode, dir_mode in ((ident8, 0o644, 0o755), (ident4, 0o664, 0o775)):
        folder = VectorCache(root).folder(ident)
        files = list(folder.iterdir())
        assert {p.suffix for p in files} == {".hvc", ".hvk", ".json"}
        assert {stat.S_IMODE(p.stat().st_mode) for p in files} == {file_mode}
        assert stat.S_IMODE(folder.stat().st_mode) == dir_mode
    for folder in (tmp_path / "new", root):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o755


class WarnedEncoder(CountingEncoder):
    """Records, at each model call, how many warnings had been issued."""

    def __init__(self, caught: list[warnings.WarningMessage], **kw: Any) -> None:
        super().__init__(**kw)
        self.caught = caught
        self.seen: list[int] = []

    def _embed(self, texts: list[str]) -> NDArray[Any]:
        self.seen.append(len(self.caught))
        return super()._embed(texts)


def test_unwritable_cache_warns_once_before_embedding_and_keeps_the_vectors(
    tmp_path: Path,
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("a regular file where the cache's parent folder should be")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = WarnedEncoder(caught, dimension=16)
        enc = CachedEncoder(model, VectorCache(blocker / "cache"))
        first = enc.encode_passages(TEXTS[:3])
        second = enc.encode_passages(TEXTS[:3])
    assert len(caught) == 1
    assert issubclass(caught[0].category, CacheNotWritableWarning)
    message = str(caught[0].message)
    assert str(blocker) in message
    assert "HIERRET_CACHE" in message
    assert "VectorCache(root=" in message
    assert model.seen == [1, 1]  # the check (and its warning) came before the embedding
    truth = HashEncoder(dimension=16).encode_passages(TEXTS[:3])
    np.testing.assert_array_equal(first, truth)
    np.testing.assert_array_equal(second, truth)
    assert enc.stats.stored == 0
    ident = model.identity
    with pytest.raises(CacheNotWritableError, match="HIERRET_CACHE") as info:
        VectorCache(blocker / "cache").put(
            ident, text_keys(ident, "passage", ["x"]), np.zeros((1, 16), dtype=np.float32)
        )
    assert isinstance(info.value, PermissionError)
    assert info.value.folder == VectorCache(blocker / "cache").folder(ident)


def test_hierret_cache_naming_a_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "vectors.txt"
    target.write_text("oops")
    monkeypatch.setenv("HIERRET_CACHE", str(target))
    enc = CachedEncoder(HashEncoder(dimension=8))
    with pytest.warns(CacheNotWritableWarning, match="vectors.txt"):
        out = enc.encode_passages(["x"])
    np.testing.assert_array_equal(out, HashEncoder(dimension=8).encode_passages(["x"]))
    assert target.read_text() == "oops"


def test_denied_writes_are_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def denied(folder: Path) -> Any:
        raise PermissionError(13, "Permission denied", str(folder))

    monkeypatch.setattr(shelf_mod, "create_temp", denied)  # works even as root
    ident = HashEncoder(dimension=8).identity
    with pytest.raises(CacheNotWritableError, match=r"Permission denied.*HIERRET_CACHE"):
        VectorCache(tmp_path).check_writable(ident)


def test_chmod_readonly_folder(tmp_path: Path) -> None:
    root = tmp_path / "ro"
    root.mkdir()
    root.chmod(0o555)
    try:
        if os.access(root, os.W_OK):
            pytest.skip(
                "running as root (or with CAP_DAC_OVERRIDE): chmod 0o555 does not stop writes"
            )
        model = CountingEncoder(dimension=8)
        with pytest.warns(CacheNotWritableWarning, match=str(root)):
            out = CachedEncoder(model, VectorCache(root)).encode_passages(["x"])
        np.testing.assert_array_equal(out, HashEncoder(dimension=8).encode_passages(["x"]))
        assert not list(root.iterdir())
    finally:
        root.chmod(0o755)


def test_unreadable_folder_is_a_clear_error_before_embedding(
    tmp_path: Path, fake: CountingEncoder, monkeypatch: pytest.MonkeyPatch
) -> None:
    CachedEncoder(fake, VectorCache(tmp_path)).encode_passages(["x"])
    folder = VectorCache(tmp_path).folder(fake.identity)
    listdir = os.listdir

    def denied(path: Any = ".") -> list[str]:
        if Path(path) == folder:
            raise PermissionError(13, "Permission denied", str(path))
        return listdir(path)

    monkeypatch.setattr(os, "listdir", denied)  # chmod 0o000 would not stop root
    reader = CountingEncoder(dimension=16)
    with pytest.raises(CacheNotReadableError, match="cannot be read") as info:
        CachedEncoder(reader, VectorCache(tmp_path)).encode_passages(["x", "y"])
    assert info.value.folder == folder
    assert str(folder) in str(info.value)
    assert not reader.calls


def test_unreadable_shard_is_recomputed_and_left_alone(
    tmp_path: Path,
    fake: CountingEncoder,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    CachedEncoder(fake, VectorCache(tmp_path)).encode_passages(["x"])
    (shard,) = shards(tmp_path)
    path_open = Path.open

    def denied(self: Path, *args: Any, **kw: Any) -> Any:
        if self == shard:  # another user's 0600 shard
            raise PermissionError(13, "Permission denied", str(self))
        return path_open(self, *args, **kw)

    monkeypatch.setattr(Path, "open", denied)
    reader = CountingEncoder(dimension=16)
    out = CachedEncoder(reader, VectorCache(tmp_path)).encode_passages(["x"])
    assert reader.calls == [["x"]]
    np.testing.assert_array_equal(out, HashEncoder(dimension=16).encode_passages(["x"]))
    assert shard.exists()
    assert "cannot read shard" in caplog.text


# --- missing keys -----------------------------------------------------------------------


def test_missing_keys(tmp_path: Path, fake: CountingEncoder) -> None:
    cache = VectorCache(tmp_path)
    CachedEncoder(fake, cache).encode_queries(["stored"])
    ident = fake.identity
    vecs, found = cache.get(ident, text_keys(ident, "query", ["stored", "absent"]))
    assert found.tolist() == [True, False]
    assert not vecs[1].any()
    assert cache.lookup(ident, ["stored"], role="query").shape == (1, 16)
    with pytest.raises(MissingVectorsError) as info:
        cache.lookup(ident, ["stored", "absent", "also absent"], role="query")
    err = info.value
    assert isinstance(err, KeyError)
    assert err.missing == ["absent", "also absent"]
    message = str(err)
    assert "2 of 3 query" in message
    assert ident.describe() in message
    assert "put()" in message
    assert "CachedEncoder" in message
    with pytest.raises(MissingVectorsError, match="1 of 1 passage"):
        cache.lookup(ident, ["stored"])  # stored as a query, not as a passage


def test_repeated_key_with_a_damaged_record_is_no_keyerror(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    ident = EncoderIdentity("m", "hash", "v1", "fp32", 2, 16)
    keys = text_keys(ident, "passage", ["x"])
    VectorCache(tmp_path).put(ident, keys, np.ones((1, 2), dtype=np.float32))
    (shard,) = shards(tmp_path)
    data = bytearray(shard.read_bytes())
    data[-6] ^= 1
    shard.write_bytes(bytes(data))
    vecs, found = VectorCache(tmp_path).get(ident, keys + keys)
    assert not found.any()
    assert not vecs.any()
    assert "checksum mismatch" in caplog.text


def test_token_counts_are_counted_once_per_text(tmp_path: Path) -> None:
    class Counting(HashEncoder):
        def __init__(self) -> None:
            super().__init__(dimension=8)
            self.asked: list[str] = []

        def count_tokens(self, texts: Sequence[str], role: Role = "passage") -> list[int]:
            self.asked.extend(texts)
            return super().count_tokens(texts, role)

    inner = Counting()
    enc = CachedEncoder(inner, VectorCache(tmp_path))
    texts = ["a cat sat", "a dog ran far", "a cat sat"]
    first = enc.count_tokens(texts)
    assert first == HashEncoder(dimension=8).count_tokens(texts)
    assert enc.count_tokens(texts[::-1]) == first[::-1]
    assert inner.asked == ["a cat sat", "a dog ran far"]  # each distinct text once
    enc.count_tokens(["a cat sat"], "query")  # another role: its own count
    assert inner.asked[-1] == "a cat sat"


def test_raw_vectors_are_cached_apart_from_unit_vectors(tmp_path: Path) -> None:
    """encode_unnormalized keeps the model's rows under identity(normalized=False)."""
    from dataclasses import replace

    raw_encoder = HashEncoder(dimension=8)
    texts = ["a cat sat", "dogs bark loudly", "a cat sat"]
    enc = CachedEncoder(raw_encoder, VectorCache(tmp_path))
    raw = enc.encode_unnormalized(texts)
    np.testing.assert_array_equal(raw, raw_encoder.encode_unnormalized(texts))
    assert not np.allclose(np.linalg.norm(raw, axis=1), 1.0)  # really the raw rows
    unit = enc.encode(texts)
    np.testing.assert_allclose(np.linalg.norm(unit, axis=1), 1.0, rtol=1e-6)
    ident = raw_encoder.identity
    assert enc.cache.count(replace(ident, normalized=False)) == 2
    assert enc.cache.count(ident) == 2
    fresh = CachedEncoder(HashEncoder(dimension=8), VectorCache(tmp_path))
    np.testing.assert_array_equal(fresh.encode_unnormalized(texts), raw)
    assert fresh.stats.misses == 0


def _reformat(shard: Path, fmt: object) -> None:
    """Rewrite ``shard``'s header with another ``format`` (its checksum recomputed) and
    other numbers in every vector (their record checksums recomputed too): what a
    newer hierret's layout could look like to this one."""
    import json
    import struct
    import zlib

    data = shard.read_bytes()
    (hlen,) = struct.unpack_from("<I", data, 8)
    meta = json.loads(data[12 : 12 + hlen])
    meta["format"] = fmt
    head = json.dumps(meta, sort_keys=True).encode()
    body = bytearray(data[16 + hlen :])
    seed = zlib.crc32(meta["identity"].encode())
    size = 32 + 4 * meta["dimension"] + 4
    for r in range(meta["count"]):
        rec = body[r * size : (r + 1) * size]
        rec[32:-4] = np.full(meta["dimension"], 0.5, "<f4").tobytes()
        rec[-4:] = struct.pack("<I", zlib.crc32(bytes(rec[:-4]), seed))
        body[r * size : (r + 1) * size] = rec
    shard.write_bytes(
        b"HRVCACHE"
        + struct.pack("<I", len(head))
        + head
        + struct.pack("<I", zlib.crc32(head))
        + bytes(body)
    )


@pytest.mark.parametrize("fmt", [2, 0, "1", None])
def test_a_shard_of_another_format_is_never_served_nor_deleted(
    tmp_path: Path, fmt: object, caplog: pytest.LogCaptureFixture
) -> None:
    truth = HashEncoder(dimension=8).encode_passages(TEXTS[:10])
    CachedEncoder(HashEncoder(dimension=8), VectorCache(tmp_path)).encode_passages(TEXTS[:10])
    (shard,) = shards(tmp_path)
    _reformat(shard, fmt)
    before = shard.read_bytes()
    model = CountingEncoder(dimension=8)
    cache = VectorCache(tmp_path)
    enc = CachedEncoder(model, cache)
    with caplog.at_level("WARNING", logger="hierret"):
        out = enc.encode_passages(TEXTS[:10])
    assert np.array_equal(out, truth)  # 0 wrong vectors
    assert sum(len(c) for c in model.calls) == 10  # all recomputed
    assert f"format {fmt!r}" in caplog.text
    assert "upgrade hierret" in caplog.text
    assert cache.mapped(model.identity)[0][1].tolist() == truth.tolist()  # only our shard
    cache.compact(model.identity)
    assert shard.read_bytes() == before  # a newer hierret's shard is left alone


def test_an_index_of_another_format_is_refused(tmp_path: Path) -> None:
    import json

    from hierret.search.vectors.index import INDEX_FILE, IndexFileError, VectorIndex

    VectorIndex(["a"], [[1.0, 0.0]], identity="toy").save(tmp_path)
    meta = tmp_path / INDEX_FILE
    doc = json.loads(meta.read_text())
    doc["format"] = 2
    meta.write_text(json.dumps(doc))
    with pytest.raises(IndexFileError, match="in format 2, and this hierret reads format 1"):
        VectorIndex.load(tmp_path)
