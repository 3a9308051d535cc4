"""Embed a corpus into the vector cache ahead of searching: ``hierret embed``.

:func:`embed_texts` embeds the texts an encoder's cache does not hold yet,
batch by batch, storing each batch as it is made (an interrupted run keeps
them, and the next run embeds only the rest), with a progress bar counted in
texts; :func:`corpus_passages` gives the passage texts ``hierret search``
embeds for a corpus, so ``hierret embed`` followed by ``hierret search``
embeds nothing at query time but the question.

Engines: ``"local"`` embeds in this process (the wrapped encoder's own
batches and threads). ``"ray"`` spreads the missing texts over a pool of Ray
Data actors (:mod:`hierret.embed_ray`; the extra ``hierret[ray]``), this
process staying the cache's only writer; without Ray installed it raises
:class:`EngineUnavailableError` naming the extra. Nothing to embed: Ray is
never started.

Examples
--------
>>> import tempfile
>>> from hierret.cache import CachedEncoder, VectorCache
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
from hierret.cache import CachedEncoder, text_keys
from hierret.embed_ray import EngineUnavailableError
from hierret.encoders.base import Encoder, Role
from hierret.hierarchy import Hierarchy
from hierret.levels import text_units

__all__ = [
    "ENGINES",
    "EmbedReport",
    "EngineUnavailableError",
    "check_engine",
    "corpus_passages",
    "embed_texts",
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
        Texts given, and distinct among them.
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


def _bar(total: int, initial: int, show: bool | None) -> Any:
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
    actors: int = 2,
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
    actors : int, default 2
        For ``engine="ray"``: actors, one CPU each.

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
        ``engine="ray"`` without ``model``.
    """
    check_engine(engine)
    embed = None
    if engine == "ray":
        if model is None:
            raise ValueError("engine='ray' needs model=, the encoder name each actor loads")
        from hierret.embed_ray import ray_batches

        embed = ray_batches(model, model_kw or {}, encoder.identity, actors=actors)
    start = time.perf_counter()
    items = check_texts(texts)
    keys = text_keys(encoder.identity, role, list(dict.fromkeys(items)))
    cached = int(encoder.cache.contains(encoder.identity, keys).sum())
    if cached < len(keys):  # storing is the point: refuse before loading a model
        encoder.cache.check_writable(encoder.identity)
    loaded: Any = None
    if cached < len(keys) and engine == "local":  # the model is needed: load it now,
        loaded = getattr(encoder.encoder, "encoder", encoder.encoder)  # and let our bar
        shown = getattr(loaded, "show_progress", None)  # speak for it
        if hasattr(loaded, "show_progress"):
            loaded.show_progress = False
    bar = _bar(len(keys), cached, show_progress)
    try:
        _, found, embedded = encoder.fill(items, role, bar.update, embed, strict=True)
    finally:
        bar.close()
        if loaded is not None and hasattr(loaded, "show_progress"):
            loaded.show_progress = shown
    return EmbedReport(len(items), len(keys), found, embedded, time.perf_counter() - start)


def corpus_passages(hierarchy: Hierarchy) -> list[str]:
    """The passage texts ``hierret search`` embeds for ``hierarchy`` (units with text)."""
    return [hierarchy.text(u) for u in text_units(hierarchy, "passages")]
