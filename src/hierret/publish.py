"""What a study publishes: record values picked from its tables, its figures, its record.

A decision notebook quotes numbers through a *result record*
(:func:`hierret.report.write_results`) under keys that ``DECISIONS.md``
markers name. :func:`table_values` picks cells of a comparison table
(:meth:`hierret.experiment.Result.table`) into such keys, named from the row
and the column (each renamed if asked) with
:func:`~hierret.experiment.slug`; :func:`hierret.figures.save` writes a figure where
the site build asks for it; :func:`publish_record` glues every value for the
site and writes the record.

Examples
--------
>>> import pandas as pd
>>> table = pd.DataFrame({"mean": [0.5, 0.6], "low": [0.4, 0.5], "hits": [3.0, 4.0]},
...                      index=["dense", "hybrid"])
>>> table_values(table, "ndcg", ["dense"])
{'ndcg_dense_mean': 0.5, 'ndcg_dense_low': 0.4}
>>> table_values(table, "hit5", {"hybrid": ""}, {"hits": ""})
{'hit5': 4}
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from hierret.experiment import slug
from hierret.report import glue, write_results

if TYPE_CHECKING:
    pass

__all__ = ["COUNT_COLUMNS", "STATISTICS", "publish_record", "table_values"]


#: Columns that hold counts (of queries, of hits): written as ``int``.
COUNT_COLUMNS = frozenset({"n", "hits", "both", "only_arm", "only_base", "neither"})
#: The columns :func:`table_values` picks by default: an estimate and its tests.
STATISTICS = ("mean", "rate", "low", "high", "diff", "diff_low", "diff_high", "p", "p_holm")


def _named(keys: Sequence[Any] | Mapping[Any, object]) -> dict[Any, object]:
    return dict(keys) if isinstance(keys, Mapping) else {k: k for k in keys}


def _cell(table: pd.DataFrame, row: Any, column: Any) -> int | float | None:
    """The cell as a plain number, ``None`` when empty."""
    value = table[column].loc[row]
    if pd.isna(value):
        return None
    if column in COUNT_COLUMNS or pd.api.types.is_integer_dtype(table[column]):
        return int(value)
    return float(value)


def table_values(
    table: pd.DataFrame,
    prefix: str,
    rows: Sequence[Any] | Mapping[Any, object] | None = None,
    columns: Sequence[str] | Mapping[str, object] = STATISTICS,
) -> dict[str, int | float]:
    """Cells of ``table`` as record values keyed ``{prefix}_{row}_{column}``.

    Parameters
    ----------
    table : pandas.DataFrame
        A comparison table (rows are arms, columns statistics).
    prefix : str
        The first part of every key.
    rows : sequence, or mapping to the name used in the key, optional
        The rows picked (default: every row).
    columns : sequence, or mapping to the name used in the key
        The columns picked (default :data:`STATISTICS`); a column the table
        does not have is skipped, and so is an empty (NaN) cell, such as the
        baseline's difference with itself. A mapping renames a row or column
        in the key; the name ``""`` leaves it out.

    Returns
    -------
    dict
        Keys made by :func:`~hierret.experiment.slug` (lower case, ``@``
        dropped, other runs of punctuation as ``_``), rows then columns in
        the order given. Counts (:data:`COUNT_COLUMNS`, integer columns) are
        ``int`` (a record quotes ``90``, not ``90.0``), other values ``float``.

    Raises
    ------
    KeyError
        A row that is not in ``table``.
    """
    picked_rows = _named(list(table.index) if rows is None else rows)
    picked_columns = {c: n for c, n in _named(columns).items() if c in table.columns}
    cells = {slug(prefix, row_name, col_name): _cell(table, row, col)
             for row, row_name in picked_rows.items()
             for col, col_name in picked_columns.items()}
    return {key: value for key, value in cells.items() if value is not None}


def publish_record(name: str, values: Mapping[str, Any], identity: Mapping[str, Any],
                   folder: str | os.PathLike[str] | None) -> None:
    """Glue every value for the site, and write ``folder/{name}.json`` when a folder is given.

    Parameters
    ----------
    name : str
        The record's name (``dr001``: markers read ``<!--@dr001.key-->``).
    values : mapping
        The published numbers, by key.
    identity : mapping
        What the run was: corpus, parameters, encoder, ...
    folder : path-like, optional
        Where records go (``nox -s reproduce`` sets it); ``None`` writes nothing.

    Notes
    -----
    Returns nothing, so that a notebook cell ending with it shows no output;
    the record is ``folder/{name}.json`` (:func:`hierret.report.load_results`
    reads a folder of them).
    """
    for key, value in values.items():
        glue(key, value)
    if folder is not None:
        write_results(Path(folder) / f"{name}.json", name, values, identity)
