"""Where a run's time goes: wall seconds by stage, and the texts each encoder embedded.

The package times its own steps, so a notebook needs no line for it: loading a
corpus (``load``), loading encoders and rerankers (``models``), cutting a corpus
into sections and passages (``chunk``), embedding with each encoder (``embed
<model>``), embedding in a fresh process to measure run-to-run variation
(``variation``), building indexes (``index``), ranking (``rank``), reranking
(``rerank``), judging rankings (``evaluate``), the statistics (``statistics``)
and rendering figures (``figures``). Stages nest, and each is charged only its
own time: the seconds of a stage run inside another (a query embedded while
ranking) count for the inner stage alone, so the stages of a run add up to at
most its wall time; the rest is the kernel's start, imports, tables and the
notebook's own code (``other`` in :func:`record_values`).

Every embedding also counts its texts: those sent to the model (``embedded``,
counted where the model runs, :meth:`hierret.encoders.Encoder.encode`) and
those a :class:`~hierret.encoders.cache.CachedEncoder` read from the vector cache
(``cached``: distinct texts found; a text repeated within one request is
neither). A :class:`~hierret.search.rerank.MaxSimReranker` counts its token matrices
the same way, under the encoder's label and ``tokens``, in an ``embed <model>
tokens`` stage, and a :class:`~hierret.search.vectors.late.LateChunker` the token windows it
encodes, under the label and ``late``, in an ``embed <model> late`` stage (its
model's loading in ``models``).

There is one recorder per process (:func:`current`; :func:`recording` puts a
fresh one in place for a block). When ``$HIERRET_TIMING`` names a file, the
recorder writes what it holds there as JSON each time an outermost stage ends,
so that the process that ran a notebook in a kernel (``docs/execute.py``)
reads the kernel's timings when the kernel is gone. :func:`record_values`
(:mod:`hierret.publish.timing`) turns the timings of several notebooks into
a result record's values and renders such a record.

Examples
--------
>>> with recording() as timings:
...     with stage("rank"):
...         with stage("embed m"):
...             count("m", embedded=3, cached=1)
>>> sorted(timings.seconds), timings.embedded, timings.cached
(['embed m', 'rank'], {'m': 3}, {'m': 1})
"""

from __future__ import annotations

import json
import os
import threading
import time
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "STAGES",
    "TIMING_ENV",
    "Timings",
    "count",
    "current",
    "read",
    "recording",
    "stage",
]

#: Environment variable naming the file the process's timings are written to.
TIMING_ENV = "HIERRET_TIMING"

#: The package's stages, in the order of a run (``embed`` stands for ``embed <model>``).
STAGES = (
    "load",
    "models",
    "chunk",
    "embed",
    "variation",
    "index",
    "rank",
    "rerank",
    "evaluate",
    "statistics",
    "figures",
)


