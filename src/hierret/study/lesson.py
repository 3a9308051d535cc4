"""A notebook's run: its parameters checked, its size applied, its statistics, its record.

Every notebook opens the same way: check the parameters papermill injected
against the house's rules and the notebook's own, apply the run size's preset
(:data:`~hierret.study.sizes.PRESETS`), show the times each size took; and
ends the same way: write the record with the evidence of its tests, and show under
its exercises what each changes and how long it took (:meth:`Lesson.exercises`: a
code cell's output, which papermill's output and JupyterLab show as the site does).
A :class:`Lesson` is that frame written once, so a notebook's first cell is one
call (:meth:`Lesson.begin`) and its record a second (:meth:`Lesson.publish`).

What each notebook's parameters must be is declared here, in :data:`NOTEBOOKS`
(its record's name, its rules beside the house vocabulary's
:data:`~hierret.study.vocabulary.RULES`), beside the sizes' presets
(:mod:`hierret.study.sizes`), and read by :func:`~hierret.study.params.check_notebook`.

Examples
--------
>>> ns = {"In": ["", "corpus = 'python-reference'\\nencoder = 'hash'\\nconfidence = 0.9",
...              "Lesson.begin(globals(), '01_structure')"],
...       "corpus": "python-reference", "encoder": "hash", "confidence": 0.9}
>>> lesson = Lesson.begin(ns, "01_structure")
>>> lesson.record, dict(lesson.parameters)
('structure', {'corpus': 'python-reference', 'encoder': 'hash', 'confidence': 0.9})
"""

from __future__ import annotations

import os
from collections.abc import Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
from pandas.io.formats.style import Styler

from hierret.evaluation.stats.settings import StatsSettings
from hierret.publish.record import publish
from hierret.publish.tables import styled
from hierret.publish.timing import exercise_table, run_times
from hierret.study.params import RunParameters, check_notebook
from hierret.study.result import LEDGER
from hierret.study.rules import Choices, Rule
from hierret.study.sizes import PRESETS, Preset
from hierret.study.vocabulary import BEIR, CORPUS, ENCODER, TOKEN_VECTORS, judged_at

__all__ = ["NOTEBOOKS", "Lesson", "Notebook"]


@dataclass(frozen=True)
class Notebook:
    """What a notebook's run is checked against, and the record it writes.

    Parameters
    ----------
    record : str
        The record's name (``dr001``: ``DECISIONS.md`` markers read ``<!--@dr001.key-->``).
    rules : mapping
        Each parameter's :class:`~hierret.study.rules.Choices` or
        :class:`~hierret.study.rules.Rule`, by name
        (:func:`~hierret.study.params.check_notebook`'s ``**choices``).
    also : mapping
        Further rules on parameters, each a :class:`~hierret.study.rules.Rule` by name
        (its ``also``).
    """

    record: str
    rules: Mapping[str, Choices | Rule] = field(default_factory=dict)
    also: Mapping[str, Rule] = field(default_factory=dict)


#: Each notebook (its file name without ``.ipynb``): its record and its parameters' rules.
NOTEBOOKS: dict[str, Notebook] = {
    "01_structure": Notebook("structure", {"encoder": ENCODER, "corpus": CORPUS}),
    "02_dr001_chunking": Notebook(
        "dr001",
        {"corpus": CORPUS, "encoder": ENCODER, "beir": BEIR.or_none()},
        {"corpus": judged_at("passages")},
    ),
    "03_dr002_embedders": Notebook("dr002", {"corpora": CORPUS, "encoders": ENCODER}),
    "04_dr003_reranking": Notebook(
        "dr003", {"corpora": CORPUS, "maxsim_encoder": ENCODER, "rescore_encoder": ENCODER}
    ),
    "05_dr004_hierarchy": Notebook("dr004", {"corpora": CORPUS, "encoder": ENCODER}),
    "06_dr005_beyond": Notebook("dr005", {"corpora": CORPUS, "encoder": TOKEN_VECTORS}),
}


