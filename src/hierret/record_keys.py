"""Record values from a table: one key per cell, named by a template over the row.

A result record (:func:`hierret.report.write_results`) is a flat mapping of
keys to numbers, which DECISIONS.md quotes by key. A notebook's numbers
usually sit in a long table (one row per corpus, size, target, arm...);
:func:`record_values` turns the chosen columns of every row into record
values, each key written by a template that names the row's fields and the
column, then passed through :func:`hierret.experiment.slug` (lower case,
``@`` dropped, other runs of punctuation as one ``_``, none at either end).
So a key scheme is stated once, as a template, and not rebuilt by hand.

Examples
--------
>>> import pandas as pd
>>> table = pd.DataFrame({"corpus": ["pyref", "pyref"], "arm": ["chunk", "rawspan-section"],
...                       "mean": [0.5, 0.75], "low": [0.25, 0.5]})
>>> record_values(table, "{corpus}_{arm}_{column}", {"mean": "", "low": "low"})
{'pyref_chunk': 0.5, 'pyref_chunk_low': 0.25, 'pyref_rawspan_section': 0.75, \
'pyref_rawspan_section_low': 0.5}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from hierret.experiment import slug

__all__ = ["record_values"]


def record_values(
    table: pd.DataFrame, key: str, columns: Mapping[str, str] | Sequence[str]
) -> dict[str, float | int]:
    """One record value per row of ``table`` and column of ``columns``.

    Parameters
    ----------
    table : DataFrame
        One row per entity; its columns (the index too, after
        ``reset_index()``) are the fields ``key`` may name.
    key : str
        A :meth:`str.format` template over a row's fields and ``column``
        (format specs allowed: ``"{weight:02d}"``), made a key by
        :func:`~hierret.experiment.slug`.
    columns : mapping of str to str, or sequence of str
        The columns recorded, each with the label ``{column}`` takes in the
        key (``""`` leaves it out, e.g. for the mean); a sequence of column
        names labels each column by its own name.

    Returns
    -------
    dict
        Key to value, row by row, in ``columns`` order; integer columns give
        ints, the others floats.

    Raises
    ------
    ValueError
        A column not in ``table``, a template naming a field the table lacks,
        or two cells given the same key.

    Examples
    --------
    >>> table = pd.DataFrame({"level": ["sections"], "pooled": [3]})
    >>> record_values(table, "{column}_{level}", ["pooled"])
    {'pooled_sections': 3}
    >>> record_values(table, "{column}_{levle}", ["pooled"])
    Traceback (most recent call last):
    ...
    ValueError: the key template names 'levle', not a column of the table: level, pooled
    """
    labels = dict(columns) if isinstance(columns, Mapping) else {c: c for c in columns}
    missing = [c for c in labels if c not in table.columns]
    if missing:
        raise ValueError(f"columns {missing} are not in the table: "
                         f"{', '.join(map(str, table.columns))}")
    out: dict[str, float | int] = {}
    for record in table.to_dict("records"):
        row = {str(field): value for field, value in record.items()}
        for column, label in labels.items():
            try:
                name = slug(key.format(**row, column=label))
            except KeyError as err:
                raise ValueError(f"the key template names {err.args[0]!r}, not a column of the "
                                 f"table: {', '.join(map(str, table.columns))}") from None
            if name in out:
                raise ValueError(f"two cells get the key {name!r}: name every field that "
                                 "tells rows apart in the template")
            value = row[column]
            integer = pd.api.types.is_integer_dtype(table[column])
            out[name] = int(value) if integer else float(np.float64(value))
    return out
