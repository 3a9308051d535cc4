"""Bad input to the vector cache (run by ``docs/bad_input.py``).

Each case builds its situation in a fresh :func:`tempfile.mkdtemp` folder with a
:class:`~hierret.encoders.HashEncoder` (no model), runs the cache, and counts
what matters: how many vectors were recomputed (a stored vector recomputed is
a cache entry lost), how many came back wrong (compared with the encoder
called directly), what the package said, and what is left on disk.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import stat
import struct
import subprocess
import sys
import tempfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

import hierret
from bad_input_cases import Case, Check, Facts, kept, listen, right
from hierret._files import TEMP_PREFIX
from hierret.encoders import Encoder, HashEncoder
from hierret.encoders.cache import (
    CachedEncoder,
    CacheNotReadableError,
    TokenIdentity,
    VectorCache,
    text_keys,
)
from hierret.encoders.cache import _shelf as cache_mod  # where shards are read and written

_TEXTS = [f"section {i}: a paragraph about topic {i % 5}" for i in range(30)]
_TRUTH = HashEncoder(dimension=16).encode_passages(_TEXTS)


class _Counting(HashEncoder):
    def __init__(self) -> None:
        super().__init__(dimension=16)
        self.embedded = 0

    def _embed(self, texts: list[str]) -> Any:
        self.embedded += len(texts)
        return super()._embed(texts)


def _fill(root: Path, texts: list[str] = _TEXTS) -> Path:
    """A cache holding the vectors of ``texts``; returns its newest shard."""
    CachedEncoder(HashEncoder(dimension=16), VectorCache(root)).encode_passages(texts)
    return sorted(root.rglob("*.hvc"))[-1]


def _leftovers(root: Path) -> list[Path]:
    """Temporary files a write left behind."""
    return [p for p in root.rglob("*") if p.name.startswith(TEMP_PREFIX)]


def _reread(root: str | os.PathLike[str] | None) -> Facts:
    """Embed ``_TEXTS`` through the cache at ``root``; count recomputed and wrong vectors."""
    model = _Counting()
    with listen() as heard:
        enc: Encoder = CachedEncoder(model, VectorCache(root) if root is not None else None)
        out = enc.encode_passages(_TEXTS)
    wrong = int((out != _TRUTH).any(axis=1).sum())
    notes = f"; said: {' / '.join(heard)}" if heard else ""
    return Facts(
        f"{model.embedded} of {len(_TEXTS)} vectors recomputed, {wrong} wrong{notes}",
        recomputed=model.embedded,
        wrong=wrong,
        heard=heard,
    )


def _damaged(damage: Callable[[bytearray], bytearray]) -> Facts:
    root = Path(tempfile.mkdtemp())
    shard = _fill(root)
    shard.write_bytes(bytes(damage(bytearray(shard.read_bytes()))))
    first, second = _reread(root), _reread(root)
    return Facts(f"{first}; next run: {second}", first=first, second=second, shard=shard.name)


def _damage_checks(recomputed: int, what: str) -> tuple[Check, ...]:
    claim = (
        f"only {what} recomputed ({recomputed} of 30), none on the next run"
        if recomputed
        else "no stored vector recomputed, on either run"
    )
    return (
        right("0 wrong vectors, on both runs", lambda f: f.first.wrong == f.second.wrong == 0),
        kept(claim, lambda f: (f.first.recomputed, f.second.recomputed) == (recomputed, 0)),
        right(
            "a warning names the damaged shard", lambda f: any(f.shard in w for w in f.first.heard)
        ),
        right("the repaired cache says nothing on the next run", lambda f: not f.second.heard),
    )


def _appended() -> Facts:
    return _damaged(lambda b: b + os.urandom(37))


def _overwritten() -> Facts:
    def scribble(b: bytearray) -> bytearray:
        b[-450:-400] = bytes(x ^ 0xFF for x in b[-450:-400])  # one record of 100 bytes
        return b

    return _damaged(scribble)


def _truncated() -> Facts:
    return _damaged(lambda b: b[: len(b) - 250])  # two and a half records of 100 bytes


def _vanishing() -> Facts:
    root = Path(tempfile.mkdtemp())
    enc = CachedEncoder(HashEncoder(dimension=16), VectorCache(root))
    enc.encode_passages(_TEXTS[:15])
    enc.encode_passages(_TEXTS[15:])
    read = cache_mod.Shelf._read
    raced: list[bool] = []

    def racing(self: Any, path: Path) -> Any:
        if not raced:  # another process merges every shard just after our listing
            raced.append(True)
            VectorCache(root).compact(enc.identity)
        return read(self, path)

    cache_mod.Shelf._read = racing  # type: ignore[method-assign]
    try:
        return _reread(root)
    finally:
        cache_mod.Shelf._read = read  # type: ignore[method-assign]


def _blocked_root() -> Path:
    blocker = Path(tempfile.mkdtemp()) / "a-file"
    blocker.write_text("a regular file where a folder should be")
    return blocker / "cache"


def _warned_once(f: Facts) -> bool:
    runs = (f.first, f.second) if hasattr(f, "first") else (f,)
    return all(
        sum("CacheNotWritableWarning" in w and "HIERRET_CACHE" in w for w in r.heard) == 1
        for r in runs
    )


_ONE_WARNING = right("one CacheNotWritableWarning per CachedEncoder, naming the fix", _warned_once)


def _unwritable_encoder() -> Facts:
    root = _blocked_root()
    first, second = _reread(root), _reread(root)  # a new CachedEncoder: warns again, once
    return Facts(f"{first}; again: {second}", first=first, second=second)


class _Batched(_Counting):
    """Embeds 10 texts a batch, as a real model batches."""

    def _embed_batches(self, texts: list[str]) -> Any:
        for lo in range(0, len(texts), 10):
            idx = list(range(lo, min(lo + 10, len(texts))))
            yield idx, self._embed([texts[i] for i in idx])


def _disk_full() -> Facts:
    """The disk fills up after the first batch's shard: ENOSPC on every later write."""
    root = Path(tempfile.mkdtemp())
    real, shards = cache_mod.atomic_write, [0]

    def full(path: Any, content: Any, **kw: Any) -> Any:
        if str(path).endswith(".hvc"):
            shards[0] += 1
            if shards[0] > 1:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        return real(path, content, **kw)

    model = _Batched()
    cache_mod.atomic_write = full  # type: ignore[assignment]
    try:
        with listen() as heard:
            out = CachedEncoder(model, VectorCache(root)).encode_passages(_TEXTS)
    finally:
        cache_mod.atomic_write = real
    wrong = int((out != _TRUTH).any(axis=1).sum())
    again = _reread(root)
    return Facts(
        f"{model.embedded} of {len(_TEXTS)} embedded, {wrong} wrong; said: "
        f"{' / '.join(heard)}; next run: {again}",
        wrong=wrong,
        heard=heard,
        again=again,
    )


