"""A record's runs on disk: the TREC run file and qrels behind every arm of every test.

The evidence files (:mod:`hierret.publish.evidence`) hold each paired test's
per-question scores; these hold what the scores were computed from, so that a
reader can score the runs again with trec_eval, ranx or ir_measures (another
metric, another cut-off, another test, or the same ones as a check).
:func:`write` puts them in ``evidence/runs/{name}/``:

``{stem}.run.gz``
    One arm's run at the level its metric was computed on (after lifting to
    the target), on the test's questions, ``qid Q0 docid rank score tag``
    (:func:`hierret.evaluation.write_run`), the tag being ``{stem}``. Each
    ranking keeps its first :data:`RUN_DEPTH` units (the whole ranking for a
    metric with no cut-off or a deeper one), in the order trec_eval reads it
    (score descending, equal scores by id descending) with the scores exact
    (``repr``), so that the top that decided every published value is there.
    A question the arm ranked nothing for has no line.
``{stem}.qrels.gz``
    The judgements the arm was scored with, ``qid 0 docid rel``, on the test's
    questions; several runs share one file when they were judged alike.
``runs.tsv``
    One row per test and arm: ``test`` (the ``T`` number of
    ``{name}-tests.tsv``), ``side`` (``a`` or ``b``), ``arm``, ``metric``
    (hierret's name), ``measure`` (trec_eval's name for it, e.g.
    ``ndcg_cut_10``; empty when trec_eval has none), ``n`` (the test's
    questions), ``depth`` (ranks kept; 0 for whole rankings), ``run`` and
    ``qrels`` (file names in the folder).

A run or qrels used by several tests is written once, named after the first
test's family and the arm (:func:`stem`). Files are gzip with no timestamp, so
an unchanged run writes the same bytes; files of an earlier write that this
one does not name are removed. Tests the study attached no runs to
(:meth:`hierret.evaluation.stats.evidence.Ledger.attach`; e.g. an arm scored outside the
searcher) have no rows.

Examples
--------
>>> import tempfile
>>> from hierret.evaluation.stats.evidence import Judged, Ledger, PairedTest
>>> book = Ledger()
>>> t = PairedTest("mean", "b@sections", "a@sections", ("q1",), (1.0,), (0.0,),
...                1.0, 1.0, 1.0, 1.0, 0.95, 9, 0)
>>> i = book.keep(t)
>>> qrels = {"q1": {"s1": 1}}
>>> book.attach(i, Judged({"q1": [("s1", 0.9), ("s2", 0.5)]}, qrels, "hit@1"),
...             Judged({"q1": [("s2", 0.7)]}, qrels, "hit@1"))
>>> folder = tempfile.mkdtemp()
>>> index = write(folder, "dr9", [("T1", i, "my family")], book)
>>> index[["test", "side", "measure", "run"]].to_dict("records")[0]
{'test': 'T1', 'side': 'a', 'measure': 'success_1', 'run': 'my-family--b-sections.run.gz'}
>>> sorted(set(index["qrels"]))
['my-family--b-sections.qrels.gz']
>>> from hierret.evaluation import read_run
>>> read_run(f"{folder}/evidence/runs/dr9/my-family--a-sections.run.gz")
{'q1': [('s2', 0.7)]}
"""

from __future__ import annotations

import os
import re
import warnings
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from hierret._files import atomic_write
from hierret.evaluation.stats.evidence import Judged, Ledger
from hierret.evaluation.trec import write_qrels, write_run
from hierret.search.runs import Qrels, Run

__all__ = ["INDEX", "RUN_COLUMNS", "RUN_DEPTH", "folder", "measure", "stem", "write"]

#: Ranks kept per question: the deepest cut-off of every metric the records test
#: (nDCG@10, recall@5 and @10, hit@1); a metric with no cut-off or a deeper one keeps all.
RUN_DEPTH = 10
#: The index of a record's run files, in :func:`folder`.
INDEX = "runs.tsv"
#: The columns of :data:`INDEX`, in order.
RUN_COLUMNS = ["test", "side", "arm", "metric", "measure", "n", "depth", "run", "qrels"]

_METRIC = re.compile(r"(ndcg|recall|hit|mrr|map|p|rprec)(?:@([1-9][0-9]*))?")
#: hierret's metric kinds and trec_eval's measures (with ``_k`` for a cut-off ``k``)
_TREC = {"ndcg": "ndcg_cut", "recall": "recall", "hit": "success", "p": "P", "map": "map_cut"}
_TREC_WHOLE = {"mrr": "recip_rank", "map": "map", "rprec": "Rprec"}


def measure(metric: str) -> str:
    """trec_eval's name of hierret's ``metric``, or ``""`` when it has none.

    Examples
    --------
    >>> measure("ndcg@10"), measure("hit@1"), measure("mrr"), measure("mrr@10")
    ('ndcg_cut_10', 'success_1', 'recip_rank', '')
    """
    found = _METRIC.fullmatch(metric)
    if found is None:
        return ""
    kind, cutoff = found[1], found[2]
    if cutoff is None:
        return _TREC_WHOLE.get(kind, "")
    return f"{_TREC[kind]}_{cutoff}" if kind in _TREC else ""


