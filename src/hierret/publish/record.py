"""A notebook's result record: one key rule, values read off tables, published once.

A result record (:func:`hierret.publish.report.write_results`) is a flat mapping of
keys to numbers, which ``DECISIONS.md`` quotes by key. Every key in every
record is made by one rule, :func:`key`: the labels it is made of joined by
``_``, lower case, ``@`` dropped and every other run of characters that are
not letters or digits written as one ``_`` (``"all-MiniLM-L6-v2"``,
``"ndcg@10"`` → ``all_minilm_l6_v2_ndcg10``). :func:`table_values` turns the
cells of a table into record values, each keyed by its row labels and its
column (or by a template over the row's fields, when the key's parts come in
another order), so a record's keys follow from its tables and are never
typed by hand. :func:`publish` glues every value for the site and writes the
record; :func:`hierret.publish.figures.save` saves a figure where the site build asks
for figures.

Examples
--------
>>> import pandas as pd
>>> table = pd.DataFrame({"ndcg@10": [0.6, 0.5], "p_holm": [None, 0.03]},
...                      index=pd.MultiIndex.from_tuples([("pyref", "all-MiniLM-L6-v2"),
...                                                       ("pyref", "wordllama")]))
>>> table_values(table, prefix="dense")
{'dense_pyref_all_minilm_l6_v2_ndcg10': 0.6, 'dense_pyref_wordllama_ndcg10': 0.5, \
'dense_pyref_wordllama_p_holm': 0.03}
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Mapping, MutableMapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import hierret.publish.evidence as tested_values
from hierret.evaluation.stats.evidence import TEST_COLUMN, Ledger, PairedTest, Tested
from hierret.publish.report import glue, write_results

__all__ = ["COUNT_COLUMNS", "key", "publish", "table_values"]

#: Columns that hold counts (of queries, of hits): recorded as ``int`` whatever their dtype,
#: so that ``DECISIONS.md`` quotes ``90``, not ``90.0``.
COUNT_COLUMNS = frozenset({"n", "hits", "both", "only_arm", "only_base", "neither"})


def key(*parts: object) -> str:
    """The record key of ``parts``: joined by ``_``, lower case, ``@`` dropped, runs of other
    characters as one ``_``; empty parts are left out.

    Examples
    --------
    >>> key("sec", "fused, hybrid", "ndcg@10", "p_holm")
    'sec_fused_hybrid_ndcg10_p_holm'
    >>> key("cost", "scifact", "all-MiniLM-L6-v2", "", "pps")
    'cost_scifact_all_minilm_l6_v2_pps'
    """
    text = "_".join(str(p) for p in parts if str(p) != "").replace("@", "").lower()
    return re.sub(r"[^a-z0-9]+", "_", text).strip("_")


def _named(labels: Sequence[Any] | Mapping[Any, Any]) -> dict[Any, Any]:
    return dict(labels) if isinstance(labels, Mapping) else {label: label for label in labels}


def _parts(label: object) -> tuple[object, ...]:
    return label if isinstance(label, tuple) else (label,)


def _number(frame: pd.DataFrame, column: Any, value: Any) -> int | float:
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | float | np.number):
        raise ValueError(f"column {column!r} holds {value!r}: a record holds numbers only")
    integer = isinstance(value, int | np.integer)  # a count, also in a column of mixed kinds
    if integer or column in COUNT_COLUMNS or pd.api.types.is_integer_dtype(frame[column]):
        return int(value)
    return float(value)


def _fields(frame: pd.DataFrame, label: object, i: int) -> dict[str, Any]:
    names = [str(n) for n in frame.index.names if n is not None]
    fields = dict(zip(names, _parts(label), strict=False))
    return fields | {str(c): frame[c].iat[i] for c in frame.columns}


def table_values(
    table: pd.DataFrame | pd.Series,
    prefix: str = "",
    rows: Sequence[Any] | Mapping[Any, Any] | None = None,
    columns: Sequence[Any] | Mapping[Any, Any] | None = None,
    *,
    template: str | None = None,
) -> dict[str, int | float]:
    """The cells of ``table`` as record values, each under the :func:`key` of its labels.

    Parameters
    ----------
    table : DataFrame or Series
        A frame gives ``{prefix}_{row labels}_{column}`` for each cell (every
        level of a multi-index in turn); a series ``{prefix}_{row labels}``.
    prefix : str, default ""
        The first part of every key.
    rows : sequence, or mapping to the name each takes in the key, optional
        The rows recorded, by index label (default: all); a mapping renames a
        row in its keys, and the name ``""`` leaves the row out of them.
    columns : sequence, or mapping to the name each takes in the key, optional
        The columns recorded (default: all), named the same way.
    template : str, optional
        Instead of ``prefix`` and the row labels, a :meth:`str.format`
        template over the row's fields (index levels and columns) and
        ``column`` (the column's name in the key); format specs are allowed
        (``"weight_{w:02d}_{target}"``). For keys whose parts come in
        another order than the table's labels.

    Returns
    -------
    dict
        Key to value, rows then columns in the order given. Empty cells (NaN,
        ``None``, such as the baseline's difference with itself) are left
        out. Counts (:data:`COUNT_COLUMNS` and integer columns) are ``int``,
        every other value a ``float``; a ``diff`` whose row has its test in
        the column :data:`TEST_COLUMN` (a comparison's table, however reshaped)
        is a :class:`~hierret.evaluation.stats.evidence.Tested` float carrying that test,
        which :func:`publish` writes the evidence of. That column is never a
        value itself.

    Raises
    ------
    ValueError
        A row or column not in the table, a template field the row lacks, a
        cell that is not a number, or two cells given the same key.

    Examples
    --------
    >>> t = pd.DataFrame({"mean": [0.5, 0.6], "low": [0.4, 0.5], "hits": [3.0, 4.0]},
    ...                  index=["dense", "hybrid"])
    >>> table_values(t, "ndcg", ["dense"], ["mean", "low"])
    {'ndcg_dense_mean': 0.5, 'ndcg_dense_low': 0.4}
    >>> table_values(t, "hit5", {"hybrid": ""}, {"hits": ""})
    {'hit5': 4}
    >>> table_values(t.reset_index(), columns={"mean": ""}, template="{column}_{index}_x")
    {'dense_x': 0.5, 'hybrid_x': 0.6}
    >>> table_values(pd.Series({"pyref": 0.1, "scifact": float("nan")}), "floor")
    {'floor_pyref': 0.1}
    >>> table_values(t, "ndcg", columns=["median"])
    Traceback (most recent call last):
    ...
    ValueError: columns ['median'] are not in the table: mean, low, hits
    """
    frame = table.to_frame("") if isinstance(table, pd.Series) else table
    numbers = [c for c in frame.columns if c != TEST_COLUMN]  # the tests are not values
    named_columns = _named(numbers if columns is None else columns)
    named_rows = _named(list(frame.index) if rows is None else rows)
    for what, picked, have in (
        ("columns", named_columns, frame.columns),
        ("rows", named_rows, frame.index),
    ):
        missing = [label for label in picked if label not in have]
        if missing:
            raise ValueError(f"{what} {missing} are not in the table: {', '.join(map(str, have))}")
    out: dict[str, int | float] = {}
    carried = TEST_COLUMN in frame.columns
    for label, name in named_rows.items():
        i = frame.index.get_loc(label)
        if not isinstance(i, int):
            raise ValueError(
                f"row {label!r} appears more than once: pass rows=None, or make the index unique"
            )
        fields = _fields(frame, label, i) if template is not None else {}
        for column, part in named_columns.items():
            value = frame[column].iat[i]  # by column: a row would cast ints to floats
            if value is None or pd.isna(value):
                continue
            if template is None:
                name_ = key(prefix, *_parts(name), part)
            else:
                try:
                    name_ = key(template.format(**fields, column=part))
                except KeyError as err:
                    raise ValueError(
                        f"the template names {err.args[0]!r}, not a field of the "
                        f"table: {', '.join(fields)}"
                    ) from None
            if name_ in out:
                raise ValueError(
                    f"two cells get the key {name_!r}: name every label that tells them apart"
                )
            out[name_] = _number(frame, column, value)
            test: object = frame[TEST_COLUMN].iat[i] if carried and column == "diff" else None
            if isinstance(test, PairedTest):  # the difference carries its test
                out[name_] = Tested(out[name_], test)
    return out


def _tested(values: Mapping[str, Any], name: str) -> bool:
    """Whether ``name`` is a published difference ``K_diff`` with its interval."""
    k = name[: -len("_diff")]
    return name.endswith("_diff") and f"{k}_diff_low" in values and f"{k}_diff_high" in values


def publish(
    name: str,
    values: MutableMapping[str, Any],
    identity: Mapping[str, Any],
    results_dir: str | os.PathLike[str] | None,
    facts: Sequence[str] = (),
    *,
    evidence: Ledger | None = None,
) -> None:
    """Glue every value for the site, and write the record ``results_dir/{name}.json``.

    Parameters
    ----------
    name : str
        The record's namespace in ``DECISIONS.md`` markers (``dr002``:
        markers read ``<!--@dr002.key-->``).
    values : mutable mapping
        Key to number (:func:`table_values` makes the keys). Every paired test
        it publishes gains its evidence values (``K_p``, ``K_p_holm``,
        ``K_family_size``, ``K_mde``, ``K_margin_low``, ``K_margin_high``:
        :mod:`hierret.publish.evidence`), added to ``values`` itself so that
        the notebook's check against the published record sees them.
    identity : mapping
        What the run was: corpora, encoders, parameters
        (:func:`hierret.publish.report.write_results`).
    results_dir : path-like or None
        Where records go (a notebook's ``results_dir`` parameter, which
        ``nox -s reproduce`` sets), with the evidence of every published test
        in ``results_dir/evidence`` (:func:`hierret.publish.evidence.write`);
        ``None`` glues only.
    facts : sequence of str, optional
        Shell-style patterns (``"cost_*"``) of the keys that are machine facts
        (times, costs, throughputs, run-to-run variation): the record lists
        the keys they match under ``"facts"``, and the numbers check holds
        those to the reference record instead of asking another machine to
        reproduce them (:mod:`hierret.publish.report`).
    evidence : Ledger, optional
        The ledger the study kept its tests in
        (:data:`hierret.study.result.LEDGER` for results of
        :func:`hierret.study.experiment.run`): the record's evidence is written
        from it, and from nothing else. Needed when ``values`` publishes a
        difference with its interval (``K_diff``, ``K_diff_low``, ``K_diff_high``).

    Raises
    ------
    ValueError
        A pattern that matches no key (a typo would leave a time checked as a
        finding), or differences published with no ledger to find their tests in.

    Notes
    -----
    Returns nothing, so that a notebook cell ending with it shows no output;
    :func:`hierret.publish.report.load_results` reads a folder of records back.

    Examples
    --------
    >>> import json, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     publish("dr9", {"hit1": 0.9, "cost_ms": 54.0}, {}, tmp, facts=["cost_*"])
    ...     json.loads((Path(tmp) / "dr9.json").read_text())["facts"]
    ['cost_ms']
    """
    if evidence is None:
        tested = sorted(k[: -len("_diff")] for k in values if _tested(values, k))
        if tested:
            raise ValueError(
                f"values publish differences {tested[:3]} with their intervals but no ledger "
                "holds their tests: pass evidence= the ledger the study kept them in "
                "(hierret.study.LEDGER for results of experiment.run)"
            )
        evidence = Ledger()
    values.update(
        tested_values.derived(values, tested_values.published_tests(values, evidence), evidence)
    )
    matched = {p: [k for k in values if fnmatch.fnmatchcase(k, p)] for p in facts}
    idle = [p for p, keys in matched.items() if not keys]
    if idle:
        raise ValueError(
            f"the facts patterns {idle} match no published key: give patterns of the "
            "keys that hold machine facts (times, costs), e.g. 'cost_*'"
        )
    for k, value in values.items():
        glue(k, value)
    if results_dir is not None:
        keys = {k for keys in matched.values() for k in keys}
        write_results(Path(results_dir) / f"{name}.json", name, values, identity, keys)
        tested_values.write(results_dir, name, values, evidence)
