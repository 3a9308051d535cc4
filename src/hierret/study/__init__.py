"""The study machinery: what runs, compares and tunes arms for a decision record.

This floor stands on the core (:mod:`hierret`) and on :mod:`hierret.publish`;
nothing below imports it. The face lists names, never modules, each loading its
module on first use (PEP 562), so ``import hierret.study`` loads nothing else:

* **a notebook's run**: :class:`Lesson` (its parameters checked against the
  rules its notebook declares, its size applied, its statistics, its record);
  its parts: :func:`check_notebook` (checks them against :data:`PRESETS`, what
  its smaller run sizes change), the rules :data:`CORPUS`, :data:`ENCODER`,
  :data:`TOKEN_VECTORS`;
* **studies, one object each**: :class:`Structure` (a corpus's structure, the
  structure tour), :class:`Testbed` (one corpus ready to compare encoders on),
  :class:`Hierarchies` (corpora each built at several passage sizes, every arm
  run on each), :class:`LateChunking` (late-chunked passage vectors on such a
  grid), :class:`Reranking` (a reranking study's encoders, rerankers and
  corpora, a joint matrix each), :class:`Thresholds` (reranked scores read on
  their own scales), :class:`SelectionFidelity` (a profile against its twin
  without selection), :class:`Audit` (the unlabelled units arms rank high,
  read), :class:`Oracle` (each arm beside the per-question best of them, over a
  grid of runs), :class:`Casebook` (the questions that decide each comparison),
  :class:`Chunking` (DR-001's comparisons read into its record),
  :class:`Embedders` (DR-002's tables read into its record), :class:`Costs`
  (each encoder's cost on each corpus), :class:`Arm`;
* **single steps a notebook shows**: :func:`embedding_variation`,
  :func:`normalization_effect`, :func:`precision_agreement`,
  :func:`identity_guard`, :func:`tune_automerge` (auto-merging's threshold
  chosen out of fold), :func:`add_routed` (the router's arm, chosen out of fold).

What the site build (``docs/*.py``) uses has a face of its own,
:mod:`hierret.study.site_build`. Everything else in ``study/`` (running arms in
:mod:`hierret.study.experiment`, the joint matrix, the sweeps, the pooling study,
measurements kept per machine...) is reached by its module's own name.

:data:`LEDGER` is where every result keeps its tests; a notebook hands it to
:func:`hierret.publish.record.publish`, which writes the evidence from it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import hierret._face as _face

if TYPE_CHECKING:
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
    from hierret.study.late_chunking import LateChunking
    from hierret.study.lesson import Lesson
    from hierret.study.merging import tune_automerge
    from hierret.study.oracle import Oracle
    from hierret.study.params import CORPUS, ENCODER, TOKEN_VECTORS, check_notebook
    from hierret.study.reranking import Reranking
    from hierret.study.result import LEDGER
    from hierret.study.router import add_routed
    from hierret.study.sets import SelectionFidelity
    from hierret.study.sizes import PRESETS
    from hierret.study.structure import Structure
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
    "TOKEN_VECTORS": "hierret.study.params",
    "Structure": "hierret.study.structure",
    "Testbed": "hierret.study.testbed",
    "Hierarchies": "hierret.study.hierarchies",
    "LateChunking": "hierret.study.late_chunking",
    "Reranking": "hierret.study.reranking",
    "Thresholds": "hierret.study.thresholds",
    "SelectionFidelity": "hierret.study.sets",
    "Audit": "hierret.study.audit",
    "Oracle": "hierret.study.oracle",
    "Casebook": "hierret.study.casebook",
    "Chunking": "hierret.study.chunking",
    "Embedders": "hierret.study.embedders",
    "Costs": "hierret.study.cost",
    "Arm": "hierret.study.experiment",
    "LEDGER": "hierret.study.result",
    "embedding_variation": "hierret.study.variation",
    "normalization_effect": "hierret.study.agreement",
    "precision_agreement": "hierret.study.agreement",
    "identity_guard": "hierret.study.agreement",
    "tune_automerge": "hierret.study.merging",
    "add_routed": "hierret.study.router",
}
_FACE = NOTEBOOK

__all__ = [
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
    "LateChunking",
    "Lesson",
    "Oracle",
    "Reranking",
    "SelectionFidelity",
    "Structure",
    "Testbed",
    "Thresholds",
    "add_routed",
    "check_notebook",
    "embedding_variation",
    "identity_guard",
    "normalization_effect",
    "precision_agreement",
    "tune_automerge",
]

if not TYPE_CHECKING:  # mypy reads the imports above, so a misspelt name stays an error
    __getattr__, __dir__ = _face.lazy(__name__, _FACE)
