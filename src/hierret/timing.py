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
those a :class:`~hierret.cache.CachedEncoder` read from the vector cache
(``cached``: distinct texts found; a text repeated within one request is
neither). A :class:`~hierret.rerank.MaxSimReranker` counts its token matrices
the same way, under the encoder's label and ``tokens``, in an ``embed <model>
tokens`` stage.

There is one recorder per process (:func:`current`; :func:`recording` puts a
fresh one in place for a block). When ``$HIERRET_TIMING`` names a file, the
recorder writes what it holds there as JSON each time an outermost stage ends,
so that the process that ran a notebook in a kernel (``docs/execute.py``)
reads the kernel's timings when the kernel is gone. :func:`record_values`
turns the timings of several notebooks into a result record's values and
:func:`table` and :func:`figure` render such a record.

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
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = [
    "STAGES",
    "TIMING_ENV",
    "Timings",
    "count",
    "current",
    "figure",
    "read",
    "record_values",
    "recording",
    "stage",
    "table",
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
    >>> timings.seconds["inner"] >= 0.02 > timings.seconds["outer"]
    True
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


def _stage_order(name: str) -> tuple[int, str]:
    head = name.split(" ", 1)[0]
    return (STAGES.index(head) if head in STAGES else len(STAGES), name)


def _colour(stage: str) -> Any:
    """One colour per stage, the same in every figure: tab20's dark hues, then its
    light ones; ``other`` (the unmeasured rest) light grey."""
    import matplotlib.pyplot as plt

    if stage not in STAGES:
        return "0.85"
    i = STAGES.index(stage)
    return plt.get_cmap("tab20")(2 * i if i < 10 else 2 * (i - 10) + 1)


def record_values(
    runs: Mapping[str, tuple[float, Timings]],
) -> tuple[dict[str, int | float], dict[str, Any]]:
    """A timing record's values and layout, from each notebook's wall time and timings.

    Parameters
    ----------
    runs : mapping of str to (float, Timings)
        Notebook name to its wall seconds and what its kernel recorded.

    Returns
    -------
    values : dict
        By :func:`hierret.record.key`: ``{notebook}_wall_s``, ``{notebook}_{stage}_s``
        for each stage and ``other`` (the wall time no stage claims),
        ``{notebook}_{encoder}_embedded`` and ``_cached``, and the same summed
        over notebooks under ``all`` (whose wall time is also given as
        ``all_wall_min`` and ``all_wall_h``, for prose).
    layout : dict
        ``notebooks``, and for each notebook its ``stages`` and ``encoders``,
        in order: what :func:`table` reads the values by (put it in the
        record's identity).

    Examples
    --------
    >>> t = Timings({"rank": 2.0, "embed m": 1.0}, {"m": 4}, {"m": 6})
    >>> values, layout = record_values({"02_dr001": (5.0, t)})
    >>> values["02_dr001_other_s"], values["all_m_embedded"], layout["stages"]["02_dr001"]
    (2.0, 4, ['embed m', 'rank', 'other'])
    """
    from hierret.record import key

    values: dict[str, int | float] = {}
    layout: dict[str, Any] = {"notebooks": list(runs), "stages": {}, "encoders": {}}
    total = Timings()
    wall = 0.0
    for nb, (seconds, timings) in runs.items():
        stages = sorted(timings.seconds, key=_stage_order)
        other = max(seconds - sum(timings.seconds.values()), 0.0)
        values[key(nb, "wall", "s")] = seconds
        for name in stages:
            values[key(nb, name, "s")] = timings.seconds[name]
            total.seconds[name] = total.seconds.get(name, 0.0) + timings.seconds[name]
        values[key(nb, "other", "s")] = other
        total.seconds["other"] = total.seconds.get("other", 0.0) + other
        encoders = sorted(set(timings.embedded) | set(timings.cached))
        for enc in encoders:
            for what, counts, summed in (
                ("embedded", timings.embedded, total.embedded),
                ("cached", timings.cached, total.cached),
            ):
                values[key(nb, enc, what)] = counts.get(enc, 0)
                summed[enc] = summed.get(enc, 0) + counts.get(enc, 0)
        layout["stages"][nb], layout["encoders"][nb] = [*stages, "other"], encoders
        wall += seconds
    values[key("all", "wall", "s")] = wall
    values[key("all", "wall", "min")], values[key("all", "wall", "h")] = wall / 60, wall / 3600
    for name, seconds in total.seconds.items():
        values[key("all", name, "s")] = seconds
    for enc in total.embedded:
        values[key("all", enc, "embedded")] = total.embedded[enc]
        values[key("all", enc, "cached")] = total.cached[enc]
    return values, layout


def table(record: Mapping[str, Any]) -> pd.DataFrame:
    """A timing record as a table: one row per notebook and stage.

    Parameters
    ----------
    record : mapping
        A record written by ``docs/execute.py`` (``values``, and the layout of
        :func:`record_values` under ``identity``).

    Returns
    -------
    DataFrame
        Indexed by notebook and stage (``embed <model>`` rows carry that
        encoder's ``embedded`` and ``cached`` counts, the ``total`` row the
        notebook's wall time), with columns ``seconds``, ``share`` (of the
        notebook's wall time), ``embedded`` and ``cached``.

    Examples
    --------
    >>> values, layout = record_values({"nb": (4.0, Timings({"embed m": 1.0}, {"m": 2},
    ...                                                      {"m": 8}))})
    >>> t = table({"values": values, "identity": layout})
    >>> t.index.tolist(), t["seconds"].tolist(), t["cached"].tolist()[0]
    ([('nb', 'embed m'), ('nb', 'other'), ('nb', 'total')], [1.0, 3.0, 4.0], 8.0)
    """
    import pandas as pd

    from hierret.record import key

    values, layout = record["values"], record["identity"]
    rows: dict[tuple[str, str], dict[str, float]] = {}
    for nb in layout["notebooks"]:
        wall = values[key(nb, "wall", "s")]
        for name in layout["stages"][nb]:
            seconds = values[key(nb, name, "s")]
            row = {"seconds": seconds, "share": seconds / wall if wall else float("nan")}
            enc = name.split(" ", 1)[1] if name.startswith("embed ") else None
            if enc in layout["encoders"][nb]:
                row |= {
                    "embedded": values[key(nb, enc, "embedded")],
                    "cached": values[key(nb, enc, "cached")],
                }
            rows[(nb, name)] = row
        rows[(nb, "total")] = {"seconds": wall, "share": 1.0}
    frame = pd.DataFrame.from_dict(
        rows, orient="index", columns=["seconds", "share", "embedded", "cached"]
    )
    frame.index = pd.MultiIndex.from_tuples(list(rows), names=["notebook", "stage"])
    return frame


def figure(record: Mapping[str, Any]) -> Figure:
    """Each notebook's wall time as a bar cut into its stages (every encoder's
    embedding one ``embed`` part).

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> values, layout = record_values({"nb": (3.0, Timings({"rank": 1.0, "embed m": 1.0}))})
    >>> fig = figure({"values": values, "identity": layout})
    >>> [t.get_text() for t in fig.legends[0].get_texts()]
    ['embed', 'rank', 'other']
    """
    import matplotlib.pyplot as plt

    from hierret.plots import WIDTH

    frame = table(record)
    frame = frame[frame.index.get_level_values("stage") != "total"]
    part = [s.split(" ", 1)[0] for s in frame.index.get_level_values("stage")]
    summed = frame["seconds"].groupby([frame.index.get_level_values("notebook"), part]).sum()
    wide = summed.unstack(fill_value=0)
    parts: list[str] = sorted((str(c) for c in wide.columns), key=_stage_order)
    wide = wide[parts]
    wide = wide.loc[list(dict.fromkeys(frame.index.get_level_values("notebook")))]
    fig, ax = plt.subplots(figsize=(WIDTH, 1.6 + 0.45 * len(wide)), layout="constrained")
    left = [0.0] * len(wide)
    for name in wide.columns:
        ax.barh(list(wide.index), wide[name], left=left, label=name, color=_colour(name))
        left = [a + b for a, b in zip(left, wide[name], strict=True)]
    ax.invert_yaxis()
    ax.set_xlabel("wall seconds")
    fig.legend(loc="outside lower center", ncols=min(len(wide.columns), 6), frameon=False)
    return fig
