"""A Ray driver that stores k partitions and then waits to be killed.

Run by tests/core/test_embed_ray.py: ``python _ray_driver_child.py ADDRESS CACHE K MARKER``
connects to the Ray cluster at ``ADDRESS``, embeds the module's 2,000 texts with
the hash encoder (dimension 16) into the cache folder ``CACHE`` through Ray
actors, and once ``K`` partitions are stored writes ``MARKER`` and sleeps.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import ray

from hierret.encoders import HashEncoder
from hierret.encoders.cache import CachedEncoder, VectorCache
from hierret.encoders.embed.ray import ray_batches

TEXTS = [f"passage {i} " + "word " * (i % 17) + f"on topic {i % 13}" for i in range(2000)]

if __name__ == "__main__":
    address, root, k, marker = sys.argv[1:]
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    ray.init(address=address, log_to_driver=False, configure_logging=False)
    model = HashEncoder(dimension=16)
    enc = CachedEncoder(model, VectorCache(root))
    stored: list[int] = []

    def progress(n: int) -> None:
        stored.append(n)
        if len(stored) == int(k):
            Path(marker).write_text(str(sum(stored)))
            while True:  # killed here, with k partitions stored
                time.sleep(0.05)

    enc.fill(TEXTS, "passage", progress, ray_batches("hash", {"dimension": 16}, model.identity))