def _unwritable_put() -> object:
    ident = HashEncoder(dimension=16).identity
    keys = text_keys(ident, "passage", ["x"])
    return VectorCache(_blocked_root()).put(ident, keys, np.zeros((1, 16), dtype=np.float32))


def _unreadable() -> Facts:
    root = Path(tempfile.mkdtemp())
    model = _Counting()
    folder = VectorCache(root).folder(model.identity)
    folder.symlink_to(folder)  # listing it fails, for root too (a 0o000 folder stops others)
    try:
        CachedEncoder(model, VectorCache(root)).encode_passages(_TEXTS)
    except CacheNotReadableError as err:
        return Facts(f"{model.embedded} texts embedded", refused=err, embedded=model.embedded)
    return Facts(f"returned; {model.embedded} texts embedded", embedded=model.embedded)


def _missing_lookup() -> object:
    root = Path(tempfile.mkdtemp())
    _fill(root)
    ident = HashEncoder(dimension=16).identity
    return VectorCache(root).lookup(ident, [_TEXTS[0], "a text never embedded"])


def _nonfinite_put(bad: float, row: int) -> Facts:
    """``VectorCache.put`` of 3 new vectors, row ``row`` holding ``bad``, into a filled cache."""
    root = Path(tempfile.mkdtemp())
    _fill(root)
    ident = HashEncoder(dimension=16).identity
    new = ["one new text", "another new text", "a third new text"]
    vectors = HashEncoder(dimension=16).encode_passages(new)
    vectors[row, 3] = bad
    keys = text_keys(ident, "passage", new)
    refused: BaseException | None = None
    try:
        VectorCache(root).put(ident, keys, vectors)
    except ValueError as err:
        refused = err
    stored = int(VectorCache(root).get(ident, keys)[1].sum())
    after = _reread(root)
    return Facts(
        f"{stored} of the 3 new vectors stored; the cache afterwards: {after}",
        refused=refused,
        stored=stored,
        after=after,
    )


