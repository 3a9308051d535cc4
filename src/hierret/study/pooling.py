"""How much window pooling (or cutting) each dense index needed, as one table.

A section or document longer than the encoder's window is embedded as the mean
of its windows' vectors (``rawspan``) or cut at the window (``first-window``);
the more windows a vector averages, the more it is an average too. A
:class:`~hierret.search.searcher.Searcher` keeps a
:class:`~hierret.search.vectors.levels.PoolingReport` for every dense index it built
(``searcher.reports``, keyed by level and vector strategy); :func:`pooling_table`
lays them out for reading and for a record.

Examples
--------
>>> from hierret.search.vectors.levels import PoolingReport
>>> reports = {("sections", "rawspan"): PoolingReport("sections", "rawspan", 256, 3,
...                                                    {"a": 1, "b": 4, "c": 2})}
>>> pooling_table(reports).to_dict("index")  # doctest: +NORMALIZE_WHITESPACE
{('sections', 'rawspan'): {'units': 3, 'embedded': 3, 'pooled': 2, 'max windows': 4,
                           'mean windows (pooled)': 3.0, 'truncated': 0}}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

import pandas as pd

from hierret.search.vectors.levels import PoolingReport

__all__ = ["Pooling", "pooling_table"]

COLUMNS = ["units", "embedded", "pooled", "max windows", "mean windows (pooled)", "truncated"]


def pooling_table(reports: Mapping[tuple[str, str], PoolingReport]) -> pd.DataFrame:
    """One row per dense index: units, how many were pooled, over how many windows.

    Parameters
    ----------
    reports : mapping of (level, vectors) to PoolingReport
        E.g. ``searcher.reports``.

    Returns
    -------
    DataFrame
        Indexed by ``(level, vectors)`` in the mapping's order, with columns
        ``units`` (units with text), ``embedded`` (embedded from their own
        text), ``pooled`` (longer than the window, embedded as a mean of
        windows), ``max windows``, ``mean windows (pooled)`` and
        ``truncated`` (cut at the window, ``first-window`` only).
    """
    rows = {
        key: [
            r.n_units,
            r.n_embedded,
            r.n_pooled,
            r.max_windows,
            r.mean_pooled_windows,
            len(r.truncated),
        ]
        for key, r in reports.items()
    }
    index = pd.MultiIndex.from_tuples(list(rows), names=["level", "vectors"]) if rows else None
    table = pd.DataFrame(list(rows.values()), index=index, columns=COLUMNS)
    return table.astype({c: int for c in COLUMNS if c != "mean windows (pooled)"})


class Pooling:
    """How much window pooling each corpus's dense indexes needed, as one object.

    Parameters
    ----------
    reports : mapping of str to mapping of (level, vectors) to PoolingReport
        Per corpus, a searcher's ``reports``.

    Examples
    --------
    >>> from hierret.search.vectors.levels import PoolingReport
    >>> one = {("sections", "rawspan"): PoolingReport("sections", "rawspan", 256, 2,
    ...                                               {"a": 1, "b": 4})}
    >>> Pooling({"toy": one}).table("rawspan")["pooled"].to_dict()
    {('toy', 'sections'): 1}
    """

    def __init__(self, reports: Mapping[str, Mapping[tuple[str, str], PoolingReport]]) -> None:
        self.reports = reports

    def table(self, vectors: str | None = None) -> pd.DataFrame:
        """:func:`pooling_table` of every corpus, indexed ``(corpus, level, vectors)``;
        given ``vectors``, that strategy's rows only, indexed ``(corpus, level)``."""
        table = pd.concat({n: pooling_table(r) for n, r in self.reports.items()}, names=["corpus"])
        return table if vectors is None else cast(pd.DataFrame, table.xs(vectors, level="vectors"))
