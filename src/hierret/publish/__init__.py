"""What a reader sees: tables, figures, result records and the published-number checks.

This floor stands on the core (:mod:`hierret`) and needs nothing from the
study machinery: its figures and tables take data frames. It is the only
place matplotlib is imported.

The face lists names, not modules, in two groups; each loads its module on
first use (PEP 562), so ``import hierret.publish`` loads nothing else.

**What a notebook uses:** :func:`styled` and :func:`fields` (result tables as a
page shows them), :func:`save` (a figure written where the site build asks),
:func:`interval_panels` (intervals drawn from data frames; each study's own
figures are its ``plot``), :func:`publish`, :func:`table_values` and
:func:`key` (a notebook's result record), :func:`against_published` (this run
against the published record) and :func:`run_times` (each notebook's measured
time per run size).

**What the site build uses** (``docs/*.py``): :func:`load_results`,
:func:`write_results`, :func:`compare_records`, :func:`annotate_run`,
:func:`check_page`, :func:`update_page` and :func:`adopt` (the records on disk
and every check of the published numbers), :func:`results_table` and
:func:`heading_slug` (the home page's results table and anchors), :data:`WIDTH`
(the figures' width), and the run's timing record: :class:`Timings`,
:data:`TIMING_ENV`, :func:`read_timing`, :func:`timing_values`,
:func:`timing_name`, :data:`SIZE_RECORDS`, :data:`EXERCISES_RECORD`,
:func:`exercises_of`, :func:`timing_table` and :func:`timing_figure`.

Where the code lives: ``tables``, ``figures``, ``charts`` (each study's own
figures), ``record``, ``report``, ``pages``, ``claims`` (every comparative
sentence tied to its test), ``summary`` (the records at a glance), ``against``,
``timing``; ``readable`` is a command run on papermill's output
(``python -m hierret.publish.readable OUT.ipynb``), not a name here.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hierret.publish.against import against_published
    from hierret.publish.figures import WIDTH, interval_panels, save
    from hierret.publish.pages import adopt, check_page, update_page
    from hierret.publish.record import key, publish, table_values
    from hierret.publish.report import (
        annotate_run,
        compare_records,
        load_results,
        write_results,
    )
    from hierret.publish.summary import results_table
    from hierret.publish.summary import slug as heading_slug
    from hierret.publish.tables import fields, styled
    from hierret.publish.timing import (
        EXERCISES_RECORD,
        SIZE_RECORDS,
        TIMING_ENV,
        Timings,
        exercises_of,
        run_times,
    )
    from hierret.publish.timing import figure as timing_figure
    from hierret.publish.timing import read as read_timing
    from hierret.publish.timing import record_name as timing_name
    from hierret.publish.timing import record_values as timing_values
    from hierret.publish.timing import table as timing_table

#: What a notebook uses: each name and (its module, its name there).
READER = {
    "styled": ("hierret.publish.tables", "styled"),
    "fields": ("hierret.publish.tables", "fields"),
    "save": ("hierret.publish.figures", "save"),
    "interval_panels": ("hierret.publish.figures", "interval_panels"),
    "publish": ("hierret.publish.record", "publish"),
    "table_values": ("hierret.publish.record", "table_values"),
    "key": ("hierret.publish.record", "key"),
    "against_published": ("hierret.publish.against", "against_published"),
    "run_times": ("hierret.publish.timing", "run_times"),
}
#: What the site build (``docs/*.py``) uses.
SITE = {
    "load_results": ("hierret.publish.report", "load_results"),
    "write_results": ("hierret.publish.report", "write_results"),
    "compare_records": ("hierret.publish.report", "compare_records"),
    "annotate_run": ("hierret.publish.report", "annotate_run"),
    "check_page": ("hierret.publish.pages", "check_page"),
    "update_page": ("hierret.publish.pages", "update_page"),
    "adopt": ("hierret.publish.pages", "adopt"),
    "results_table": ("hierret.publish.summary", "results_table"),
    "heading_slug": ("hierret.publish.summary", "slug"),
    "WIDTH": ("hierret.publish.figures", "WIDTH"),
    "Timings": ("hierret.publish.timing", "Timings"),
    "TIMING_ENV": ("hierret.publish.timing", "TIMING_ENV"),
    "read_timing": ("hierret.publish.timing", "read"),
    "timing_values": ("hierret.publish.timing", "record_values"),
    "timing_name": ("hierret.publish.timing", "record_name"),
    "SIZE_RECORDS": ("hierret.publish.timing", "SIZE_RECORDS"),
    "EXERCISES_RECORD": ("hierret.publish.timing", "EXERCISES_RECORD"),
    "exercises_of": ("hierret.publish.timing", "exercises_of"),
    "timing_table": ("hierret.publish.timing", "table"),
    "timing_figure": ("hierret.publish.timing", "figure"),
}
_FACE = READER | SITE

__all__ = [
    "EXERCISES_RECORD",
    "SIZE_RECORDS",
    "TIMING_ENV",
    "WIDTH",
    "Timings",
    "adopt",
    "against_published",
    "annotate_run",
    "check_page",
    "compare_records",
    "exercises_of",
    "fields",
    "heading_slug",
    "interval_panels",
    "key",
    "load_results",
    "publish",
    "read_timing",
    "results_table",
    "run_times",
    "save",
    "styled",
    "table_values",
    "timing_figure",
    "timing_name",
    "timing_table",
    "timing_values",
    "update_page",
    "write_results",
]


def __getattr__(name: str) -> Any:
    """Load a public name's module on first use (PEP 562)."""
    if name not in _FACE:
        raise AttributeError(f"module 'hierret.publish' has no attribute {name!r}")
    module, attribute = _FACE[name]
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_FACE})
