"""What a reader sees: tables, figures, result records and the published-number checks.

This floor stands on the core (:mod:`hierret`) and needs nothing from the
study machinery: its figures and tables take data frames. It is the only
place matplotlib is imported.

The face lists names, not modules, each loading its module on first use
(PEP 562), so ``import hierret.publish`` loads nothing else. It is what a
notebook uses: :func:`styled` and :func:`fields` (result tables as a
page shows them), :func:`save` (a figure written where the site build asks),
:func:`interval_panels` (intervals drawn from data frames; each study's own
figures are its ``plot``), :func:`publish`, :func:`table_values` and
:func:`key` (a notebook's result record), :func:`against_published` (this run
against the published record) and :func:`run_times` (each notebook's measured
time per run size).

What the site build (``docs/*.py``) uses has a face of its own,
:mod:`hierret.publish.site_build`: the records on disk, every check of the
published numbers, the home page's table and the run's timing record.

Where the code lives: ``tables``, ``figures``, ``charts`` (each study's own
figures), ``record``, ``report``, ``pages``, ``claims`` (every comparative
sentence tied to its test), ``summary`` (the records at a glance), ``against``,
``roles`` (what a claim is about, so that another run tests it), ``timing``;
``runprose`` is a command run on papermill's output, not a name here (``python -m
hierret.publish.runprose OUT.ipynb RESULTS``: no sentence states the reference run's
facts as this run's).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import hierret._face as _face

if TYPE_CHECKING:
    from hierret.publish.against import against_published
    from hierret.publish.figures import interval_panels, save
    from hierret.publish.record import key, publish, table_values
    from hierret.publish.tables import fields, styled
    from hierret.publish.timing import run_times

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
_FACE = READER

__all__ = [
    "against_published",
    "fields",
    "interval_panels",
    "key",
    "publish",
    "run_times",
    "save",
    "styled",
    "table_values",
]


if not TYPE_CHECKING:  # mypy reads the imports above, so a misspelt name stays an error
    __getattr__, __dir__ = _face.lazy(__name__, _FACE)
