"""Settings of a profile swept over values: the mean metric, with intervals, at each target.

A sweep is a comparison whose arms differ in some fields of a
:class:`~hierret.profile.Profile` (``section_weight``, ``vectors``, ``pool``,
``rrf_k``, ``candidates``...), over every combination of the values given.
:func:`sweep` runs it with :func:`hierret.experiment.run` (so each setting is
searched exactly as that profile searches) and returns one row per setting and
target: the mean (the hit rate for ``hit@k``) with its interval.
:func:`plot_sweep` draws it: one panel per target, the mean against one field,
one line per value of another, the interval as a band.

Examples
--------
>>> from hierret.encoders import HashEncoder
>>> from hierret.hierarchy import build_hierarchy
>>> from hierret.search import Searcher
>>> from hierret.units import Corpus, Document, Query
>>> text = "Cats\\n====\\n\\nCats purr.\\n\\nDogs\\n====\\n\\nDogs bark.\\n"
>>> s = Searcher(build_hierarchy(Corpus("pets", [Document("d", "Pets", text)])),
...              HashEncoder(dimension=16))
>>> q = [Query("q1", "why do dogs bark", (("d", 28, 38),))]
>>> table = sweep(Profile(level="fused"), {"vectors": ["rawspan", "centroid"],
...                                         "section_weight": [0.0, 1.0]},
...               q, searcher=s, targets=["sections"], n_resamples=10)
>>> table[["vectors", "section_weight", "target", "n"]].values.tolist()
[['rawspan', 0.0, 'sections', 1], ['rawspan', 1.0, 'sections', 1], \
['centroid', 0.0, 'sections', 1], ['centroid', 1.0, 'sections', 1]]
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import fields, replace
from typing import TYPE_CHECKING, Any

import pandas as pd

from hierret import experiment
from hierret.profile import Profile
from hierret.runs import Qrels
from hierret.search import Searcher
from hierret.units import Level, Query

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["plot_sweep", "sweep"]


def sweep(
    profile: Profile,
    grid: Mapping[str, Sequence[Any]],
    queries: Sequence[Query],
    *,
    searcher: Searcher,
    targets: Sequence[Level] = ("passages",),
    metric: str = "ndcg@10",
    k: int = 100,
    qrels: Mapping[str, Qrels] | None = None,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> pd.DataFrame:
    """Mean ``metric`` of ``profile`` with its fields set to every combination in ``grid``.

    Parameters
    ----------
    profile : Profile
        Every other setting.
    grid : mapping of str to sequence
        Fields of :class:`~hierret.profile.Profile` and the values each takes,
        in order; every combination is run (the first field varies slowest).
    queries, searcher, targets, metric, k, qrels, confidence, n_resamples, seed
        As :func:`hierret.experiment.run` takes them.

    Returns
    -------
    DataFrame
        One row per setting and target (targets outer, settings inner): a
        column per field of ``grid``, then ``target``, ``n`` (queries judged),
        ``mean`` (the hit rate for hit@k), ``low`` and ``high`` (its interval,
        as :meth:`~hierret.experiment.Result.table` computes it).

    Raises
    ------
    ValueError
        A key of ``grid`` that is not a profile field (or is ``name``), a field
        with no values or with a value repeated; a value the profile refuses
        raises what :class:`~hierret.profile.Profile` raises.
    """
    known = [f.name for f in fields(Profile) if f.name != "name"]
    unknown = [name for name in grid if name not in known]
    if not grid or unknown:
        raise ValueError(f"unknown profile fields {unknown}: sweep some of {known}")
    for name, values in grid.items():
        if not values or len({repr(v) for v in values}) != len(values):
            raise ValueError(f"give {name} values to sweep, each once; got {list(values)}")
    settings: list[dict[str, Any]] = [dict(zip(grid, combo, strict=True))
                for combo in itertools.product(*grid.values())]
    arms = {", ".join(f"{f}={v!r}" for f, v in setting.items()): replace(profile, **setting)
            for setting in settings}
    result = experiment.run(arms, queries, searcher=searcher, targets=targets, metrics=[metric],
                            qrels=qrels, k=k, confidence=confidence, n_resamples=n_resamples,
                            seed=seed)
    value = "rate" if metric.startswith("hit@") else "mean"
    rows = []
    for target in targets:
        table = result.table(target, metric)
        numbers = table.loc[list(arms), ["n", value, "low", "high"]].to_numpy(dtype=float)
        for setting, (n, mean, low, high) in zip(settings, numbers, strict=True):
            rows.append({**setting, "target": target, "n": int(n), "mean": float(mean),
                         "low": float(low), "high": float(high)})
    return pd.DataFrame(rows)


def plot_sweep(
    table: pd.DataFrame,
    field: str,
    *,
    by: str | None = None,
    ylabel: str = "",
    marks: Sequence[float] = (),
    title: str = "",
) -> Figure:
    """One panel per target: the mean against ``field``, one line per ``by`` group.

    Parameters
    ----------
    table : DataFrame
        :func:`sweep`'s rows, with a column ``by`` when several sweeps are
        drawn together (e.g. ``pd.concat`` of sweeps with a ``vectors`` column).
    field : str
        The swept field (the x axis).
    by : str, optional
        Column whose groups are drawn as separate lines.
    ylabel : str
        The metric, for the y axis.
    marks : sequence of float
        x values to mark with a dotted line (e.g. the default).
    title : str
        The figure's title, above the panels.

    Returns
    -------
    Figure
        Shared y axis; each line's interval drawn as a band.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> rows = pd.DataFrame({"w": [0, 1, 0, 1], "target": ["sections"] * 2 + ["documents"] * 2,
    ...                      "mean": [.5, .6, .7, .6], "low": [.4, .5, .6, .5],
    ...                      "high": [.6, .7, .8, .7]})
    >>> [ax.get_title() for ax in plot_sweep(rows, "w", ylabel="nDCG@10").axes]
    ['sections target', 'documents target']
    """
    import matplotlib.pyplot as plt

    targets = list(dict.fromkeys(table["target"]))
    fig, axes = plt.subplots(1, len(targets), figsize=(4.0 * len(targets), 3.4), sharey=True,
                             squeeze=False)
    for ax, target in zip(axes[0], targets, strict=True):
        rows = table[table["target"] == target]
        groups = rows.groupby(by, sort=False) if by else [("", rows)]
        for group, g in groups:
            line, = ax.plot(g[field], g["mean"], "-o", markersize=4, label=str(group) or None)
            ax.fill_between(g[field], g["low"], g["high"], color=line.get_color(), alpha=0.15)
        for x in marks:
            ax.axvline(x, color="grey", linestyle=":")
        ax.set_title(f"{target} target")
        ax.set_xlabel(field)
        ax.grid(alpha=0.3)
        if by:
            ax.legend(title=by, fontsize=9, title_fontsize=9)
    axes[0][0].set_ylabel(ylabel)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig
