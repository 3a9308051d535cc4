"""The study machinery: what runs, compares and tunes arms for a decision record.

This floor stands on the core (:mod:`hierret`) and on :mod:`hierret.publish`;
nothing below imports it. Its modules, by what a record does with them:

* **compare arms**: :mod:`~hierret.study.experiment` (one call runs several
  profiles on the same questions, judges them and tests the declared
  comparisons), :mod:`~hierret.study.oracle`, :mod:`~hierret.study.casebook`
  (the questions that decide a comparison), :mod:`~hierret.study.audit`
  (unlabelled top-ranked units, for a reader to judge);
* **sweep and tune**: :mod:`~hierret.study.sweep` (profile settings and
  passage sizes), :mod:`~hierret.study.thresholds`, :mod:`~hierret.study.joint`
  (first stages crossed with rerankers), :mod:`~hierret.study.sets` (the
  returned set as a measure), :mod:`~hierret.study.merging` and
  :mod:`~hierret.study.router` (ideas a record tried and did not adopt);
* **measure the machine's part**: :mod:`~hierret.study.cost`,
  :mod:`~hierret.study.scale` (embedding past one machine, predicted),
  :mod:`~hierret.study.measured`, :mod:`~hierret.study.variation`,
  :mod:`~hierret.study.agreement`, :mod:`~hierret.study.pooling`;
* **set up a notebook**: :mod:`~hierret.study.params` (its parameters checked),
  :mod:`~hierret.study.sizes` (what its smaller run sizes change),
  :mod:`~hierret.study.available` (what loads here),
  :mod:`~hierret.study.testbed`, :mod:`~hierret.study.structure` (the
  structure tour's tables).

A notebook imports from this face only: the modules above and the few names
listed in ``__all__``; among them :data:`LEDGER`, where every result keeps its
tests, which a notebook hands to :func:`hierret.publish.record.publish`.
"""

from hierret.study import (
    agreement,
    audit,
    available,
    casebook,
    cost,
    experiment,
    joint,
    measured,
    merging,
    oracle,
    params,
    pooling,
    router,
    scale,
    sets,
    sizes,
    structure,
    sweep,
    testbed,
    thresholds,
    variation,
)
from hierret.study.agreement import normalization_effect, precision_agreement
from hierret.study.experiment import Arm
from hierret.study.measured import Measurements
from hierret.study.params import (
    BEIR,
    CORPUS,
    ENCODER,
    TOKEN_VECTORS,
    among,
    at_least,
    below,
    between,
    check_notebook,
    judged_at,
)
from hierret.study.result import LEDGER
from hierret.study.sizes import PRESETS
from hierret.study.sweep import chunking_sweep
from hierret.study.testbed import Testbed
from hierret.study.variation import embedding_variation

__all__ = [
    "BEIR",
    "CORPUS",
    "ENCODER",
    "LEDGER",
    "PRESETS",
    "TOKEN_VECTORS",
    "Arm",
    "Measurements",
    "Testbed",
    "agreement",
    "among",
    "at_least",
    "audit",
    "available",
    "below",
    "between",
    "casebook",
    "check_notebook",
    "chunking_sweep",
    "cost",
    "embedding_variation",
    "experiment",
    "joint",
    "judged_at",
    "measured",
    "merging",
    "normalization_effect",
    "oracle",
    "params",
    "pooling",
    "precision_agreement",
    "router",
    "scale",
    "sets",
    "sizes",
    "structure",
    "sweep",
    "testbed",
    "thresholds",
    "variation",
]