def _depth(metric: str) -> int:
    """Ranks to keep for ``metric``: :data:`RUN_DEPTH`, its cut-off if deeper, 0 for all."""
    found = _METRIC.fullmatch(metric)
    if found is None or found[2] is None:
        return 0
    return max(RUN_DEPTH, int(found[2]))


def stem(*labels: str) -> str:
    """A file name's stem from labels: letters, digits, ``.``, ``_``; others become ``-``.

    Examples
    --------
    >>> stem("study, python-reference 900", "chunk@documents")
    'study-python-reference-900--chunk-documents'
    """
    parts = [re.sub(r"[^A-Za-z0-9._]+", "-", label).strip("-") or "x" for label in labels]
    return "--".join(parts)


def folder(results: str | os.PathLike[str], name: str) -> Path:
    """``results/evidence/runs/{name}``: where record ``name``'s run files live."""
    return Path(results) / "evidence" / "runs" / name


def _spaced(queries: Sequence[str], found: tuple[Judged, Judged]) -> str:
    """The first question or unit id of a test's files that holds whitespace, or ``""``."""
    for q in queries:
        ids = [q]
        for source in found:
            ids += [u for u, _ in source.run.get(q, [])] + list(source.qrels[q])
        for i in ids:
            if i != "".join(i.split()) or not i:
                return i
    return ""


def write(
    results: str | os.PathLike[str],
    name: str,
    rows: Sequence[tuple[str, int, str]],
    ledger: Ledger,
) -> pd.DataFrame:
    """Write the run files and qrels of every test in ``rows`` with attached runs.

    Parameters
    ----------
    results : str or os.PathLike
        The results folder (the files go to :func:`folder`).
    name : str
        The record's name.
    rows : sequence of (str, int, str)
        Each published test's ``T`` number, its number in ``ledger``
        (:meth:`hierret.evaluation.stats.evidence.Ledger.keep`) and its family's label.
    ledger : Ledger
        The study's ledger: the tests and the runs attached to them.

    Returns
    -------
    pandas.DataFrame
        The index written (:data:`RUN_COLUMNS`); empty, and nothing written,
        when no test has runs attached.

    Warns
    -----
    UserWarning
        A test whose question or unit ids hold whitespace (TREC files split on
        it): its runs are left out, the record is still published.
    """
    target = folder(results, name)
    records: list[list[object]] = []
    stems: dict[tuple[tuple[str, float], ...], str] = {}  # a run's lines to its file's stem
    judged: dict[tuple[tuple[str, int], ...], str] = {}  # qrels' lines to their file's stem
    run_files: dict[str, Run] = {}
    qrels_files: dict[str, Qrels] = {}
    for label, i, family in rows:
        found = ledger.sources(i)
        if found is None:
            continue
        test = ledger.tests[i]
        spaced = _spaced(test.queries, found)
        if spaced:
            warnings.warn(
                f"record {name!r}, test {label}: id {spaced!r} holds whitespace, which TREC "
                "files split on; its runs are not written (rename the documents or queries)",
                stacklevel=2,
            )
            continue
        for side, arm, source in (("a", test.a, found[0]), ("b", test.b, found[1])):
            depth = _depth(source.metric)
            top = slice(None) if depth == 0 else slice(depth)
            lines = tuple(
                (f"{q}\t{u}", float(s)) for q in test.queries for u, s in source.run.get(q, [])[top]
            )
            if lines not in stems:
                base, n = stem(family, arm), 1
                while base in run_files:
                    n += 1
                    base = stem(family, arm, str(n))
                stems[lines] = base
                run_files[base] = {q: list(source.run[q][top])
                                   for q in test.queries if source.run.get(q)}  # fmt: skip
            grades = tuple(
                (f"{q}\t{u}", int(g)) for q in test.queries for u, g in source.qrels[q].items()
            )
            if grades not in judged:
                judged[grades] = stems[lines]
                qrels_files[stems[lines]] = {q: dict(source.qrels[q]) for q in test.queries}
            files = [f"{stems[lines]}.run.gz", f"{judged[grades]}.qrels.gz"]
            records.append([label, side, arm, source.metric, measure(source.metric), test.n,
                            depth, *files])  # fmt: skip
    index = pd.DataFrame(records, columns=RUN_COLUMNS)
    if index.empty:
        return index
    target.mkdir(parents=True, exist_ok=True)
    for base, run in run_files.items():
        write_run(run, target / f"{base}.run.gz", tag=base)
    for base, qrels in qrels_files.items():
        write_qrels(qrels, target / f"{base}.qrels.gz")
    atomic_write(target / INDEX, index.to_csv(sep="\t", index=False).encode())
    written = {INDEX} | {f"{b}.run.gz" for b in run_files} | {f"{b}.qrels.gz" for b in qrels_files}
    for old in target.iterdir():
        if old.name not in written:
            old.unlink()
    return index
