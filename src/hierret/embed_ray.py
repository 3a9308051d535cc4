"""The Ray Data engine of ``hierret embed --engine ray`` (extra ``hierret[ray]``).

Imported only when that engine is asked for: ``import hierret`` never imports
Ray. The driver (this process) has already diffed the corpus against the cache
(:meth:`hierret.cache.CachedEncoder.fill`); only the missing texts come here.

- **Partitions aligned with the encoder's batches.** The missing texts are
  ordered as the backends order them (longest first, a stable sort) and cut
  into partitions of :data:`PARTITION_TEXTS` (256, a multiple of every
  backend's default batch size: 8, 32, 64); each partition is embedded in
  one call, so every batch holds the texts a local run would put in it and
  the vectors do not depend on how the work is split.
- **Actors load the encoder once** and check its identity against the
  driver's: a mismatch raises :class:`~hierret.index.IdentityMismatchError`
  naming the node and both identities, before any vector is made (so nothing
  is written).
- **Rows are keyed**, not ordered: Ray Data does not keep order by default,
  so each output row carries its texts' positions, and the driver, the
  cache's only writer (no shared file system needed), stores each partition
  as it arrives. An interrupted run keeps the partitions stored; the next
  one embeds only the rest.
- **An actor that dies is replaced and its partition retried**, by Ray
  Data's own defaults for an actor pool (``_apply_default_remote_args`` of
  ``ActorPoolMapOperator`` in Ray 2.60: ``max_restarts=-1``,
  ``max_task_retries=-1``): the dead actor is restarted (its constructor
  loads the encoder and checks its identity again) and the partition it held
  is resubmitted; a retried partition's vectors are the same, as they depend
  on its texts only (``tests/test_embed_ray.py`` kills an actor mid-batch).
  The defaults are kept, not restated: Ray 2.60 takes them only through
  ``map_batches``'s ``**ray_remote_args``, deprecated (to be removed in 2.64)
  with no named replacement. The cost: a partition that kills every actor it
  reaches (a text that runs the node out of memory) is retried without end;
  Ray's log names the dying actor.
- **A local cluster** when none is running: on 127.0.0.1 with ``num_cpus``
  CPUs (default 2), usage statistics off (``RAY_USAGE_STATS_ENABLED=0``),
  shut down afterwards. When it does not start (on a loaded machine Ray's
  helper processes can take longer to report than Ray waits), whatever Ray
  raises becomes :class:`EngineUnavailableError` naming the
  fix, ``--engine local`` (the same vectors): ``hierret embed`` exits 2 with
  it, no traceback, and nothing is stored.
"""

from __future__ import annotations

import contextlib
import os
import socket
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from hierret.encoders.base import Encoder, EncoderIdentity, Role

#: What an actor loads: a :func:`~hierret.encoders.load_encoder` name, or a
#: factory called with the keyword arguments (pickled to the actors: for an
#: encoder no registered name reaches in another process).
Model = str | Callable[..., Encoder]


class EngineUnavailableError(RuntimeError):
    """The engine asked for cannot run here (not built yet, its extra is missing, or a
    local cluster did not start); :mod:`hierret.embed` raises it too."""


__all__ = ["PARTITION_TEXTS", "RAY_PIN", "EngineUnavailableError", "partitions", "ray_batches"]

#: The version of Ray the extra pins (``hierret[ray]``).
RAY_PIN = "2.60.0"
#: Texts per partition: a multiple of every backend's default batch size.
PARTITION_TEXTS = 256


def partitions(texts: list[str], size: int = PARTITION_TEXTS) -> list[list[int]]:
    """Positions of ``texts`` cut into partitions of ``size``, longest texts first
    (the backends' own order, stable), so batches of any size dividing ``size``
    are the ones a single call would make.

    Examples
    --------
    >>> partitions(["a", "ccc", "bb", "dd"], size=2)
    [[1, 2], [3, 0]]
    """
    order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
    return [order[s : s + size] for s in range(0, len(order), size)]