def _nonfinite_matrices() -> Facts:
    root = Path(tempfile.mkdtemp())
    ident = TokenIdentity(HashEncoder(dimension=4).identity, "v1")
    keys = text_keys(ident, "passage", ["x", "y"])
    bad = np.ones((2, 4), np.float32)
    bad[0, 0] = -np.inf
    refused: BaseException | None = None
    try:
        VectorCache(root).put_matrices(ident, keys, [np.ones((3, 4), np.float32), bad])
    except ValueError as err:
        refused = err
    found = VectorCache(root).get_matrices(ident, keys)
    stored = sum(m is not None for m in found)
    return Facts(f"{stored} of 2 matrices stored", refused=refused, stored=stored)


_NOTHING_STORED = (
    right("refused, naming the rows and keys", lambda f: f.refused is not None),
    right("none of the call's vectors stored (not even the finite ones)", lambda f: f.stored == 0),
    kept(
        "the vectors stored before are all served, none wrong or recomputed",
        lambda f: f.after.recomputed == 0 and f.after.wrong == 0,
    ),
)


def _repeated_damaged_key() -> Facts:
    root = Path(tempfile.mkdtemp())
    shard = _fill(root)
    data = bytearray(shard.read_bytes())
    data[-10] ^= 0xFF  # the last record's vector
    shard.write_bytes(bytes(data))
    ident = HashEncoder(dimension=16).identity
    key = text_keys(ident, "passage", [_TEXTS[-1]])[0]
    with listen() as heard:
        vecs, found = VectorCache(root).get(ident, [key, key])
    return Facts(
        f"found {found.tolist()}, rows all zero: {not vecs.any()}; {len(heard)} warning(s)",
        found=found.tolist(),
        zero=not vecs.any(),
        heard=heard,
    )


def _env_names_a_file() -> Facts:
    target = Path(tempfile.mkdtemp()) / "vectors.bin"
    blob = os.urandom(64)
    target.write_bytes(blob)
    old = os.environ.get("HIERRET_CACHE")
    os.environ["HIERRET_CACHE"] = str(target)
    try:
        out = _reread(None)
    finally:
        if old is None:
            del os.environ["HIERRET_CACHE"]
        else:
            os.environ["HIERRET_CACHE"] = old
    untouched = target.is_file() and target.read_bytes() == blob
    return Facts(
        f"{out}; file untouched: {untouched}",
        recomputed=out.recomputed,
        wrong=out.wrong,
        heard=out.heard,
        untouched=untouched,
    )


@contextmanager
def _umask(mask: int) -> Iterator[None]:
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


def _group_shared() -> Facts:
    root = Path(tempfile.mkdtemp()) / "shared"
    with _umask(0o002):
        _fill(root)
    modes = {oct(stat.S_IMODE(p.stat().st_mode)) for p in root.rglob("*")}
    files = {oct(stat.S_IMODE(p.stat().st_mode)) for p in root.rglob("*") if p.is_file()}
    return Facts(f"modes {', '.join(sorted(modes))}", files=files, modes=modes)


def _clear_beside_work() -> Facts:
    root = Path(tempfile.mkdtemp())  # HIERRET_CACHE set to a folder that holds other work
    project = root / "my-project"
    project.mkdir()
    (project / "config.json").write_text('{"seed": 3}')
    (project / "draft.part").write_text("two weeks of notes")
    _fill(root)
    VectorCache(root).clear()
    left = sorted(p.name for p in project.iterdir()) if project.is_dir() else []
    vectors = len(list(root.rglob("*.hvc")))
    return Facts(
        f"after clear(): {vectors} shards; my-project holds {left}", left=left, vectors=vectors
    )


@contextmanager
def _sigint_delivered() -> Iterator[None]:
    """Ctrl-C raises KeyboardInterrupt here even when the page runs with SIGINT ignored."""
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)


class _Interrupted(_Counting):
    """Ctrl-C arrives while it embeds (a real SIGINT to this process)."""

    def _embed(self, texts: list[str]) -> Any:
        out = super()._embed(texts[:5])
        os.kill(os.getpid(), signal.SIGINT)
        return out  # pragma: no cover - the signal raises first


