"""Evaluation: span-overlap qrels, lifting runs to coarser targets, metrics, TREC files.

A **run** (:data:`Run`) maps query ids to rankings of ``(unit_id, score)``
pairs, best first, ordered by :func:`rank`; **qrels** (:data:`Qrels`) map
query ids to ``{unit_id: grade}``. Those types, :func:`rank` and :func:`lift`
live below evaluation (:mod:`hierret.search.runs`, :mod:`hierret.search.lifting`), where
rankers and search use them too; they are re-exported here under the names
users know.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import hierret._face as _face

if TYPE_CHECKING:
    from hierret.evaluation.coverage import CoverageReport, check_coverage
    from hierret.evaluation.metrics import (
        average_precision,
        evaluate,
        hit_at,
        mean_scores,
        mrr,
        ndcg_at,
        precision_at,
        r_precision,
        recall_at,
    )
    from hierret.evaluation.qrels import qrels_from_evidence
    from hierret.evaluation.trec import (
        TrecFormatError,
        read_qrels,
        read_run,
        write_qrels,
        write_run,
    )
    from hierret.search.lifting import ancestors_at, lift
    from hierret.search.runs import Qrels, Ranking, Run, rank

#: Each public name and the module that defines it; a name's module loads on first use.
_FACE = {
    "CoverageReport": "hierret.evaluation.coverage",
    "check_coverage": "hierret.evaluation.coverage",
    "average_precision": "hierret.evaluation.metrics",
    "evaluate": "hierret.evaluation.metrics",
    "hit_at": "hierret.evaluation.metrics",
    "mean_scores": "hierret.evaluation.metrics",
    "mrr": "hierret.evaluation.metrics",
    "ndcg_at": "hierret.evaluation.metrics",
    "precision_at": "hierret.evaluation.metrics",
    "r_precision": "hierret.evaluation.metrics",
    "recall_at": "hierret.evaluation.metrics",
    "qrels_from_evidence": "hierret.evaluation.qrels",
    "TrecFormatError": "hierret.evaluation.trec",
    "read_qrels": "hierret.evaluation.trec",
    "read_run": "hierret.evaluation.trec",
    "write_qrels": "hierret.evaluation.trec",
    "write_run": "hierret.evaluation.trec",
    "ancestors_at": "hierret.search.lifting",
    "lift": "hierret.search.lifting",
    "Qrels": "hierret.search.runs",
    "Ranking": "hierret.search.runs",
    "Run": "hierret.search.runs",
    "rank": "hierret.search.runs",
}

__all__ = [
    "CoverageReport",
    "Qrels",
    "Ranking",
    "Run",
    "TrecFormatError",
    "ancestors_at",
    "average_precision",
    "check_coverage",
    "evaluate",
    "hit_at",
    "lift",
    "mean_scores",
    "mrr",
    "ndcg_at",
    "precision_at",
    "qrels_from_evidence",
    "r_precision",
    "rank",
    "read_qrels",
    "read_run",
    "recall_at",
    "write_qrels",
    "write_run",
]

if not TYPE_CHECKING:  # mypy reads the imports above, so a misspelt name stays an error
    __getattr__, __dir__ = _face.lazy(__name__, _FACE)
