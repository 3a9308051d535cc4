"""What each notebook changes at the smaller run sizes, ``smoke`` and ``class``.

Every notebook has a parameter ``size``: ``"reference"`` (the default) runs the
published record's parameters; ``"class"`` runs in a few minutes on a laptop, for
teaching and trying, and keeps every comparison of the record (DR-004 and DR-005
keep every document and question, distractors included, with fewer resamples: their
reference runs take minutes already, and a class run on 40 questions of 40 documents
lost most of their established differences); ``"smoke"`` is the test suite's,
seconds a notebook, and shows that the code runs, not what it finds. A size is a
preset over the notebook's own parameters, applied by
:func:`hierret.study.params.check_notebook` to the parameters a run does not give
(``-p size class -p max_queries 60`` keeps 60 questions). Each notebook's head shows
its presets beside the run time each size took
(:func:`hierret.publish.timing.run_times`). The sizes themselves are :data:`SIZES`;
:func:`resize` applies a preset and ``$HIERRET_SMOKE`` (:data:`SMOKE_ENV`).

Examples
--------
>>> PRESETS["05_dr004_hierarchy"]["class"]
{'n_resamples': 2000}
>>> first = PRESETS["05_dr004_hierarchy"]["smoke"]["chunk_chars"]
>>> first({"chunk_chars": [900, 1800]}), str(first)
([900], 'the first only')
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass

__all__ = ["PRESETS", "SIZES", "SMOKE_ENV", "Derived", "Preset", "resize"]

#: A run's size, smallest first: ``smoke`` (the test suite's seconds), ``class`` (a few
#: minutes on a laptop, for teaching and trying; large enough to show the effects) and
#: ``reference`` (the published record). Each notebook declares what its smaller sizes
#: change (its ``presets``, :func:`~hierret.study.params.check_notebook`).
SIZES = ("smoke", "class", "reference")
#: Set to ``1``, every notebook runs at size ``smoke`` whatever its parameters say (the
#: test session sets it, so a notebook run under nbval directly is a smoke run too).
SMOKE_ENV = "HIERRET_SMOKE"

#: A size's preset: parameter name to its value at that size, or to a callable of the
#: run's values giving it (a value derived from another parameter).
Preset = Mapping[str, object]


def resize(namespace: dict[str, object], presets: Mapping[str, Preset], given: set[str]) -> None:
    """Set the run's size (``$HIERRET_SMOKE``), then its preset's parameters not ``given``.

    What :func:`~hierret.study.params.check_notebook` does with a notebook's
    ``presets`` before its rules are checked.

    Examples
    --------
    >>> ns = {"size": "smoke", "k": 10, "seed": 0}
    >>> resize(ns, {"smoke": {"k": 5, "seed": 7}}, given={"seed"})
    >>> ns["k"], ns["seed"]
    (5, 0)
    >>> resize(ns, {"tiny": {"k": 1}}, given=set())
    Traceback (most recent call last):
    ...
    ValueError: presets for ['tiny']: a preset is for a smaller size, ('smoke', 'class')
    """
    if os.environ.get(SMOKE_ENV) == "1" and namespace["size"] in SIZES:  # a bad one: refused
        namespace["size"] = "smoke"
    stray = sorted(set(presets) - set(SIZES[:-1]))
    if stray:
        raise ValueError(f"presets for {stray}: a preset is for a smaller size, {SIZES[:-1]}")
    preset = presets.get(str(namespace["size"]), {})
    unknown = sorted(set(preset) - set(namespace))
    if unknown:
        raise ValueError(f"the preset sets {unknown}, which the notebook does not have")
    values = dict(namespace)  # every callable reads the values as given
    for name, value in preset.items():
        if name not in given:
            namespace[name] = value(values) if callable(value) else value


@dataclass(frozen=True)
class Derived:
    """A preset value computed from the run's parameters, with what it does in words.

    Parameters
    ----------
    text : str
        What it does, for the notebook's table of sizes (``"the first only"``).
    compute : callable
        The run's parameter values to the value.
    """

    text: str
    compute: Callable[[Mapping[str, object]], object]

    def __call__(self, values: Mapping[str, object]) -> object:
        return self.compute(values)

    def __str__(self) -> str:
        return self.text


def _first(name: str) -> Derived:
    return Derived("the first only", lambda p: list(p[name])[:1])  # type: ignore[call-overload]


#: e5-small's exact 4-bit engine embeds a few texts a second on two cores (the bench
#: record): the test suite's smoke size leaves it out; the class size keeps it.
_NO_E5 = Derived(
    "without e5-small",
    lambda p: [e for e in p["encoders"] if e != "e5-small"],  # type: ignore[attr-defined]
)
#: DR-003: no first stage with the rescore encoder (e5-small), for the same reason.
_NO_E5_FIRST_STAGE = Derived(
    "without rescore_encoder's",
    lambda p: [f for f in p["first_stages"] if f.split(":")[1] != p["rescore_encoder"]],  # type: ignore[attr-defined]
)

#: Notebook file name (no ``.ipynb``) to size to the parameters that size changes.
PRESETS: dict[str, dict[str, dict[str, object]]] = {
    "01_structure": {
        "smoke": {"max_queries": 10, "max_docs": 100},  # the 79 topics stay whole
        "class": {},  # the reference run takes seconds
    },
    "02_dr001_chunking": {
        "smoke": {"max_queries": 30, "max_docs": 40, "n_resamples": 1000, "sizes": _first("sizes")},
        "class": {"max_docs": 400, "n_resamples": 2000},  # 400 SciFact abstracts
    },
    "03_dr002_embedders": {
        "smoke": {
            "encoders": _NO_E5,
            "sampled": {},
            "max_queries": 10,
            "max_docs": {"python-reference": 12, "scifact": 40, "qasper": 2},
            "n_resamples": 1000,
            "latency_queries": 5,
            "throughput_texts": 8,
            "variation_texts": 4,
        },
        "class": {
            "sampled": {},
            "max_docs": {"python-reference": 40, "scifact": 400, "qasper": 5},
            "n_resamples": 2000,
            "latency_queries": 20,
        },
    },
    "04_dr003_reranking": {
        "smoke": {
            "first_stages": _NO_E5_FIRST_STAGE,
            "max_queries": 10,
            "max_docs": {"python-reference": 13, "scifact": 50},
            "candidates": 10,
            "n_resamples": 1000,
            "latency_queries": 1,
        },
        "class": {  # e5-rescore reads every candidate with e5: the bulk of the time
            "max_queries": 15,
            "max_docs": {"scifact": 300},
            "n_resamples": 2000,
            "latency_queries": 2,
        },
    },
    "05_dr004_hierarchy": {
        "smoke": {  # the judged documents only
            "chunk_chars": _first("chunk_chars"),
            "sweep_weights": Derived("every fifth", lambda p: list(p["sweep_weights"])[::5]),  # type: ignore[call-overload]
            "max_queries": 11,
            "max_docs": 2,
            "n_resamples": 1000,
        },
        # every document (the judged and the distractors) and every question: the reference
        # run takes minutes already, its cost is embedding and 40 questions showed nothing
        "class": {"n_resamples": 2000},
    },
    "06_dr005_beyond": {
        "smoke": {
            "chunk_chars": _first("chunk_chars"),
            "max_queries": 11,
            "max_docs": 2,
            "n_resamples": 1000,
            "folds": 2,
            "cost_passages": 8,
        },
        "class": {"n_resamples": 2000, "cost_passages": 16},  # as DR-004's
    },
}