@dataclass(frozen=True)
class Lesson:
    """One run of a notebook: its name, its namespace and its parameters as checked.

    Make it with :meth:`begin`, in the cell right after the parameters cell.

    Parameters
    ----------
    notebook : str
        The notebook's file name without ``.ipynb`` (a key of :data:`NOTEBOOKS`).
    namespace : mutable mapping
        The notebook's ``globals()``: its parameters as they stand.
    parameters : RunParameters
        What :func:`~hierret.study.params.check_notebook` returned: the
        parameters as run, for the record's identity.
    """

    notebook: str
    namespace: MutableMapping[str, Any] = field(repr=False)
    parameters: RunParameters = field(repr=False)

    @classmethod
    def begin(cls, namespace: dict[str, Any], notebook: str) -> Lesson:
        """Check the notebook's parameters and apply its run size, in its second cell.

        :func:`~hierret.study.params.check_notebook` with the notebook's rules
        (:data:`NOTEBOOKS`) and its sizes' presets (:data:`~hierret.study.sizes.PRESETS`).

        Parameters
        ----------
        namespace : dict
            The notebook's ``globals()``.
        notebook : str
            Its file name without ``.ipynb``.

        Raises
        ------
        ValueError
            A notebook :data:`NOTEBOOKS` does not know.
        ParameterError
            A parameter misspelt, of the wrong type or not among its choices.

        Examples
        --------
        >>> Lesson.begin({}, "07_nothing")
        Traceback (most recent call last):
        ...
        ValueError: unknown notebook '07_nothing': one of 01_structure, 02_dr001_chunking, \
03_dr002_embedders, 04_dr003_reranking, 05_dr004_hierarchy, 06_dr005_beyond \
(declare a new one in hierret.study.lesson.NOTEBOOKS)
        """
        if notebook not in NOTEBOOKS:
            raise ValueError(
                f"unknown notebook {notebook!r}: one of {', '.join(NOTEBOOKS)} "
                "(declare a new one in hierret.study.lesson.NOTEBOOKS)"
            )
        spec = NOTEBOOKS[notebook]
        parameters = check_notebook(
            namespace, also=spec.also or None, presets=PRESETS.get(notebook), **spec.rules
        )
        return cls(notebook, namespace, parameters)

    @property
    def record(self) -> str:
        """The name of the record this notebook writes (``dr001``)."""
        return NOTEBOOKS[self.notebook].record

    @property
    def presets(self) -> Mapping[str, Preset]:
        """What the notebook's smaller sizes change (:data:`~hierret.study.sizes.PRESETS`)."""
        return PRESETS.get(self.notebook, {})

    @property
    def stats(self) -> StatsSettings:
        """The statistics' settings of every interval and test: the parameters
        ``confidence``, ``n_resamples`` and ``seed`` (their defaults where absent)."""
        defaults = StatsSettings()
        ns = self.namespace
        return StatsSettings(
            ns.get("confidence", defaults.confidence),
            ns.get("n_resamples", defaults.n_resamples),
            ns.get("seed", defaults.seed),
        )

    def times(self) -> Styler:
        """The notebook's measured time at each size, beside what each size changes
        (:func:`~hierret.publish.timing.run_times`), as the notebook's head shows it."""
        return styled(run_times(self.notebook, self.presets), "Run sizes and their measured times")

    def exercises(self) -> Styler:
        """The notebook's exercises, what each changes and its measured time
        (:func:`~hierret.publish.timing.exercise_table`), as the cell under them shows it."""
        return styled(exercise_table(self.notebook), "Exercises and their measured times")

    def show(self, table: pd.DataFrame | pd.Series, caption: str) -> Styler:
        """``table`` as the page shows it, its p-values at the resolution of this run's
        resampling tests (:func:`~hierret.publish.tables.styled` with ``n_resamples``)."""
        return styled(table, caption, n_resamples=self.stats.n_resamples)

    def publish(
        self,
        values: MutableMapping[str, Any],
        identity: Mapping[str, Any],
        facts: Sequence[str] = (),
    ) -> None:
        """Glue ``values`` and write the record (to the ``results_dir`` parameter, when
        set), with the evidence of every test it publishes, from :data:`~hierret.study.LEDGER`.

        :func:`hierret.publish.record.publish` under this notebook's record name.
        """
        folder: str | os.PathLike[str] | None = self.namespace.get("results_dir")
        publish(self.record, values, identity, folder, facts, evidence=LEDGER)
