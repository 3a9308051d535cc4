"""Evaluation: span-overlap qrels, lifting runs to coarser targets, metrics, TREC files.

A **run** (:data:`Run`) maps query ids to rankings of ``(unit_id, score)``
pairs, best first, ordered by :func:`rank`; **qrels** (:data:`Qrels`) map
query ids to ``{unit_id: grade}``. Those types, :func:`rank` and :func:`lift`
live below evaluation (:mod:`hierret.runs`, :mod:`hierret.lifting`), where
rankers and search use them too; they are re-exported here under the names
users know.
"""

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
from hierret.evaluation.trec import TrecFormatError, read_qrels, read_run, write_qrels, write_run
from hierret.lifting import ancestors_at, lift
from hierret.runs import Qrels, Ranking, Run, rank

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
