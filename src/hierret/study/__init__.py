"""The study machinery: what runs, compares and tunes arms for a decision record.

This floor stands on the core (:mod:`hierret`) and on :mod:`hierret.publish`;
nothing below imports it. The face lists names, each loading its module on first
use (PEP 562), so ``import hierret.study`` loads nothing else:

* **a notebook's run**: :class:`Lesson` (its parameters checked against the
  rules its notebook declares, its size applied, its statistics, its record);
  its parts: :func:`check_notebook` (checks them against
  :data:`PRESETS`, what its smaller run sizes change), the rules :data:`CORPUS`,
  :data:`ENCODER`, :data:`BEIR`, :data:`TOKEN_VECTORS`, :func:`judged_at`;
* **studies, one object each**: :class:`Structure` (a corpus's structure, the
  structure tour), :class:`Thresholds` (reranked scores read on their own
  scales), :class:`SelectionFidelity` (a profile against its twin without
  selection; :func:`paired_by_metric` tests any result metric by metric),
  :class:`Audit` (the unlabelled units arms rank high, read), :class:`Oracle`
  (each arm beside the per-question best of them, over a grid of runs),
  :class:`Casebook` (the questions that decide each comparison), :class:`Chunking`
  (DR-001's comparisons read into its record), :class:`Embedders` (DR-002's
  tables read into its record), :class:`Costs` (each encoder's cost on each corpus),
  :class:`Pooling`
  (the window pooling the dense indexes needed), :class:`JointMatrix` (first
  stages crossed with rerankers), :class:`Swept` (profile settings swept),
  :class:`Hierarchies` (corpora each built at several passage sizes, every arm run
  on each), :class:`LateChunking` (late-chunked passage vectors on such a grid),
  :class:`Reranking` (a reranking study's encoders, rerankers and corpora, a joint
  matrix each), :class:`Testbed`,
  :class:`Arm`, :class:`Measurements`,
  :func:`chunking_sweep`, :func:`embedding_variation`,
  :func:`normalization_effect`, :func:`precision_agreement`, :func:`identity_guard`.

What the site build (``docs/*.py``) uses has a face of its own,
:mod:`hierret.study.site_build`.

:data:`MODULES` lists the study modules a notebook still reaches as modules
(``study.cost.measure_cost``...): each leaves this face when its functions become
one study object, as :class:`Structure`, :class:`Thresholds`,
:class:`SelectionFidelity`, :class:`Audit`, :class:`Oracle`, :class:`Casebook`,
:class:`Pooling`, :class:`JointMatrix` and :class:`Swept` did.

:data:`LEDGER` is where every result keeps its tests; a notebook hands it to
:func:`hierret.publish.record.publish`, which writes the evidence from it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import hierret._face as _face

if TYPE_CHECKING:
    from hierret.study import (
        available,
        cost,
        experiment,
        merging,
        router,
    )
    from hierret.study.agreement import (
        identity_guard,
        normalization_effect,
        precision_agreement,
    )
    from hierret.study.audit import Audit
    from hierret.study.casebook import Casebook
    from hierret.study.chunking import Chunking
    from hierret.study.cost import Costs
    from hierret.study.embedders import Embedders
    from hierret.study.experiment import Arm
    from hierret.study.hierarchies import Hierarchies
    from hierret.study.joint import JointMatrix
    from hierret.study.late_chunking import LateChunking
    from hierret.study.lesson import Lesson
    from hierret.study.measured import Measurements
    from hierret.study.oracle import Oracle
    from hierret.study.params import (
        BEIR,
        CORPUS,
        ENCODER,
        TOKEN_VECTORS,
        check_notebook,
        judged_at,
    )
    from hierret.study.pooling import Pooling
    from hierret.study.reranking import Reranking
    from hierret.study.result import LEDGER
    from hierret.study.sets import SelectionFidelity, paired_by_metric
    from hierret.study.sizes import PRESETS
    from hierret.study.structure import Structure
    from hierret.study.sweep import Swept, chunking_sweep
    from hierret.study.testbed import Testbed
    from hierret.study.thresholds import Thresholds
    from hierret.study.variation import embedding_variation

#: What a notebook uses: each name and the module that defines it.
NOTEBOOK = {
    "Lesson": "hierret.study.lesson",
    "check_notebook": "hierret.study.params",
    "PRESETS": "hierret.study.sizes",
    "CORPUS": "hierret.study.params",
    "ENCODER": "hierret.study.params",
    "BEIR": "hierret.study.params",
    "TOKEN_VECTORS": "hierret.study.params",
    "judged_at": "hierret.study.params",
    "Structure": "hierret.study.structure",
    "Audit": "hierret.study.audit",
    "Oracle": "hierret.study.oracle",
    "Casebook": "hierret.study.casebook",
    "Chunking": "hierret.study.chunking",
    "Costs": "hierret.study.cost",
    "Embedders": "hierret.study.embedders",
    "JointMatrix": "hierret.study.joint",
    "Swept": "hierret.study.sweep",
    "Hierarchies": "hierret.study.hierarchies",
    "LateChunking": "hierret.study.late_chunking",
    "Reranking": "hierret.study.reranking",
    "Pooling": "hierret.study.pooling",
    "Thresholds": "hierret.study.thresholds",
    "SelectionFidelity": "hierret.study.sets",
    "paired_by_metric": "hierret.study.sets",
    "Testbed": "hierret.study.testbed",
    "Arm": "hierret.study.experiment",
    "LEDGER": "hierret.study.result",
    "Measurements": "hierret.study.measured",
    "chunking_sweep": "hierret.study.sweep",
    "embedding_variation": "hierret.study.variation",
    "normalization_effect": "hierret.study.agreement",
    "precision_agreement": "hierret.study.agreement",
    "identity_guard": "hierret.study.agreement",
}
#: Study modules a notebook still reaches as modules, until each is one study object.
MODULES = (
    "available",
    "cost",
    "experiment",
    "merging",
    "router",
)
_FACE = NOTEBOOK

__all__ = [
    "BEIR",
    "CORPUS",
    "ENCODER",
    "LEDGER",
    "PRESETS",
    "TOKEN_VECTORS",
    "Arm",
    "Audit",
    "Casebook",
    "Chunking",
    "Costs",
    "Embedders",
    "Hierarchies",
    "JointMatrix",
    "LateChunking",
    "Lesson",
    "Measurements",
    "Oracle",
    "Pooling",
    "Reranking",
    "SelectionFidelity",
    "Structure",
    "Swept",
    "Testbed",
    "Thresholds",
    "available",
    "check_notebook",
    "chunking_sweep",
    "cost",
    "embedding_variation",
    "experiment",
    "identity_guard",
    "judged_at",
    "merging",
    "normalization_effect",
    "paired_by_metric",
    "precision_agreement",
    "router",
]


if not TYPE_CHECKING:  # mypy reads the imports above, so a misspelt name stays an error
    __getattr__, __dir__ = _face.lazy(
        __name__, {**_FACE, **{m: f"hierret.study.{m}" for m in MODULES}}
    )