def _interrupted(where: str) -> Facts:
    root = Path(tempfile.mkdtemp())
    shard = _fill(root, _TEXTS[:15])
    before = shard.read_bytes()
    model: _Counting = _Interrupted() if where == "embedding" else _Counting()
    fsync = os.fsync

    def cut(fd: int) -> None:  # the signal lands after the bytes, before the rename
        os.kill(os.getpid(), signal.SIGINT)

    stopped = False
    with _sigint_delivered():
        if where == "writing":
            os.fsync = cut
        try:
            CachedEncoder(model, VectorCache(root)).encode_passages(_TEXTS)
        except KeyboardInterrupt:
            stopped = True
        finally:
            os.fsync = fsync
    leftovers = [p.name for p in _leftovers(root)]
    shards = [p.name for p in root.rglob("*.hvc")]
    intact = shard.is_file() and shard.read_bytes() == before
    nxt = _reread(root)
    return Facts(
        f"KeyboardInterrupt reached the caller: {stopped}; {len(shards)} shard(s), "
        f"{len(leftovers)} temporary file(s) left; next run: {nxt}",
        stopped=stopped,
        leftovers=leftovers,
        shards=shards,
        intact=intact,
        next=nxt,
    )


def _interrupt_checks() -> tuple[Check, ...]:
    return (
        right("KeyboardInterrupt reaches the caller", lambda f: f.stopped),
        kept(
            "the earlier shard is untouched and nothing half-written is left",
            lambda f: f.intact and not f.leftovers and len(f.shards) == 1,
        ),
        kept(
            "the next run recomputes only the 15 vectors never stored, 0 wrong",
            lambda f: (f.next.recomputed, f.next.wrong) == (15, 0),
        ),
    )


def _other_format(fmt: object) -> Facts:
    """A shard whose header says another ``format`` and whose records hold other numbers
    (every checksum recomputed): what a newer hierret sharing the folder writes."""
    root = Path(tempfile.mkdtemp())
    shard = _fill(root)
    data = shard.read_bytes()
    (hlen,) = struct.unpack_from("<I", data, 8)
    meta = json.loads(data[12 : 12 + hlen])
    meta["format"] = fmt
    head = json.dumps(meta, sort_keys=True).encode()
    body = bytearray(data[16 + hlen :])
    seed, size = zlib.crc32(meta["identity"].encode()), 32 + 4 * 16 + 4
    for r in range(meta["count"]):
        body[r * size + 32 : (r + 1) * size - 4] = np.arange(16, dtype="<f4").tobytes()
        rec = bytes(body[r * size : (r + 1) * size - 4])
        body[(r + 1) * size - 4 : (r + 1) * size] = struct.pack("<I", zlib.crc32(rec, seed))
    new = b"HRVCACHE" + struct.pack("<I", len(head)) + head
    shard.write_bytes(new + struct.pack("<I", zlib.crc32(head)) + bytes(body))
    before = shard.read_bytes()
    first = _reread(root)
    with listen():
        VectorCache(root).compact(HashEncoder(dimension=16).identity)
    left = shard.exists() and shard.read_bytes() == before
    return Facts(
        f"{first}; the shard of format {fmt!r} {'left as it was' if left else 'changed or gone'}",
        first=first,
        left=left,
        fmt=fmt,
    )


_CUT_SETUP = """
import os, sys, numpy as np
from pathlib import Path
from hierret.encoders.cache import CachedEncoder, VectorCache
from hierret.encoders import HashEncoder
from hierret.search.vectors.index import MappedIndex
root = Path(sys.argv[1])
texts = [f"note {i}: a line about subject {i % 9}" for i in range(3000)]
truth = CachedEncoder(HashEncoder(dimension=32), VectorCache(root)).encode_passages(texts)
(shard,) = sorted(root.rglob("*.hvc"))
def cut(path, keep):  # rsync --inplace of a shorter file: write over it, then truncate
    data = path.read_bytes()[:keep]
    with open(path, "r+b") as f:
        f.write(data)
        f.truncate()
"""


