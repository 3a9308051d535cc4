"""What a reader sees: tables, figures, result records and the published-number checks.

This floor stands on the core (:mod:`hierret`) and needs nothing from the
study machinery: its figures and tables take data frames. It is the only
place matplotlib is imported.

* :mod:`~hierret.publish.tables`: result tables as a page shows them
  (:func:`styled`, :func:`fields`);
* :mod:`~hierret.publish.figures`: the shared look, interval and difference
  figures, and :func:`save` (a figure written where the site build asks);
* :mod:`~hierret.publish.charts`: each study's own figures, drawn from data
  frames and arrays;
* :mod:`~hierret.publish.record`: a notebook's result record
  (:func:`~hierret.publish.record.publish`, :func:`table_values`, :func:`key`);
* :mod:`~hierret.publish.report`: the records on disk and the published-number
  check of README and DECISIONS;
* :mod:`~hierret.publish.claims`: every comparative sentence tied to its test;
* :mod:`~hierret.publish.summary`: the records at a glance, each record's key
  claim quoted from its claims table;
* :mod:`~hierret.publish.against`: this run against the published record
  (:func:`against_published`: settings, quoted numbers, claims' verdicts);
* :mod:`~hierret.publish.readable`: an executed notebook readable outside the
  site (each glued value written where the prose quotes it), a command run on
  papermill's output (``python -m hierret.publish.readable OUT.ipynb``), not
  imported here;
* :mod:`~hierret.publish.timing`: where a run's time went, as a record, a
  table and a figure, and each notebook's measured time per run size
  (:func:`run_times`).

A notebook imports from this face only: the modules above and the names listed
in ``__all__``.
"""

from hierret.publish import (
    against,
    charts,
    claims,
    figures,
    record,
    report,
    summary,
    tables,
    timing,
)
from hierret.publish.against import against_published
from hierret.publish.figures import save
from hierret.publish.record import key, table_values
from hierret.publish.tables import fields, styled
from hierret.publish.timing import run_times

__all__ = [
    "against",
    "against_published",
    "charts",
    "claims",
    "fields",
    "figures",
    "key",
    "record",
    "report",
    "run_times",
    "save",
    "styled",
    "summary",
    "table_values",
    "tables",
    "timing",
]
