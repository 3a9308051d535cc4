"""A process that embeds texts through a cache and stops before a chosen batch.

Run by tests/core/test_cache_resume.py: ``python _embed_child.py CACHE N BATCH STOP MARKER``
embeds ``N`` texts with :class:`BatchedHashEncoder` (``BATCH`` texts a batch) into
the cache folder ``CACHE``; before making batch ``STOP`` (0-based, so after
``STOP`` batches were stored) it writes ``MARKER`` and waits to be killed.
On Ctrl-C (SIGINT) it prints ``stored <count>`` and exits with 130.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from numpy.typing import NDArray

from hierret.encoders import HashEncoder
from hierret.encoders.cache import CachedEncoder, VectorCache


def texts(n: int) -> list[str]:
    return [f"text {i} on topic {i % 11}" for i in range(n)]


class BatchedHashEncoder(HashEncoder):
    """A hash encoder that embeds ``batch`` texts at a time and counts them."""

    def __init__(self, batch: int, stop: int = -1, marker: Path | None = None) -> None:
        super().__init__(dimension=16)
        self.batch, self.stop, self.marker = batch, stop, marker
        self.embedded = 0

    def _embed_batches(self, items: list[str]) -> Iterator[tuple[list[int], NDArray[Any]]]:
        for b, lo in enumerate(range(0, len(items), self.batch)):
            if b == self.stop and self.marker is not None:
                self.marker.write_text(str(b))
                while True:  # killed here
                    time.sleep(0.05)
            idx = list(range(lo, min(lo + self.batch, len(items))))
            self.embedded += len(idx)
            yield idx, self._embed([items[i] for i in idx])


if __name__ == "__main__":
    root, n, batch, stop, marker = sys.argv[1:]
    cache = VectorCache(root)
    enc = CachedEncoder(BatchedHashEncoder(int(batch), int(stop), Path(marker)), cache)
    try:
        enc.encode_passages(texts(int(n)))
    except KeyboardInterrupt:
        print(f"stored {cache.stats.stored}")
        sys.exit(130)
