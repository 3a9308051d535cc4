"""Embed a corpus into the vector cache ahead of searching: ``hierret embed``.

:func:`embed_texts` embeds the texts an encoder's cache does not hold yet,
batch by batch, storing each batch as it is made (an interrupted run keeps
them, and the next run embeds only the rest), with a progress bar counted in
texts; :func:`corpus_passages` gives the passage texts ``hierret search``
embeds for a corpus, so ``hierret embed`` followed by ``hierret search``
embeds nothing at query time but the question.

Engines: ``"local"`` embeds in this process (the wrapped encoder's own
batches and threads). ``"ray"`` spreads the missing texts over a pool of Ray
Data actors (:mod:`hierret.encoders.embed.ray`; the extra ``hierret[ray]``), this
process staying the cache's only writer; without Ray installed it raises
:class:`EngineUnavailableError` naming the extra. Nothing to embed: Ray is
never started.

On a cluster (the Python route; ``hierret embed --engine ray --address``
is the same from a shell): the texts go to the cluster at
``RayOptions.address`` or ``$RAY_ADDRESS`` (set by ``ray job submit``), else
to a Ray started here::

    from hierret.encoders.cache import cached_encoder
    from hierret.encoders.embed import RayOptions, embed_texts
    enc = cached_encoder("all-MiniLM-L6-v2")
    embed_texts(texts, enc, engine="ray", model="all-MiniLM-L6-v2",
                ray=RayOptions(address="10.0.0.5:6379", actors=(2, 16)))

**Shards.** ``shard=(i, n)`` embeds only the distinct texts whose cache key
falls in shard ``i`` of ``n`` (:func:`shard_of`: the key's first 8 bytes
modulo ``n``), so ``n`` independent jobs (separate machines, separate
clusters, separate times) together embed each text exactly once; their
vectors are the ones one run makes (a text's vector depends on the text and
the encoder only), and since the cache is keyed by content, their caches
merge by copying the vector files into one root (``cp -n``: no two shards
write the same file name).

Examples
--------
>>> import tempfile
>>> from hierret.encoders.cache import CachedEncoder, VectorCache
>>> from hierret.encoders import HashEncoder
>>> tmp = tempfile.TemporaryDirectory()
>>> enc = CachedEncoder(HashEncoder(dimension=8), VectorCache(tmp.name))
>>> print(embed_texts(["a cat", "a dog", "a cat"], enc, show_progress=False))
3 texts (2 distinct): 0 in the cache, 2 embedded
>>> embed_texts(["a cat", "a bird"], enc, show_progress=False).embedded
1
>>> tmp.cleanup()
"""

from __future__ import annotations

import importlib.util
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from hierret._validate import check_texts
from hierret.encoders.base import Encoder, Role
from hierret.encoders.cache import (
    CachedEncoder,
    PlanGroup,
    VectorCache,
    cached_encoder,
    read_plan,
    text_keys,
)
from hierret.encoders.embed.ray import EngineUnavailableError, RayOptions
from hierret.search.vectors.levels import text_units
from hierret.structure.hierarchy import Hierarchy

__all__ = [
    "ENGINES",
    "EmbedReport",
    "EngineUnavailableError",
    "RayOptions",
    "check_engine",
    "corpus_passages",
    "embed_plan",
    "embed_texts",
    "parse_shard",
    "progress_bar",
    "shard_of",
]

#: Where the embedding runs.
Engine = Literal["local", "ray"]
ENGINES: tuple[Engine, ...] = ("local", "ray")


@dataclass(frozen=True)
class EmbedReport:
    """What :func:`embed_texts` did.

    Attributes
    ----------
    texts, distinct : int
        Texts given, and distinct among them (in the shard, for a shard).
    cached, embedded : int
        Distinct texts found in the cache, and embedded now.
    seconds : float
        Wall time.
    """

    texts: int
    distinct: int
    cached: int
    embedded: int
    seconds: float

    def __str__(self) -> str:
        return (
            f"{self.texts} texts ({self.distinct} distinct): {self.cached} in the cache, "
            f"{self.embedded} embedded"
        )


def parse_shard(text: str) -> tuple[int, int]:
    """``"i/n"`` as ``(i, n)``: shard ``i`` (from 0) of ``n``, or :class:`ValueError`.

    Examples
    --------
    >>> parse_shard("1/4")
    (1, 4)
    >>> parse_shard("4/4")
    Traceback (most recent call last):
    ...
    ValueError: a shard is i/n with 0 <= i < n (the first of 4 is 0/4), got '4/4'
    """
    head, sep, tail = text.strip().partition("/")
    try:
        i, n = int(head), int(tail)
    except ValueError:
        i, n = -1, 0
    if not sep or n < 1 or not 0 <= i < n:
        raise ValueError(
            f"a shard is i/n with 0 <= i < n (the first of {n if n > 0 else 'n'} is "
            f"0/{n if n > 0 else 'n'}), got {text!r}"
        )
    return i, n


