"""What the site build (``docs/*.py``) uses from :mod:`hierret.publish`: a face of names.

Apart from the notebooks' face (:mod:`hierret.publish`), so that each lists what
its readers call: :func:`load_results`, :func:`write_results`,
:func:`compare_records`, :func:`annotate_run`, :func:`check_page`,
:func:`update_page` and :func:`adopt` (the records on disk and every check of
the published numbers), :func:`results_table` and :func:`heading_slug` (the home
page's results table and anchors), :data:`WIDTH` (the figures' width), and the
run's timing record: :class:`Timings`, :data:`TIMING_ENV`, :func:`read_timing`,
:func:`timing_values`, :func:`timing_name`, :data:`SIZE_RECORDS`,
:data:`EXERCISES_RECORD`, :func:`exercises_of`, :func:`timing_table` and
:func:`timing_figure`. Each name loads its module on first use (PEP 562).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import hierret._face as _face

if TYPE_CHECKING:
    from hierret.publish.figures import WIDTH
    from hierret.publish.pages import adopt, check_page, update_page
    from hierret.publish.report import annotate_run, compare_records, load_results, write_results
    from hierret.publish.summary import results_table
    from hierret.publish.summary import slug as heading_slug
    from hierret.publish.timing import (
        EXERCISES_RECORD,
        SIZE_RECORDS,
        TIMING_ENV,
        Timings,
        exercises_of,
    )
    from hierret.publish.timing import figure as timing_figure
    from hierret.publish.timing import read as read_timing
    from hierret.publish.timing import record_name as timing_name
    from hierret.publish.timing import record_values as timing_values
    from hierret.publish.timing import table as timing_table

#: Each name and (its module, its name there).
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

__all__ = [
    "EXERCISES_RECORD",
    "SIZE_RECORDS",
    "TIMING_ENV",
    "WIDTH",
    "Timings",
    "adopt",
    "annotate_run",
    "check_page",
    "compare_records",
    "exercises_of",
    "heading_slug",
    "load_results",
    "read_timing",
    "results_table",
    "timing_figure",
    "timing_name",
    "timing_table",
    "timing_values",
    "update_page",
    "write_results",
]


if not TYPE_CHECKING:  # mypy reads the imports above, so a misspelt name stays an error
    __getattr__, __dir__ = _face.lazy(__name__, SITE)
