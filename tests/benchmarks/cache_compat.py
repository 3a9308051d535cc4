"""Digest every vector and token matrix of a cache folder with whichever hierret is imported.

Used to check that a cache written by an older hierret serves identical vectors
with the new code (run it on a COPY of a shared cache, never the cache itself)::

    cp -r /work/devcache /tmp/copy-a && cp -r /work/devcache /tmp/copy-b
    PYTHONPATH=<old checkout>/src python tests/benchmarks/cache_compat.py /tmp/copy-a > old.txt
    PYTHONPATH=src python tests/benchmarks/cache_compat.py /tmp/copy-b > new.txt
    cmp old.txt new.txt

Keys are read from the shard files with numpy (independent of the code under
test); the values come from that code's ``VectorCache.get`` / ``get_matrices``.
One JSON line per identity: folder, kind, keys, keys found, SHA-256 of the
sorted (key, value bytes).
"""

from __future__ import annotations

import hashlib
import json
import struct
import sys
from pathlib import Path

import numpy as np

import hierret
from hierret.encoders import EncoderIdentity
from hierret.encoders.cache import Identity, TokenIdentity, VectorCache


def identity_of(folder: Path) -> Identity:
    doc = json.loads((folder / "identity.json").read_text())
    doc.pop("key")
    if "encoder" in doc:
        enc = EncoderIdentity.from_dict(doc["encoder"])
        return TokenIdentity(enc, doc["tokens"], doc.get("normalized", True))
    return EncoderIdentity.from_dict(doc)


def file_keys(folder: Path) -> list[bytes]:
    keys = set()
    for shard in folder.glob("*.hvc"):
        data = shard.read_bytes()
        (hlen,) = struct.unpack_from("<I", data, 8)
        meta = json.loads(data[12 : 12 + hlen])
        size = 32 + (16 if meta.get("layout") == "ragged" else 4 * meta["dimension"] + 4)
        body = data[16 + hlen :]
        keys.update(
            body[r * size : r * size + 32] for r in range(min(meta["count"], len(body) // size))
        )
    return sorted(keys)


def digest(cache: VectorCache, folder: Path) -> dict[str, object]:
    ident = identity_of(folder)
    assert ident.key() == folder.name, folder
    keys = file_keys(folder)
    h = hashlib.sha256()
    if isinstance(ident, TokenIdentity):
        mats = cache.get_matrices(ident, keys)
        found = sum(m is not None for m in mats)
        for k, m in zip(keys, mats, strict=True):
            h.update(k + (b"" if m is None else np.ascontiguousarray(m, "<f4").tobytes()))
    else:
        vecs, ok = cache.get(ident, keys)
        found = int(ok.sum())
        for k, v, f in zip(keys, vecs, ok, strict=True):
            h.update(k + (v.astype("<f4").tobytes() if f else b"missing"))
    kind = type(ident).__name__
    return {
        "id": folder.name,
        "kind": kind,
        "n": len(keys),
        "found": found,
        "sha256": h.hexdigest(),
    }


if __name__ == "__main__":
    root = Path(sys.argv[1])
    print("code:", hierret.__file__, file=sys.stderr)
    store = VectorCache(root)
    for sub in sorted(p for p in root.iterdir() if (p / "identity.json").is_file()):
        print(json.dumps(digest(store, sub)))
