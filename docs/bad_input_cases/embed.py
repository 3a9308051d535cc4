"""Bad input to ``hierret embed``, the command that exists to fill the vector cache
(run by ``docs/bad_input.py``).

A command whose point is to store must fail (exit status other than 0, a
message naming the fix) when it stored nothing or stopped storing, and must
refuse what cannot work (an empty encoder name, a Ray cluster that does not
start) before loading a model, with the fix, not a traceback.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import hierret.cli._run as cli  # its cached_encoder is swapped for a case
from bad_input_cases import Case, Facts, kept, right
from hierret.cli import main
from hierret.encoders import HashEncoder
from hierret.encoders.cache import CachedEncoder, VectorCache
from hierret.encoders.cache import _shelf as cache_mod  # where shards are written


def _embed(*args: str) -> tuple[int, str, str]:
    """``hierret embed ARGS --no-progress``: (exit status, stdout, last line of stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(["embed", *args, "--no-progress"])
        except SystemExit as exit_:
            status = exit_.code if isinstance(exit_.code, int) else 1
    lines = err.getvalue().strip().splitlines()
    return status, out.getvalue().strip(), lines[-1] if lines else "(nothing on stderr)"


def _refused(*args: str) -> Callable[[], object]:
    def call() -> object:
        status, out, last = _embed(*args)
        said = f"exit status {status}: {last}"
        if status:
            raise SystemExit(said)
        return f"{said}; printed: {out[:200]}"

    return call


def _under_a_file() -> str:
    blocker = Path(tempfile.mkdtemp()) / "notes.txt"
    blocker.write_text("a regular file where the cache folder should be")
    return str(blocker / "vectors")


class _Batched(HashEncoder):
    """The ``hash`` encoder embedding 100 texts a batch, as a real model batches."""

    def _embed_batches(self, texts: list[str]) -> Any:
        for lo in range(0, len(texts), 100):
            idx = list(range(lo, min(lo + 100, len(texts))))
            yield idx, self._embed([texts[i] for i in idx])


def _disk_fills() -> Facts:
    """The disk fills up after the first shard of ``hierret embed``."""
    root = Path(tempfile.mkdtemp())
    real, shards = cache_mod.atomic_write, [0]

    def full(path: Any, content: Any, **kw: Any) -> Any:
        if str(path).endswith(".hvc"):
            shards[0] += 1
            if shards[0] > 1:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        return real(path, content, **kw)

    load = cli.cached_encoder
    cache_mod.atomic_write = full  # type: ignore[assignment]
    cli.cached_encoder = lambda name, cache, **kw: CachedEncoder(_Batched(), cache)  # type: ignore[assignment]
    try:
        status, _, last = _embed("--encoder", "hash", "--cache-dir", str(root))
    finally:
        cache_mod.atomic_write = real
        cli.cached_encoder = load
    kept_now = VectorCache(root).count(HashEncoder().identity)
    return Facts(
        f"exit status {status}: {last}; {kept_now} vectors kept",
        refused=SystemExit(f"exit status {status}: {last}") if status else None,
        status=status,
        last=last,
        kept=kept_now,
    )


def _ray_fails(failure: Exception, *extra: str) -> Facts:
    """``hierret embed --engine ray EXTRA`` where Ray's start (or joining a cluster)
    fails (its helper processes too slow on a loaded machine, no cluster at the
    address), simulated by making ``ray.init`` raise what Ray raises."""
    import importlib.util

    ray = None
    if importlib.util.find_spec("ray") is not None:
        import ray

    def fail(*args: object, **kw: object) -> None:
        raise failure

    saved = (ray.init, ray.is_initialized) if ray is not None else None
    if ray is not None:
        ray.init, ray.is_initialized = fail, lambda: False
    root = tempfile.mkdtemp()
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            status = main(["embed", "--encoder", "hash", "--engine", "ray", "--no-progress",
                           "--cache-dir", root, *extra])  # fmt: skip
    finally:
        if ray is not None and saved is not None:
            ray.init, ray.is_initialized = saved
    said = err.getvalue().strip()
    last = said.splitlines()[-1] if said else "(nothing on stderr)"
    return Facts(
        f"exit status {status}: {last[:300]}",
        refused=SystemExit(f"exit status {status}: {last}") if status else None,
        status=status,
        stderr=said,
        stored=VectorCache(root).count(HashEncoder().identity),
    )


_RAY_CLEAR = (
    right(
        "exit status 2, a message naming --engine local, no traceback",
        lambda f: f.status == 2 and "--engine local" in f.stderr and "Traceback" not in f.stderr,
    ),
    kept("nothing half-stored", lambda f: f.stored == 0),
)

CASES: list[Case] = [
    (
        "hierret embed --engine ray where Ray's helpers report their ports too late "
        "(ray.init raises TimeoutError)",
        lambda: _ray_fails(TimeoutError("Timed out after 15 s waiting for the raylet's port")),
        _RAY_CLEAR,
    ),
    (
        "hierret embed --engine ray where the GCS does not come up (ray.init raises RuntimeError)",
        lambda: _ray_fails(RuntimeError("Failed to start the GCS server")),
        _RAY_CLEAR,
    ),
    (
        "hierret embed --engine ray --address where no cluster runs (ray.init raises "
        "ConnectionError)",
        lambda: _ray_fails(
            ConnectionError("Could not find any running Ray instance"),
            "--address",
            "127.0.0.1:6390",
        ),
        (
            right(
                "exit status 2 naming the address and how to check it, no traceback",
                lambda f: (
                    f.status == 2
                    and "127.0.0.1:6390" in f.stderr
                    and "ray status" in f.stderr
                    and "Traceback" not in f.stderr
                ),
            ),
            kept("nothing half-stored", lambda f: f.stored == 0),
        ),
    ),
    (
        "hierret embed --shard 2/2 (shards count from 0)",
        _refused("--encoder", "hash", "--shard", "2/2"),
    ),
    (
        "hierret embed --actors 4 without --engine ray",
        _refused("--encoder", "hash", "--actors", "4"),
    ),
    (
        "hierret embed --engine ray --batch-size 100 (not a multiple of 64)",
        _refused("--encoder", "hash", "--engine", "ray", "--batch-size", "100"),
    ),
    (
        "hierret embed --engine ray --gpus-per-actor 1 for an encoder that runs on the CPU only",
        _refused("--encoder", "e5-small", "--engine", "ray", "--gpus-per-actor", "1"),
    ),
    ("hierret embed --encoder '' (an unset shell variable)", _refused("--encoder", "")),
    ("hierret embed --encoder ' ' (a variable holding a space)", _refused("--encoder", " ")),
    (
        "hierret embed --cache-dir a folder under a regular file (nothing can be stored)",
        _refused("--encoder", "hash", "--cache-dir", _under_a_file()),
    ),
    (
        "hierret embed whose disk fills up after the first batch is stored (ENOSPC)",
        _disk_fills,
        (
            right(
                "exit status other than 0, naming the full disk and how many were kept",
                lambda f: f.status != 0 and "No space" in f.last and "kept" in f.last,
            ),
            kept("the batch stored before the disk filled is kept", lambda f: f.kept > 0),
        ),
    ),
]
