"""Prose p-values at their resampling floor: a bound, so printed with "≤", never "=".

A paired randomisation test with ``B`` sign flips cannot give a two-sided p
below ``2 / (B + 1)``; a test at that floor has a p of *at most* that value,
and its Holm-adjusted p is a bound too. The claims rows print both with "≤"
(:func:`hierret.publish.claims.cells`); :func:`problems` finds the
published-number markers of a text (``0.0004<!--@dr002.x_p_holm:.2g-->``)
that quote such a p with no "≤" just before the number ("p = 0.0004" reads as
a value; "p ≤ 0.0004" is what the test showed).

Examples
--------
>>> import pandas as pd
>>> tests = pd.DataFrame({"test": ["T1"], "key": ["x"], "kind": ["mean"], "n": [300],
...                       "p": [2 / 10_001], "n_resamples": [10_000]})
>>> results = {"dr009": {"values": {}, "evidence": tests}}
>>> problems("It holds (adjusted p = 0.0004<!--@dr009.x_p_holm:.2g-->).", results)
["line 1: p = 0.0004 (dr009.x_p_holm) is at the resampling floor: write 'p ≤ 0.0004'"]
>>> problems("It holds (adjusted p ≤ 0.0004<!--@dr009.x_p_holm:.2g-->).", results)
[]
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import hierret.publish.robustness as robustness

__all__ = ["problems"]

_P_MARKER = re.compile(
    r"(?P<before>[^\n]{0,12}?)(?P<num>\d[\d.]*(?:e-\d+)?)<!--@(?P<key>\w+)\.(?P<field>\w+?)"
    r"_(?P<which>p|p_holm)(?::[^>]*)?-->"
)


def problems(text: str, results: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Every marker of ``text`` that prints a p at its resampling floor without "≤".

    Parameters
    ----------
    text : str
        Markdown with published-number markers.
    results : mapping
        The loaded records, each with its ``"evidence"`` tests table
        (:func:`hierret.publish.report.load_results`).

    Returns
    -------
    list of str
        ``line N: p = X (record.key) is at the resampling floor: write 'p ≤ X'``.
    """
    out = []
    for m in _P_MARKER.finditer(text):
        tests = results.get(m["key"], {}).get("evidence")
        if tests is None:
            continue
        rows = tests[tests["key"] == m["field"]]
        if rows.empty or not robustness.at_floor(rows.iloc[0]):
            continue
        if "≤" in m["before"] or "&le;" in m["before"]:
            continue
        line = text.count("\n", 0, m.start("num")) + 1
        out.append(
            f"line {line}: p = {m['num']} ({m['key']}.{m['field']}_{m['which']}) is at the "
            f"resampling floor: write 'p ≤ {m['num']}'"
        )
    return out
