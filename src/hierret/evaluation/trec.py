"""TREC run files (``qid Q0 docid rank score tag``) and qrels files (``qid 0 docid rel``).

A path ending in ``.gz`` is read and written gzip-compressed (written with no
timestamp, so the same run gives the same bytes); trec_eval, ranx and
ir_measures read such files as they are, or after ``gunzip``.
"""

from __future__ import annotations

import gzip
import io
import math
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from hierret._files import atomic_write
from hierret.search.runs import Qrels, Run, rank

__all__ = ["TrecFormatError", "read_qrels", "read_run", "write_qrels", "write_run"]

_RUN_FORMAT = "'qid Q0 docid rank score tag' (6 fields, integer rank, numeric score)"
_QRELS_FORMAT = "'qid 0 docid rel' (4 fields, integer rel)"


class TrecFormatError(ValueError):
    """A malformed line in a TREC file; the message names file, line and expected format."""


def _gzipped(path: str | os.PathLike[str]) -> bool:
    return os.fspath(path).endswith(".gz")


def _open(path: Path) -> TextIO:
    """``path`` opened as UTF-8 text, through gzip when it ends in ``.gz``."""
    if _gzipped(path):
        return gzip.open(path, "rt", encoding="utf-8")
    return path.open(encoding="utf-8")


def _lines(path: Path) -> Iterator[tuple[int, list[str]]]:
    with _open(path) as f:
        for lineno, line in enumerate(f, 1):
            if line.strip():
                yield lineno, line.split()


def _fail(path: Path, lineno: int, problem: str, expected: str) -> TrecFormatError:
    return TrecFormatError(f"{path}:{lineno}: {problem}; expected {expected}")


def read_run(path: str | os.PathLike[str]) -> Run:
    """Read a TREC run file, ranking each query by score (ties by docid, as :func:`rank`).

    The rank column is checked to be an integer but otherwise ignored, as by
    trec_eval. Blank lines are skipped.

    Parameters
    ----------
    path : str or os.PathLike
        The run file (gzip-compressed when it ends in ``.gz``).

    Returns
    -------
    Run
        Query id (file order) to ranking.

    Raises
    ------
    TrecFormatError
        On a malformed line or a docid listed twice for one query.
    """
    p = Path(path)
    scores: dict[str, dict[str, float]] = {}
    for lineno, fields in _lines(p):
        if len(fields) != 6:
            raise _fail(p, lineno, f"{len(fields)} fields", _RUN_FORMAT)
        qid, _, docid, rank_, score_, _ = fields
        try:
            int(rank_)
            score = float(score_)
        except ValueError:
            raise _fail(p, lineno, f"rank {rank_!r}, score {score_!r}", _RUN_FORMAT) from None
        per_query = scores.setdefault(qid, {})
        if docid in per_query:
            raise _fail(p, lineno, f"docid {docid!r} repeated for query {qid!r}", "unique")
        per_query[docid] = score
    try:
        return {qid: rank(s) for qid, s in scores.items()}
    except ValueError as e:
        raise TrecFormatError(f"{p}: {e}") from None


def read_qrels(path: str | os.PathLike[str]) -> Qrels:
    """Read a TREC qrels file into ``{qid: {docid: rel}}``, in file order.

    Parameters
    ----------
    path : str or os.PathLike
        The qrels file (gzip-compressed when it ends in ``.gz``).

    Returns
    -------
    Qrels
        Query id to judged unit ids and grades.

    Raises
    ------
    TrecFormatError
        On a malformed line or a docid judged twice for one query.
    """
    p = Path(path)
    qrels: Qrels = {}
    for lineno, fields in _lines(p):
        if len(fields) != 4:
            raise _fail(p, lineno, f"{len(fields)} fields", _QRELS_FORMAT)
        qid, _, docid, rel = fields
        try:
            grade = int(rel)
        except ValueError:
            raise _fail(p, lineno, f"rel {rel!r}", _QRELS_FORMAT) from None
        judged = qrels.setdefault(qid, {})
        if docid in judged:
            raise _fail(p, lineno, f"docid {docid!r} judged twice for query {qid!r}", "unique")
        judged[docid] = grade
    return qrels


def _check_token(kind: str, value: str) -> str:
    if not value or value != "".join(value.split()):
        raise ValueError(f"{kind} {value!r} is empty or holds whitespace; TREC files split on it")
    return value


def _write(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` atomically, gzip-compressed (no timestamp, no name) for a ``.gz`` path."""
    if not _gzipped(path):
        atomic_write(path, text)
        return
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0, filename="") as gz:
        gz.write(text.encode("utf-8"))
    atomic_write(path, buffer.getvalue())


def _score(score: float) -> str:
    value = float(score)
    if math.isnan(value):
        raise ValueError("cannot write a NaN score")
    return repr(value)


def write_run(run: Run, path: str | os.PathLike[str], tag: str = "hierret") -> None:
    """Write a run as a TREC run file, atomically, ranks 1.. in the run's order.

    Parameters
    ----------
    run : Run
        Rankings to write; scores are written exactly (``repr`` of the float).
    path : str or os.PathLike
        Target file; written to a temporary file beside it, then renamed over it;
        gzip-compressed when it ends in ``.gz``.
    tag : str, default "hierret"
        The run tag, last column.

    Raises
    ------
    ValueError
        On an id or tag that is empty or holds whitespace, or a NaN score.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "run.trec"
    >>> write_run({"q1": [("d2", 0.5), ("d1", 0.25)]}, p)
    >>> print(p.read_text(), end="")
    q1 Q0 d2 1 0.5 hierret
    q1 Q0 d1 2 0.25 hierret
    >>> read_run(p)
    {'q1': [('d2', 0.5), ('d1', 0.25)]}
    """
    _check_token("tag", tag)
    lines = [
        f"{_check_token('query id', qid)} Q0 {_check_token('unit id', uid)} {i} "
        f"{_score(score)} {tag}\n"
        for qid, ranking in run.items()
        for i, (uid, score) in enumerate(ranking, 1)
    ]
    _write(path, "".join(lines))


def write_qrels(qrels: Qrels, path: str | os.PathLike[str]) -> None:
    """Write qrels as a TREC qrels file, atomically.

    Parameters
    ----------
    qrels : Qrels
        Judgements to write.
    path : str or os.PathLike
        Target file; written to a temporary file beside it, then renamed over it;
        gzip-compressed when it ends in ``.gz``.

    Raises
    ------
    ValueError
        On an id that is empty or holds whitespace.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "qrels.txt"
    >>> write_qrels({"q1": {"d1": 1}}, p)
    >>> print(p.read_text(), end="")
    q1 0 d1 1
    >>> read_qrels(p)
    {'q1': {'d1': 1}}
    >>> write_qrels({"q1": {"d1": 1}}, p.with_suffix(".gz"))
    >>> read_qrels(p.with_suffix(".gz"))
    {'q1': {'d1': 1}}
    """
    lines = [
        f"{_check_token('query id', qid)} 0 {_check_token('unit id', uid)} {int(grade)}\n"
        for qid, judged in qrels.items()
        for uid, grade in judged.items()
    ]
    _write(path, "".join(lines))