@dataclass
class Timings:
    """What one process spent, by stage, and what each encoder embedded or found.

    Attributes
    ----------
    seconds : dict of str to float
        Wall seconds by stage, each stage's own (nested stages subtracted).
    embedded : dict of str to int
        Texts sent to each encoder's model, by encoder label
        (:meth:`~hierret.encoders.EncoderIdentity.label`).
    cached : dict of str to int
        Texts read from the vector cache instead, by encoder label.
    """

    seconds: dict[str, float] = field(default_factory=dict)
    embedded: dict[str, int] = field(default_factory=dict)
    cached: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, dict[str, Any]]:
        """The three mappings, for JSON."""
        return {
            "seconds": dict(self.seconds),
            "embedded": dict(self.embedded),
            "cached": dict(self.cached),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Timings:
        """The inverse of :meth:`as_dict`.

        Raises
        ------
        ValueError
            A mapping is missing, or holds a value that is not a number.

        Examples
        --------
        >>> Timings.from_dict({"seconds": {"rank": 1.5}, "embedded": {}, "cached": {}})
        Timings(seconds={'rank': 1.5}, embedded={}, cached={})
        >>> Timings.from_dict({"seconds": {"rank": "slow"}})
        Traceback (most recent call last):
        ...
        ValueError: timings: 'seconds' must map names to numbers, got {'rank': 'slow'}
        """
        parts: dict[str, dict[str, Any]] = {}
        for name, kind in (("seconds", float), ("embedded", int), ("cached", int)):
            given = data.get(name, {})
            if not isinstance(given, Mapping) or not all(
                isinstance(v, int | float) and not isinstance(v, bool) for v in given.values()
            ):
                raise ValueError(f"timings: {name!r} must map names to numbers, got {given!r}")
            parts[name] = {str(k): kind(v) for k, v in given.items()}
        return cls(**parts)


_current = Timings()
_lock = threading.Lock()
_local = threading.local()  # each thread's stack of open stages
_failed: set[str] = set()  # $HIERRET_TIMING values that could not be written


def current() -> Timings:
    """The recorder the package's stages and counts go to now."""
    return _current


@contextmanager
def recording() -> Iterator[Timings]:
    """A fresh recorder for the block, the previous one again after it.

    Stages opened before the block are charged to the recorder they started in.
    """
    global _current
    previous, _current = _current, Timings()
    try:
        yield _current
    finally:
        _current = previous


def _stack() -> list[list[float]]:
    stack: list[list[float]] | None = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    return stack


@contextmanager
def stage(name: str) -> Iterator[None]:
    """Charge the block's wall time to ``name``, less the time of stages inside it.

    Also a decorator: ``@stage("statistics")`` times every call of a function.

    Examples
    --------
    >>> with recording() as timings:
    ...     with stage("outer"):
    ...         with stage("inner"):
    ...             time.sleep(0.02)
    >>> timings.seconds["inner"] >= 0.02, sorted(timings.seconds)
    (True, ['inner', 'outer'])

    ``outer`` is charged only the moments outside ``inner``.
    """
    stack, target = _stack(), _current
    inner = [0.0]  # seconds of the stages nested in this one
    stack.append(inner)
    start = time.perf_counter()
    try:
        yield
    finally:
        elapsed = time.perf_counter() - start
        stack.pop()
        with _lock:
            target.seconds[name] = target.seconds.get(name, 0.0) + elapsed - inner[0]
        if stack:
            stack[-1][0] += elapsed
        else:
            _write_through(target)


def count(encoder: str, *, embedded: int = 0, cached: int = 0) -> None:
    """Add ``embedded`` texts sent to ``encoder``'s model and ``cached`` ones found stored.

    Both counters of ``encoder`` exist after a call, so an encoder that found
    everything in the cache shows ``0`` embedded.
    """
    target = _current
    with _lock:
        target.embedded[encoder] = target.embedded.get(encoder, 0) + embedded
        target.cached[encoder] = target.cached.get(encoder, 0) + cached


def _write_through(timings: Timings) -> None:
    """Write ``timings`` to ``$HIERRET_TIMING`` (if set) by a rename, so a reader never
    sees half a file; not synced to disk, which would cost milliseconds a stage."""
    target = os.environ.get(TIMING_ENV)
    if not target:
        return
    with _lock:
        text = json.dumps(timings.as_dict())
    path = Path(target)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.part")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except OSError as err:  # the run goes on; its timings are lost, and it says so once
        if target not in _failed:
            _failed.add(target)
            warnings.warn(
                f"timings not written to ${TIMING_ENV}={target} ({err}); unset "
                "it, or point it at a file in a writable folder",
                stacklevel=4,
            )


def read(path: str | os.PathLike[str]) -> Timings:
    """The timings a process wrote to ``path`` through ``$HIERRET_TIMING``.

    A file that does not exist reads as no timings (a run that never entered a
    stage).

    Raises
    ------
    ValueError
        The file is not JSON holding timings; the message names it.
    """
    file = Path(path)
    if not file.exists():
        return Timings()
    try:
        return Timings.from_dict(json.loads(file.read_text(encoding="utf-8")))
    except (ValueError, AttributeError) as err:
        raise ValueError(
            f"{file}: not a timings file written through ${TIMING_ENV} ({err})"
        ) from None