class _Embedder:
    """A Ray Data actor: loads the encoder once, checks its identity, embeds partitions."""

    def __init__(self, name: Model, kw: Mapping[str, Any], identity: dict[str, Any], role: Role):
        from hierret.encoders.registry import load_encoder
        from hierret.index import IdentityMismatchError

        self.encoder = load_encoder(name, **kw) if isinstance(name, str) else name(**kw)
        ours, theirs = EncoderIdentity.from_dict(identity), self.encoder.identity
        if theirs != ours:
            import ray

            node = ray.get_runtime_context().get_node_id()
            raise IdentityMismatchError(
                f"node {node} ({socket.gethostname()}) loaded {theirs.describe()}, but the "
                f"driver embeds for {ours.describe()}: install the same model and versions "
                "on every node; nothing was written"
            )
        if hasattr(self.encoder, "show_progress"):
            self.encoder.show_progress = False
        self.role = role

    def __call__(self, batch: dict[str, NDArray[Any]]) -> dict[str, NDArray[Any]]:
        pos, vecs = [], []
        for p, texts in zip(batch["pos"], batch["text"], strict=True):
            rows = np.empty((len(p), self.encoder.identity.dimension), dtype=np.float32)
            for idx, v in self.encoder.encode_batches([str(t) for t in texts], self.role):
                rows[idx] = v
            pos.append(np.asarray(p, dtype=np.int64))
            vecs.append(rows)
        return {"pos": np.concatenate(pos), "vector": np.concatenate(vecs)}


def _start(ray: Any, num_cpus: int) -> None:
    """Start a local Ray cluster, or raise
    :class:`EngineUnavailableError` saying why and what to do.

    Ray's own errors when its helper processes do not come up in time (a loaded
    machine: they may take longer to report their ports than Ray waits) are
    tracebacks through ``ray.init``; the message here names the fix.
    """
    try:
        ray.init(
            num_cpus=num_cpus,
            include_dashboard=False,
            _node_ip_address="127.0.0.1",
            log_to_driver=False,
            configure_logging=False,
        )
    except Exception as err:  # Ray raises many kinds (ConnectionError, RuntimeError, ...)
        with contextlib.suppress(Exception):  # whatever it half started
            ray.shutdown()
        first = (str(err).strip().splitlines() or [""])[0][:300]
        raise EngineUnavailableError(
            f"--engine ray could not start a local Ray cluster ({type(err).__name__}: "
            f"{first}); on a loaded machine Ray's helper processes can take longer to start "
            "than Ray waits for them. Nothing was embedded and the cache is as it was: embed "
            "here with --engine local (the same vectors, in this process; "
            "embed_texts(..., engine='local')), or try --engine ray again on a quieter machine"
        ) from err


def ray_batches(
    name: Model,
    kw: Mapping[str, Any],
    identity: EncoderIdentity,
    *,
    actors: int = 2,
    num_cpus: int = 2,
    size: int = PARTITION_TEXTS,
) -> Any:
    """An ``embed(texts, role)`` for :meth:`~hierret.cache.CachedEncoder.fill` that
    runs on Ray Data: ``actors`` actors each loading ``name`` with ``kw`` (a
    registered name, or a factory called with ``kw``)."""

    def embed(texts: list[str], role: Role) -> Iterator[tuple[NDArray[np.intp], NDArray[Any]]]:
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        import ray
        import ray.data

        started = not ray.is_initialized()
        if started:
            _start(ray, num_cpus)
        try:
            ctx = ray.data.DataContext.get_current()
            ctx.enable_progress_bars = False
            parts = partitions(texts, size)
            rows = [{"pos": p, "text": [texts[i] for i in p]} for p in parts]
            ds = ray.data.from_items(rows, override_num_blocks=len(rows))
            out = ds.map_batches(
                _Embedder,
                fn_constructor_kwargs={
                    "name": name,
                    "kw": dict(kw),
                    "identity": identity.as_dict(),
                    "role": role,
                },
                compute=ray.data.ActorPoolStrategy(size=actors),
                batch_size=1,
                num_cpus=1,
            )
            for batch in out.iter_batches(batch_size=None, batch_format="numpy"):
                yield np.asarray(batch["pos"], dtype=np.intp), np.asarray(batch["vector"])
        finally:
            if started:
                ray.shutdown()

    return embed
