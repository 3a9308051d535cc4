"""The Ray Data engine of ``hierret embed --engine ray`` (extra ``hierret[ray]``).

Imported only when that engine is asked for: ``import hierret`` never imports
Ray. The driver (this process) has already diffed the corpus against the cache
(:meth:`hierret.encoders.cache.CachedEncoder.fill`); only the missing texts come here.

- **Partitions aligned with the encoder's batches.** The missing texts are
  ordered as the backends order them (longest first, a stable sort) and cut
  into partitions of :data:`PARTITION_TEXTS` (256, a multiple of every
  backend's default batch size: 8, 32, 64); each partition is embedded in
  one call, so every batch holds the texts a local run would put in it and
  the vectors do not depend on how the work is split.
- **Actors load the encoder once** and check its identity against the
  driver's: a mismatch raises :class:`~hierret.search.vectors.index.IdentityMismatchError`
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
  on its texts only (``tests/core/test_embed_ray.py`` kills an actor mid-batch).
  The defaults are kept, not restated: Ray 2.60 takes them only through
  ``map_batches``'s ``**ray_remote_args``, deprecated (to be removed in 2.64)
  with no named replacement. The cost: a partition that kills every actor it
  reaches (a text that runs the node out of memory) is retried without end;
  Ray's log names the dying actor.
- **An existing cluster is joined** when an address is given
  (:attr:`RayOptions.address`, ``hierret embed --address``) or ``RAY_ADDRESS``
  is set (``ray job submit`` sets it): ``ray.init(address=...)`` asks for no
  resources (the cluster has them); the actors need hierret and the model
  installed on every node, and an actor whose encoder differs refuses (above).
  A ``ray://`` address needs Ray's client extra (``hierret[ray]`` pins
  ``ray[client]``). A cluster that cannot be reached is
  :class:`EngineUnavailableError` naming the address and the fix.
- **A local cluster** otherwise: on 127.0.0.1 with the CPUs the pool needs,
  usage statistics off (``RAY_USAGE_STATS_ENABLED=0``), shut down afterwards.
  When it does not start (on a loaded machine Ray's helper processes can take
  longer to report their ports than Ray waits: its raylet gives the
  dashboard agent 15 s), whatever Ray raises becomes
  :class:`EngineUnavailableError` naming the fix, ``--engine local`` (the
  same vectors) or ``--address``: ``hierret embed`` exits 2 with it, no
  traceback, and nothing is stored.
- **The knobs** (:class:`RayOptions`): actors (a count, or a range
  ``(min, max)`` that Ray Data's actor pool autoscales within), CPUs and GPUs
  per actor, texts per partition.
- **GPUs**: an actor given GPUs loads its encoder on ``cuda`` in full float32
  (TF32 off), and counts as the driver's encoder when their identities differ
  only in torch's build label (``+cpu`` against ``+cu128``): see
  :func:`same_vectors` for why. Its vectors are stored under the driver's
  identity.
"""

from __future__ import annotations