def _cut_under(body: str) -> Facts:
    """Run ``body`` in a child process (a SIGBUS there is its exit status, not ours)."""
    env = {**os.environ, "PYTHONPATH": str(Path(hierret.__file__).parents[1])}
    proc = subprocess.run(
        [sys.executable, "-c", _CUT_SETUP + body, tempfile.mkdtemp()],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    out = proc.stdout.strip()
    said = f"exit status {proc.returncode}" + (" (SIGBUS)" if proc.returncode == -7 else "")
    refused = out.split("REFUSED ", 1)[1] if "REFUSED " in out else ""
    return Facts(
        f"{said}; {out[:300] or '(nothing printed)'}",
        refused=SystemExit(refused) if refused else None,
        status=proc.returncode,
        out=out,
    )


def _lookup_after_cut() -> Facts:
    return _cut_under(
        "reader = CachedEncoder(HashEncoder(dimension=32), VectorCache(root))\n"
        "reader.encode_passages(texts[:5])\n"
        "cut(shard, 9000)\n"
        "out = reader.encode_passages(texts)\n"
        "print('wrong', int((out != truth).any(axis=1).sum()))\n"
    )


def _search_after_cut() -> Facts:
    return _cut_under(
        "cache = VectorCache(root)\n"
        "ident = HashEncoder(dimension=32).identity\n"
        "index = MappedIndex(cache.mapped(ident), ident, block_rows=256)\n"
        "cut(shard, 5000)\n"
        "try:\n"
        "    index.search(truth[:1], 5, ident)\n"
        "except OSError as err:\n"
        "    print('REFUSED', err)\n"
    )


def _two_writers() -> Facts:
    """Two processes embedded overlapping texts into one cache: some keys are in two
    shards (the cache documents it). A MappedIndex over the cache must rank each once."""
    from hierret.search.vectors.index import MappedIndex, VectorIndex

    root = Path(tempfile.mkdtemp())
    model = HashEncoder(dimension=16)
    CachedEncoder(model, VectorCache(root)).encode_passages(_TEXTS[:20])
    CachedEncoder(model, VectorCache(root)).encode_passages(_TEXTS[:5])  # a warm one: no copy
    other = VectorCache(root, max_shards=99)
    keys = text_keys(model.identity, "passage", _TEXTS[10:30])
    other.put(model.identity, keys, _TRUTH[10:30])  # the second writer, unaware of the first
    parts = VectorCache(root).mapped(model.identity)
    index = MappedIndex(parts, model.identity)
    every = text_keys(model.identity, "passage", _TEXTS)
    plain = VectorIndex(every, _TRUTH, model.identity)
    q = model.encode_queries(["a paragraph about topic 3"])
    same = index.search(q, 30, model.identity) == plain.search(q, 30, model.identity)
    return Facts(
        f"{sum(len(k) for k, _ in parts)} rows for {len(index)} distinct keys; ranking "
        f"{'identical to' if same else 'DIFFERENT from'} one copy of each",
        same=same,
        n=len(index),
    )


_OTHER_FORMAT = (
    right("0 wrong vectors", lambda f: f.first.wrong == 0),
    right(
        "a warning names the format found and the fix (upgrade, or a folder per version)",
        lambda f: any(f"format {f.fmt!r}" in w and "upgrade" in w for w in f.first.heard),
    ),
    kept("the other version's shard is never deleted (a compaction leaves it)", lambda f: f.left),
)


CASES: list[Case] = [
    (
        "a shard whose header says format 2 and whose records hold other numbers, every "
        "checksum recomputed (a newer hierret sharing the folder)",
        lambda: _other_format(2),
        _OTHER_FORMAT,
    ),
    (
        "a shard whose header has no format field at all (checksums recomputed)",
        lambda: _other_format(None),
        _OTHER_FORMAT,
    ),
    (
        "a mapped shard cut short in place (rsync --inplace) while a CachedEncoder that "
        "opened it looks vectors up",
        _lookup_after_cut,
        (
            right("the process lives (no SIGBUS)", lambda f: f.status == 0),
            right(
                "0 wrong vectors (what the cut lost is recomputed)", lambda f: "wrong 0" in f.out
            ),
        ),
    ),
    (
        "a mapped shard cut short in place while a MappedIndex over the cache searches",
        _search_after_cut,
        right("the process lives (no SIGBUS) and names the file cut", lambda f: f.status == 0),
    ),
    (
        "a MappedIndex over a cache where two writers stored 10 keys twice, in two shards",
        _two_writers,
        right(
            "each of the 30 keys ranked once, as an index over one copy of each ranks them",
            lambda f: f.same and f.n == 30,
        ),
    ),
    ("a cache shard with random bytes appended", _appended, _damage_checks(0, "nothing")),
    (
        "a cache shard with one record's 50 bytes flipped",
        _overwritten,
        _damage_checks(1, "the damaged record"),
    ),
    (
        "a cache shard truncated in the middle of a record",
        _truncated,
        _damage_checks(3, "the 3 records cut"),
    ),
    (
        "a shard merged away by another process between listing and reading",
        _vanishing,
        (
            right("0 wrong vectors", lambda f: f.wrong == 0),
            kept(
                "nothing recomputed: the merged shard serves every vector",
                lambda f: f.recomputed == 0,
            ),
        ),
    ),
    (
        "CachedEncoder on a cache folder whose parent is a regular file",
        _unwritable_encoder,
        (right("0 wrong vectors", lambda f: f.first.wrong == f.second.wrong == 0), _ONE_WARNING),
    ),
    (
        "the disk fills up (ENOSPC) after the first of 3 batches a CachedEncoder stores",
        _disk_full,
        (
            right("every vector returned, 0 wrong", lambda f: f.wrong == 0),
            right(
                "one CacheNotWritableWarning naming the error and the fix",
                lambda f: (
                    len(f.heard) == 1
                    and "CacheNotWritableWarning" in f.heard[0]
                    and "No space left on device" in f.heard[0]
                    and "HIERRET_CACHE" in f.heard[0]
                ),
            ),
            kept(
                "the batch stored before is kept: the next run embeds only the other 20",
                lambda f: f.again.recomputed == 20 and f.again.wrong == 0,
            ),
        ),
    ),
    ("VectorCache.put into a folder whose parent is a regular file", _unwritable_put),
    (
        "a cache folder that cannot be listed (a symbolic link to itself)",
        _unreadable,
        right("refused before any text is embedded", lambda f: f.embedded == 0),
    ),
    ("VectorCache.lookup of a text that was never stored", _missing_lookup),
    (
        "VectorCache.put of 3 new vectors, the last holding NaN, into a filled cache",
        lambda: _nonfinite_put(np.nan, 2),
        _NOTHING_STORED,
    ),
    (
        "VectorCache.put of 3 new vectors, the first holding +inf (an fp16 overflow)",
        lambda: _nonfinite_put(np.inf, 0),
        _NOTHING_STORED,
    ),
    (
        "VectorCache.put_matrices of 2 token matrices, one holding -inf",
        _nonfinite_matrices,
        (
            right("refused", lambda f: f.refused is not None),
            right("neither matrix stored", lambda f: f.stored == 0),
        ),
    ),
    (
        "VectorCache.get asked twice for one key whose record is damaged",
        _repeated_damaged_key,
        (
            right(
                "neither copy is served: found [False, False], zero rows",
                lambda f: f.found == [False, False] and f.zero,
            ),
            right("one warning", lambda f: len(f.heard) == 1),
        ),
    ),
    (
        "HIERRET_CACHE pointing at a regular file",
        _env_names_a_file,
        (
            kept("the file is untouched", lambda f: f.untouched),
            right("0 wrong vectors", lambda f: f.wrong == 0),
            _ONE_WARNING,
        ),
    ),
    (
        "a cache filled under umask 002 (a folder shared by a group)",
        _group_shared,
        right(
            "files 664, folders 775: the group may read and write them all",
            lambda f: f.files == {"0o664"} and f.modes == {"0o664", "0o775"},
        ),
    ),
    (
        "VectorCache.clear() on a root that also holds a project folder",
        _clear_beside_work,
        (
            kept(
                "the project's files are still there",
                lambda f: f.left == ["config.json", "draft.part"],
            ),
            right("the cached vectors are gone", lambda f: f.vectors == 0),
        ),
    ),
    (
        "Ctrl-C (SIGINT) while CachedEncoder embeds 15 new texts",
        lambda: _interrupted("embedding"),
        _interrupt_checks(),
    ),
    (
        "Ctrl-C (SIGINT) while the new shard is being written, before it is renamed into place",
        lambda: _interrupted("writing"),
        _interrupt_checks(),
    ),
]
