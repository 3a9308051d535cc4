"""A notebook's result record: keys from table labels, figures saved, values published.

A notebook's result record (:func:`hierret.report.write_results`) is a flat
mapping of keys to numbers, which ``DECISIONS.md`` quotes by key. The keys are
the labels of the table a number sits in, joined: the row labels (every level
of a multi-index), then the column. :func:`record_key` makes a key from labels
(``-`` becomes ``_``, ``@`` is dropped, case is kept: ``all-MiniLM-L6-v2`` and
``ndcg@10`` become ``all_MiniLM_L6_v2`` and ``ndcg10``); :func:`table_values`
turns a whole table (or series) into record values that way, so a record's
keys follow from its tables and never from hand-written format strings.
:func:`publish` glues every value for the site and writes the record;
:func:`hierret.figures.save` saves a figure where the site build asks for figures.

Unlike :func:`hierret.experiment.slug`, which lowercases everything for keys
it makes itself, these keys keep the labels' case, as the records since DR-001
spell model names.

Examples
--------
>>> import pandas as pd
>>> table = pd.DataFrame({"ndcg@10": [0.6, 0.5], "p_holm": [None, 0.03]},
...                      index=pd.MultiIndex.from_tuples([("pyref", "all-MiniLM-L6-v2"),
...                                                       ("pyref", "wordllama")]))
>>> table_values(table, prefix="dense")
{'dense_pyref_all_MiniLM_L6_v2_ndcg10': 0.6, 'dense_pyref_wordllama_ndcg10': 0.5, \
'dense_pyref_wordllama_p_holm': 0.03}
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from hierret.report import glue, write_results

__all__ = ["publish", "record_key", "table_values"]


def record_key(*parts: object) -> str:
    """Labels joined by ``_``, with ``-`` as ``_`` and ``@`` dropped; empty parts left out.

    Examples
    --------
    >>> record_key("cost", "scifact", "minilm-int8", "pps")
    'cost_scifact_minilm_int8_pps'
    >>> record_key("", "recall@10")
    'recall10'
    """
    return "_".join(str(p) for p in parts if str(p) != "").replace("-", "_").replace("@", "")


def _labels(label: object) -> tuple[object, ...]:
    return label if isinstance(label, tuple) else (label,)


def _plain(value: object) -> object:
    return value.item() if isinstance(value, np.generic) else value


def table_values(
    table: pd.DataFrame | pd.Series,
    prefix: str = "",
    columns: Sequence[str] | Mapping[str, str] | None = None,
) -> dict[str, object]:
    """Every non-missing cell of ``table`` under the key of its labels.

    Parameters
    ----------
    table : DataFrame or Series
        A series gives ``{prefix}_{row labels}``; a frame
        ``{prefix}_{row labels}_{column}`` for each column.
    prefix : str, default ""
        The first part of every key.
    columns : sequence of str, or mapping of column to key part, optional
        The columns recorded (default: all), or the columns recorded with the
        name each takes in the keys.

    Returns
    -------
    dict
        Key to value (numpy scalars as Python numbers; NaN and None left out),
        in the table's row order, then column order.

    Raises
    ------
    ValueError
        Two cells give the same key (labels differing only by ``-``/``_`` or ``@``).

    Examples
    --------
    >>> costs = pd.DataFrame({"passages/s": [9.5], "latency mean ms": [120.0]},
    ...                      index=pd.MultiIndex.from_tuples([("pyref", "e5-small")]))
    >>> table_values(costs, "cost", {"passages/s": "pps"})
    {'cost_pyref_e5_small_pps': 9.5}
    >>> table_values(pd.Series({"pyref": 0.1, "scifact": float("nan")}), "floor")
    {'floor_pyref': 0.1}
    """
    frame = table.to_frame("") if isinstance(table, pd.Series) else table
    if columns is None:
        named = {c: c for c in frame.columns}
    elif isinstance(columns, Mapping):
        named = dict(columns)
    else:
        named = {c: c for c in columns}
    out: dict[str, object] = {}
    for i, label in enumerate(frame.index):
        for column, part in named.items():
            value = frame[column].iat[i]  # by column: a row would cast ints to floats
            if value is None or (isinstance(value, float | np.floating) and np.isnan(value)):
                continue
            key = record_key(prefix, *_labels(label), part)
            if key in out:
                raise ValueError(f"two cells give the key {key!r}: make the labels distinct")
            out[key] = _plain(value)
    return out


def publish(name: str, values: Mapping[str, Any], identity: Mapping[str, Any],
            results_dir: str | os.PathLike[str] | None) -> Path | None:
    """Glue every value for the site, and write the record ``results_dir/{name}.json``.

    Parameters
    ----------
    name : str
        The record's namespace in ``DECISIONS.md`` markers (``dr002``).
    values : mapping
        Key to number (:func:`table_values` makes the keys).
    identity : mapping
        What the run was: corpora, encoders, parameters
        (:func:`hierret.report.write_results`).
    results_dir : path-like or None
        Where records go (a notebook's ``results_dir`` parameter); ``None``
        glues only.

    Returns
    -------
    Path or None
        The record written, if any.
    """
    for key, value in values.items():
        glue(key, value)
    if results_dir is None:
        return None
    return write_results(Path(results_dir) / f"{name}.json", name, values, identity)
