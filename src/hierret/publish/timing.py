"""Where a run's time goes, shown: a timing record's values, its table and its figure.

The stage clock itself is the core's (:mod:`hierret._clock`): the package times
its own steps and counts the texts each encoder embedded; this module turns the
timings of several notebooks into a result record's values
(:func:`record_values`) and renders such a record (:func:`table`,
:func:`figure`). The clock's recorder and reader are re-exported here for the
scripts that run notebooks and time them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from hierret._clock import STAGES, TIMING_ENV, Timings, read, recording

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = [
    "STAGES",
    "TIMING_ENV",
    "Timings",
    "figure",
    "read",
    "record_values",
    "recording",
    "table",
]


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
        By :func:`hierret.publish.record.key`: ``{notebook}_wall_s``, ``{notebook}_{stage}_s``
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
    from hierret.publish.record import key

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

    from hierret.publish.record import key

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

    from hierret.publish.figures import WIDTH

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