import contextlib
import importlib.util
import math
import os
import re
import socket
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from functools import partial
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
    local cluster did not start); :mod:`hierret.encoders.embed.local` raises it too."""


__all__ = [
    "BATCH_MULTIPLE",
    "PARTITION_TEXTS",
    "RAY_PIN",
    "EngineUnavailableError",
    "RayOptions",
    "check_gpu_model",
    "partitions",
    "ray_batches",
    "ray_stream",
    "same_vectors",
]

#: The version of Ray the extra pins (``hierret[ray]``).
RAY_PIN = "2.60.0"
#: Texts per partition: a multiple of every backend's default batch size.
PARTITION_TEXTS = 256
#: A partition's size must be a multiple of this: every backend's default batch size
#: (8, 32, 64) divides it, so a partition's batches are those a local run makes.
BATCH_MULTIPLE = 64


@dataclass(frozen=True)
class RayOptions:
    """How ``--engine ray`` runs: on which cluster, how many actors, what each holds.

    Parameters
    ----------
    address : str, optional
        A running cluster to join: its GCS address (``"10.0.0.5:6379"``), a Ray
        Client address (``"ray://10.0.0.5:10001"``, needs ``ray[client]``, which
        ``hierret[ray]`` pins) or ``"auto"``. Default: ``$RAY_ADDRESS`` (which
        ``ray job submit`` sets), else a local cluster started for the run.
    actors : int or (int, int), default 2
        Actors in the pool, or ``(min, max)`` for a pool Ray grows as the
        cluster (or its autoscaler) has room.
    cpus_per_actor, gpus_per_actor : float, default 1 and 0
        What each actor reserves. With GPUs, each actor loads its encoder on
        ``cuda`` (the encoder must take a ``device``), in full float32.
    batch_size : int, default :data:`PARTITION_TEXTS`
        Texts per partition, each embedded by one actor in one call: a multiple
        of :data:`BATCH_MULTIPLE`, so that its batches are the ones a local run
        makes and the vectors do not depend on how the work is split.
    local_cpus : int, optional
        CPUs of a local cluster (only when no address is given); default: what
        the pool needs at its largest (at least 1).

    Examples
    --------
    >>> RayOptions(actors=(1, 8), cpus_per_actor=2).pool, RayOptions(actors=(1, 8)).cpus_to_start
    ((1, 8), 8)
    >>> RayOptions(batch_size=100)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: batch_size must be a positive multiple of 64 (every backend's ... got 100
    """

    address: str | None = None
    actors: int | tuple[int, int] = 2
    cpus_per_actor: float = 1.0
    gpus_per_actor: float = 0.0
    batch_size: int = PARTITION_TEXTS
    local_cpus: int | None = None

    def __post_init__(self) -> None:
        low, high = self.pool
        if not 1 <= low <= high:
            raise ValueError(
                f"actors must be a positive count or a range (min, max) with 1 <= min <= max, "
                f"got {self.actors!r}"
            )
        if not self.cpus_per_actor > 0 or not math.isfinite(self.cpus_per_actor):
            raise ValueError(f"cpus_per_actor must be positive, got {self.cpus_per_actor!r}")
        if not self.gpus_per_actor >= 0 or not math.isfinite(self.gpus_per_actor):
            raise ValueError(f"gpus_per_actor must be 0 or more, got {self.gpus_per_actor!r}")
        if self.batch_size < 1 or self.batch_size % BATCH_MULTIPLE:
            raise ValueError(
                f"batch_size must be a positive multiple of {BATCH_MULTIPLE} (every backend's "
                "default batch size divides it, so the vectors are the local engine's), got "
                f"{self.batch_size}"
            )
        if self.address is not None and not self.address.strip():
            raise ValueError(
                "address is empty (an unset shell variable?): give the cluster's address, "
                "e.g. 10.0.0.5:6379, or leave it out to start a local Ray"
            )
        if self.local_cpus is not None and self.local_cpus < 1:
            raise ValueError(f"local_cpus must be positive, got {self.local_cpus}")

    @property
    def pool(self) -> tuple[int, int]:
        """``(min, max)`` actors."""
        if isinstance(self.actors, int):
            return self.actors, self.actors
        low, high = self.actors
        return int(low), int(high)

    @property
    def cpus_to_start(self) -> int:
        """CPUs of a local cluster: :attr:`local_cpus`, else what the largest pool needs."""
        return self.local_cpus or max(1, math.ceil(self.pool[1] * self.cpus_per_actor))


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

    def __init__(
        self,
        name: Model,
        kw: Mapping[str, Any],
        identity: dict[str, Any],
        role: Role,
        gpu: bool = False,
    ):
        from hierret.encoders.registry import load_encoder
        from hierret.search.vectors.index import IdentityMismatchError

        if gpu:
            _full_float32()
            kw = {"device": "cuda", **kw}
        try:
            self.encoder = load_encoder(name, **kw) if isinstance(name, str) else name(**kw)
        except TypeError as err:
            if gpu and "device" in str(err):
                raise ValueError(
                    f"{name} takes no device, so it cannot run on a GPU: leave out "
                    "--gpus-per-actor (gpus_per_actor=0)"
                ) from err
            raise
        ours, theirs = EncoderIdentity.from_dict(identity), self.encoder.identity
        if not same_vectors(ours, theirs):
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
        raise EngineUnavailableError(
            f"--engine ray could not start a local Ray cluster ({_first_line(err)}); on a "
            "loaded machine Ray's helper processes can take longer to start than Ray waits "
            "for them. Nothing was embedded and the cache is as it was: embed here with "
            "--engine local (the same vectors, in this process; embed_texts(..., "
            "engine='local')), join a running cluster with --address (or RAY_ADDRESS), or "
            "try --engine ray again on a quieter machine"
        ) from err


def _first_line(err: BaseException) -> str:
    """``Kind: first line`` of ``err``, at most 300 characters (no traceback)."""
    return f"{type(err).__name__}: {(str(err).strip().splitlines() or [''])[0][:300]}"


def _join(ray: Any, address: str) -> None:
    """Connect to the running cluster at ``address`` (no resources are asked: the
    cluster has them), or raise :class:`EngineUnavailableError` naming the
    address and what to do."""
    if address.startswith("ray://") and importlib.util.find_spec("grpc") is None:
        raise EngineUnavailableError(
            f"--address {address} is a Ray Client address, which needs Ray's client extra "
            f"(grpcio): pip install 'ray[client]=={RAY_PIN}' (or 'hierret[ray]', which pins "
            "it); or give the cluster's GCS address (host:6379) from a node of the cluster"
        )
    # Ray Client passes every other argument on to a driver it starts on the cluster:
    # only the address goes to a ray:// one
    quiet = (
        {} if address.startswith("ray://") else {"log_to_driver": False, "configure_logging": False}
    )
    try:
        ray.init(address=address, **quiet)
    except Exception as err:  # ConnectionError, RuntimeError, grpc errors, ...
        with contextlib.suppress(Exception):
            ray.shutdown()
        raise EngineUnavailableError(
            f"--engine ray could not join the Ray cluster at {address!r} ({_first_line(err)}). "
            "Nothing was embedded and the cache is as it was: check that the cluster runs "
            f"and is reachable from here (ray status --address {address}), or leave out "
            "--address and unset RAY_ADDRESS to start a local Ray, or use --engine local"
        ) from err


def _connect(ray: Any, options: RayOptions) -> bool:
    """Join ``options.address`` (or ``$RAY_ADDRESS``) when given, else start a local
    cluster; ``True`` when this call did either (so it disconnects afterwards),
    ``False`` when Ray was already initialised by the caller."""
    if ray.is_initialized():
        return False
    address = options.address or os.environ.get("RAY_ADDRESS") or None
    if address:
        _join(ray, address)
    else:
        _start(ray, options.cpus_to_start)
    return True


def same_vectors(ours: EncoderIdentity, theirs: EncoderIdentity) -> bool:
    """Whether an actor's encoder ``theirs`` makes the vectors the driver's ``ours``
    names: equal identities, but for the build label of torch (``+cpu``,
    ``+cu128``, ...), which names the hardware torch's kernels were built for,
    not the model or its arithmetic.

    The identity guard keeps vectors of different models, weights, prefixes,
    windows or precisions apart. It does not promise the last bit: float32
    kernels are picked by hardware, and DR-002 measured and accepted that
    variation across CPUs (identities of float32 engines do not name the
    CPU). A GPU running the same float32 weights through the same code is
    that kind of difference, so a CUDA build counts as the same encoder when
    everything else is equal; its actors run in full float32 (no TF32,
    :func:`_full_float32`), and a half-precision load has another
    ``precision`` and stays another encoder. How far CUDA's float32 vectors
    are from the CPU's has not been measured here (no GPU was lent); a GPU
    run should measure it as DR-002 did across CPUs before its vectors feed
    a record.

    The rule covers actors, whose vectors are stored under the driver's
    identity. A *driver* on a CUDA build still has an identity of its own
    (its ``engine`` names ``torch 2.13.0`` where a CPU build's names
    ``torch 2.13.0+cpu``), so it does not read a CPU build's cache: dropping
    the label from identities themselves would change every stored identity
    key, hence every cached vector's key and the identities the records
    quote, which this change does not do.

    Examples
    --------
    >>> from dataclasses import replace
    >>> cpu = EncoderIdentity("m", "st", "w", "fp32", 8, 128,
    ...                       engine="transformers 4.50.0, torch 2.13.0+cpu")
    >>> same_vectors(cpu, replace(cpu, engine="transformers 4.50.0, torch 2.13.0+cu128"))
    True
    >>> same_vectors(cpu, replace(cpu, engine="transformers 4.50.0, torch 2.13.0"))
    True
    >>> same_vectors(cpu, replace(cpu, engine="transformers 4.50.0, torch 2.14.0"))
    False
    >>> same_vectors(cpu, replace(cpu, precision="fp16"))
    False
    """
    if ours == theirs:
        return True
    strip = partial(_TORCH_LABEL.sub, r"\1")
    return replace(ours, engine=strip(ours.engine)) == replace(theirs, engine=strip(theirs.engine))


#: ``torch 2.13.0+cu128``: the build label after a torch version in an identity's engine.
_TORCH_LABEL = re.compile(r"(\btorch \d+(?:\.\d+)*)\+[0-9A-Za-z.]+")


def check_gpu_model(name: Model) -> None:
    """:class:`ValueError` when the encoder ``name`` registers cannot run on a GPU (only
    sentence-transformers models take a ``device``), before any Ray is started; a
    factory is taken at its word.

    Examples
    --------
    >>> check_gpu_model("minilm"), check_gpu_model("org/some-model")
    (None, None)
    >>> check_gpu_model("e5-small")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: e5-small runs on the CPU only (it takes no device): leave out --gpus-per-actor...
    """
    if not isinstance(name, str):
        return
    from hierret.encoders.registry import registered_encoders
    from hierret.encoders.sentence_transformers import MINILM_ALIASES

    key = name.strip().lower()
    if key in registered_encoders() and key not in MINILM_ALIASES:
        raise ValueError(
            f"{name} runs on the CPU only (it takes no device): leave out --gpus-per-actor "
            "(gpus_per_actor=0), or embed with a sentence-transformers model (minilm, a "
            "model folder or a hub id)"
        )


def _full_float32() -> None:
    """On a GPU, float32 matrix products in full float32 (torch's default, made sure
    of: TF32 would round inputs to 10 mantissa bits, a different arithmetic)."""
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")


def _pool(
    rows: list[dict[str, Any]],
    actor: type,
    ctor: dict[str, Any],
    options: RayOptions,
) -> Iterator[dict[str, NDArray[Any]]]:
    """Each output batch of ``actor`` (an actor pool) mapped over ``rows`` (one partition
    each), on the cluster :func:`_connect` finds; the connection made here is closed."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    import ray
    import ray.data

    connected = _connect(ray, options)
    try:
        ctx = ray.data.DataContext.get_current()
        ctx.enable_progress_bars = False
        ds = ray.data.from_items(rows, override_num_blocks=len(rows))
        low, high = options.pool
        out = ds.map_batches(
            actor,
            fn_constructor_kwargs=ctor,
            compute=ray.data.ActorPoolStrategy(min_size=low, max_size=high),
            batch_size=1,
            num_cpus=options.cpus_per_actor,
            num_gpus=options.gpus_per_actor,
        )
        batches: Iterable[Any] = out.iter_batches(batch_size=None, batch_format="numpy")
        yield from batches
    finally:
        if connected:
            ray.shutdown()


def _actor_kwargs(
    name: Model, kw: Mapping[str, Any], identity: EncoderIdentity, role: Role, options: RayOptions
) -> dict[str, Any]:
    return {
        "name": name,
        "kw": dict(kw),
        "identity": identity.as_dict(),
        "role": role,
        "gpu": options.gpus_per_actor > 0,
    }


def ray_batches(
    name: Model,
    kw: Mapping[str, Any],
    identity: EncoderIdentity,
    options: RayOptions | None = None,
) -> Any:
    """An ``embed(texts, role)`` for :meth:`~hierret.encoders.cache.CachedEncoder.fill` that
    runs on Ray Data: an actor pool (``options``: :class:`RayOptions`) each
    loading ``name`` with ``kw`` (a registered name, or a factory called with
    ``kw``), on the cluster at ``options.address`` or ``$RAY_ADDRESS``, else on
    a local one. The texts travel from this process to the actors (for a BEIR
    corpus, :func:`ray_stream` sends locators instead)."""
    options = options or RayOptions()
    if options.gpus_per_actor > 0:
        check_gpu_model(name)

    def embed(texts: list[str], role: Role) -> Iterator[tuple[NDArray[np.intp], NDArray[Any]]]:
        parts = partitions(texts, options.batch_size)
        rows = [{"pos": p, "text": [texts[i] for i in p]} for p in parts]
        ctor = _actor_kwargs(name, kw, identity, role, options)
        for batch in _pool(rows, _Embedder, ctor, options):
            yield np.asarray(batch["pos"], dtype=np.intp), np.asarray(batch["vector"])

    return embed


class _StreamEmbedder(_Embedder):
    """A Ray Data actor for streamed input: reads and chunks the passages its partition
    locates (:class:`~hierret.encoders.embed.stream.CorpusSource`), embeds them, and returns
    each text's cache key beside its vector (the driver checks them)."""

    def __init__(self, source: Any, **rest: Any):
        if not os.path.isfile(source.path):  # before the model is loaded
            raise FileNotFoundError(
                f"{socket.gethostname()} has no file {source.path}: the corpus is read on every "
                "node of the cluster, at the path it has here; copy it there (or use a shared "
                "file system), or embed with --engine local"
            )
        super().__init__(**rest)
        self.source = source
        self.identity = EncoderIdentity.from_dict(rest["identity"])

    def __call__(self, batch: dict[str, NDArray[Any]]) -> dict[str, NDArray[Any]]:
        from hierret.encoders.cache import text_keys

        pos, vecs, keys = [], [], []
        for p, offsets, lines, passages in zip(
            batch["pos"], batch["offset"], batch["line"], batch["passage"], strict=True
        ):
            texts = self.source.read(offsets, lines, passages)
            rows = np.empty((len(p), self.encoder.identity.dimension), dtype=np.float32)
            for idx, v in self.encoder.encode_batches(texts, self.role):
                rows[idx] = v
            pos.append(np.asarray(p, dtype=np.int64))
            vecs.append(rows)
            made = b"".join(text_keys(self.identity, self.role, texts))
            keys.append(np.frombuffer(made, dtype=np.uint8).reshape(-1, 32))
        return {
            "pos": np.concatenate(pos),
            "vector": np.concatenate(vecs),
            "key": np.concatenate(keys),
        }


def ray_stream(
    name: Model,
    kw: Mapping[str, Any],
    identity: EncoderIdentity,
    options: RayOptions,
    source: Any,
) -> Callable[..., Iterator[tuple[NDArray[np.intp], NDArray[Any]]]]:
    """An ``embed(rows, keys, role)`` for :func:`~hierret.encoders.embed.stream.embed_corpus`:
    as :func:`ray_batches`, but each partition travels as locators
    (:func:`~hierret.encoders.embed.stream.stream_rows`: byte offsets, line numbers,
    passage indices, no text) and the actors read their texts from ``source``
    (:class:`~hierret.encoders.embed.stream.CorpusSource`), so this process never holds
    them. Yields ``(rows, vectors)``; a text whose key is not the driver's
    (``keys``, by row: the file changed since the driver read it) raises
    :class:`ValueError` before its partition is stored."""
    if options.gpus_per_actor > 0:
        check_gpu_model(name)

    def embed(
        rows: list[dict[str, NDArray[Any]]], keys: NDArray[np.uint8], role: Role
    ) -> Iterator[tuple[NDArray[np.intp], NDArray[Any]]]:
        ctor = {"source": source, **_actor_kwargs(name, kw, identity, role, options)}
        for batch in _pool(rows, _StreamEmbedder, ctor, options):
            got = np.asarray(batch["pos"], dtype=np.intp)
            if not np.array_equal(np.asarray(batch["key"], dtype=np.uint8), keys[got]):
                raise ValueError(
                    f"{source.path}: a worker read a passage whose text is not the one this "
                    "process read (the file changed during the run, or differs on a node): "
                    "nothing of that partition was stored; make the file the same on every "
                    "node and run again (only the rest is embedded)"
                )
            yield got, np.asarray(batch["vector"])

    return embed