def shard_of(key: bytes, n: int) -> int:
    """The shard (of ``n``) a cache key falls in: its first 8 bytes, modulo ``n``.

    Examples
    --------
    >>> shard_of(bytes(range(32)), 3), shard_of(bytes(range(32)), 1)
    (1, 0)
    """
    return int.from_bytes(key[:8], "big") % n


def check_engine(engine: str) -> Engine:
    """``engine`` if it can run here, else :class:`EngineUnavailableError` or
    :class:`ValueError` naming what to do.

    Examples
    --------
    >>> check_engine("local")
    'local'
    >>> check_engine("spark")
    Traceback (most recent call last):
    ...
    ValueError: engine must be one of ('local', 'ray'), got 'spark'
    """
    if engine == "local":
        return "local"
    if engine != "ray":
        raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
    if importlib.util.find_spec("ray") is None:
        raise EngineUnavailableError(
            "--engine ray needs Ray Data, which is not installed: pip install "
            "'hierret[ray]' (or use --engine local)"
        )
    return "ray"


def progress_bar(total: int, initial: int, show: bool | None) -> Any:
    """A tqdm bar over ``total`` texts, ``initial`` of them already in the cache.

    ``show=None`` shows it unless ``TQDM_DISABLE`` is set (the test session sets it).
    Both engines (:func:`embed_texts`, :mod:`hierret.encoders.embed.stream`) count with it.

    Examples
    --------
    >>> bar = progress_bar(10, 4, show=False)
    >>> bar.n, bar.total
    (4, 10)
    """
    from tqdm.std import tqdm

    if show is None:
        show = os.environ.get("TQDM_DISABLE", "").lower() in ("", "0", "false")
    return tqdm(
        total=total,
        initial=initial,
        disable=not show,
        unit="text",
        desc="embedding",
        mininterval=1.0,
    )


def embed_texts(
    texts: Sequence[str],
    encoder: CachedEncoder,
    *,
    role: Role = "passage",
    engine: str = "local",
    show_progress: bool | None = None,
    model: str | Callable[..., Encoder] | None = None,
    model_kw: Mapping[str, Any] | None = None,
    actors: int | tuple[int, int] | None = None,
    ray: RayOptions | None = None,
    shard: tuple[int, int] | None = None,
) -> EmbedReport:
    """Embed the ``texts`` missing from ``encoder``'s cache into it.

    Parameters
    ----------
    texts : sequence of str
    encoder : CachedEncoder
        The encoder and the cache to fill.
    role : {"passage", "query"}
    engine : {"local", "ray"}
        Where to embed (see the module docstring).
    show_progress : bool, optional
        A progress bar over the distinct texts (starting at those cached);
        default: shown unless ``TQDM_DISABLE`` is set.
    model, model_kw : str or callable, and dict, optional
        For ``engine="ray"``: the name and arguments each actor gives
        :func:`~hierret.encoders.load_encoder`, or a factory each actor calls
        with ``model_kw`` (for an encoder no registered name gives; it is
        pickled to the actors). Its identity must equal ``encoder.identity``.
    actors : int or (int, int), optional
        For ``engine="ray"``: a shorthand for ``ray=RayOptions(actors=actors)``.
    ray : RayOptions, optional
        For ``engine="ray"``: the cluster to join (default ``$RAY_ADDRESS``,
        else a local one), actors, CPUs and GPUs per actor, partition size.
    shard : (int, int), optional
        ``(i, n)``: embed only the distinct texts of shard ``i`` of ``n``
        (:func:`shard_of`); the report counts those. Default: all.

    Returns
    -------
    EmbedReport

    Raises
    ------
    EngineUnavailableError
        ``engine="ray"`` without Ray installed.
    CacheNotWritableError
        A text is missing and the cache cannot be written: raised before any
        model is loaded (storing is the point of the call).
    CacheWriteError
        A write failed part way (a full disk); the batches stored before it are
        kept, and the next run embeds only the rest.
    ValueError
        ``engine="ray"`` without ``model``; both ``actors`` and ``ray``; a
        shard outside ``0 <= i < n``.
    """
    check_engine(engine)
    if shard is not None:
        parse_shard(f"{shard[0]}/{shard[1]}")
    embed = None
    if engine == "ray":
        if model is None:
            raise ValueError("engine='ray' needs model=, the encoder name each actor loads")
        if actors is not None and ray is not None:
            raise ValueError("give actors= or ray=RayOptions(actors=...), not both")
        from hierret.encoders.embed.ray import ray_batches

        options = ray or RayOptions(actors=2 if actors is None else actors)
        embed = ray_batches(model, model_kw or {}, encoder.identity, options)
    start = time.perf_counter()
    items = check_texts(texts)
    given = len(items)
    distinct = list(dict.fromkeys(items))
    keys = text_keys(encoder.identity, role, distinct)
    if shard is not None:
        mine = [shard_of(k, shard[1]) == shard[0] for k in keys]
        keys = [k for k, m in zip(keys, mine, strict=True) if m]
        items = [t for t, m in zip(distinct, mine, strict=True) if m]
    cached = int(encoder.cache.contains(encoder.identity, keys).sum())
    if cached < len(keys):  # storing is the point: refuse before loading a model
        encoder.cache.check_writable(encoder.identity)
    loaded: Any = None
    if cached < len(keys) and engine == "local":  # the model is needed: load it now,
        loaded = getattr(encoder.encoder, "encoder", encoder.encoder)  # and let our bar
        shown = getattr(loaded, "show_progress", None)  # speak for it
        if hasattr(loaded, "show_progress"):
            loaded.show_progress = False
    bar = progress_bar(len(keys), cached, show_progress)
    try:
        _, found, embedded = encoder.fill(items, role, bar.update, embed, strict=True)
    finally:
        bar.close()
        if loaded is not None and hasattr(loaded, "show_progress"):
            loaded.show_progress = shown
    return EmbedReport(given, len(keys), found, embedded, time.perf_counter() - start)


def corpus_passages(hierarchy: Hierarchy) -> list[str]:
    """The passage texts ``hierret search`` embeds for ``hierarchy`` (units with text)."""
    return [hierarchy.text(u) for u in text_units(hierarchy, "passages")]


def embed_plan(
    folder: str | os.PathLike[str],
    cache: VectorCache | None = None,
    *,
    engine: str = "local",
    ray: RayOptions | None = None,
    shard: tuple[int, int] | None = None,
    show_progress: bool | None = None,
) -> list[tuple[PlanGroup, EmbedReport]]:
    """Embed every text a plan lists (``$HIERRET_PLAN``: :mod:`hierret.encoders.cache._plan`).

    Each group's encoder is made again from its registered name and options
    and must have the identity the planning run's had (the same model and
    versions), else :class:`ValueError` before anything is embedded for it.
    Vectors go through :func:`embed_texts` (so ``engine="ray"`` and ``shard``
    work as there); a group of raw vectors (the model's own, before
    normalisation, asked for by the precision study) is embedded here, on the
    local engine, whatever ``engine`` says.

    Parameters
    ----------
    folder : path-like
        The plan folder a planning run wrote.
    cache : VectorCache, optional
        Default: ``VectorCache()`` (``$HIERRET_CACHE``).
    engine, ray, shard, show_progress
        As for :func:`embed_texts`.

    Returns
    -------
    list of (PlanGroup, EmbedReport)
        One per group, in the plan's order.

    Examples
    --------
    >>> import tempfile
    >>> from hierret.encoders.cache import Plan
    >>> tmp = tempfile.TemporaryDirectory()
    >>> cache = VectorCache(f"{tmp.name}/cache")
    >>> ident = cached_encoder("hash", cache, dimension=8).identity
    >>> Plan(f"{tmp.name}/plan").add(("hash", {"dimension": 8}), ident, "query", False, ["a", "b"])
    >>> [str(r) for _, r in embed_plan(f"{tmp.name}/plan", cache, show_progress=False)]
    ['2 texts (2 distinct): 0 in the cache, 2 embedded']
    >>> tmp.cleanup()
    """
    store = cache if cache is not None else VectorCache()
    out: list[tuple[PlanGroup, EmbedReport]] = []
    for group in read_plan(folder):
        encoder = cached_encoder(group.name, store, **group.options)
        if encoder.identity != group.identity:
            raise ValueError(
                f"the plan asks for vectors of {group.identity.describe()}, but {group.name!r} "
                f"here is {encoder.identity.describe()}: embed on a machine with the planning "
                "run's model and versions, or plan again here"
            )
        if group.raw:
            out.append((group, _embed_raw(group, encoder)))
            continue
        report = embed_texts(
            group.texts,
            encoder,
            role=group.role,
            engine=engine,
            show_progress=show_progress,
            model=group.name,
            model_kw=group.options,
            ray=ray if engine == "ray" else None,
            shard=shard,
        )
        out.append((group, report))
    return out


def _embed_raw(group: PlanGroup, encoder: CachedEncoder) -> EmbedReport:
    """A plan's raw-vector group, embedded and stored here (``encode_unnormalized``)."""
    start = time.perf_counter()
    plain = CachedEncoder(encoder.encoder, encoder.cache)  # no source: it never plans
    for s in range(0, len(group.texts), 4096):  # bounded memory: vectors are stored, not kept
        plain.encode_unnormalized(group.texts[s : s + 4096], group.role)
    n, cached = len(group.texts), plain.stats.hits
    return EmbedReport(n, n, cached, n - cached, time.perf_counter() - start)
