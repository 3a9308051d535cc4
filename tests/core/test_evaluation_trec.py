"""TREC run and qrels files: round trips, atomic writes, clear errors."""

from __future__ import annotations

import os
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hierret.evaluation import (
    Qrels,
    Run,
    TrecFormatError,
    rank,
    read_qrels,
    read_run,
    write_qrels,
    write_run,
)

_ids = st.text("abcXYZ019#._-:/", min_size=1, max_size=8)
_scores = st.floats(allow_nan=False, width=64)


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(_ids, st.dictionaries(_ids, _scores, max_size=6), max_size=5))
def test_run_round_trip(
    tmp_path_factory: pytest.TempPathFactory, raw: dict[str, dict[str, float]]
) -> None:
    run: Run = {qid: rank(scores) for qid, scores in raw.items() if scores}
    path = tmp_path_factory.mktemp("run") / "run.trec"
    write_run(run, path, tag="bm25")
    assert read_run(path) == run  # exact scores, same order, same queries


@settings(max_examples=100, deadline=None)
@given(
    st.dictionaries(
        _ids, st.dictionaries(_ids, st.integers(-1, 3), min_size=1, max_size=6), max_size=5
    )
)
def test_qrels_round_trip(tmp_path_factory: pytest.TempPathFactory, qrels: Qrels) -> None:
    path = tmp_path_factory.mktemp("qrels") / "qrels.txt"
    write_qrels(qrels, path)
    back = read_qrels(path)
    assert back == qrels
    assert list(back) == list(qrels)


def test_read_run_ranks_by_score_like_trec_eval(tmp_path: Path) -> None:
    path = tmp_path / "run.trec"
    path.write_text("q1 Q0 b 1 1.0 t\n\nq1 Q0 c 2 3 t\nq1 Q0 a 3 1.0 t\n")
    assert read_run(path) == {"q1": [("c", 3.0), ("b", 1.0), ("a", 1.0)]}  # ties: ids descending


def test_numpy_scores_are_written_as_plain_floats(tmp_path: Path) -> None:
    write_run({"q": [("a", np.float32(0.5)), ("b", np.float64(0.25))]}, tmp_path / "r")  # type: ignore[list-item]
    assert (tmp_path / "r").read_text() == "q Q0 a 1 0.5 hierret\nq Q0 b 2 0.25 hierret\n"


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("q1 Q0 a 1 0.5\n", r"run\.trec:1: 5 fields; expected 'qid Q0 docid rank score tag'"),
        ("q1 Q0 a 1 0.5 t\nq1 Q0 b one 0.4 t\n", r"run\.trec:2: rank 'one'"),
        ("q1 Q0 a 1 high t\n", r"run\.trec:1: rank '1', score 'high'"),
        ("q1 Q0 a 1 0.5 t\nq1 Q0 a 2 0.4 t\n", r"run\.trec:2: docid 'a' repeated for query 'q1'"),
        ("q1 Q0 a 1 nan t\n", r"run\.trec: cannot rank NaN"),
    ],
)
def test_malformed_run_lines(tmp_path: Path, text: str, match: str) -> None:
    (tmp_path / "run.trec").write_text(text)
    with pytest.raises(TrecFormatError, match=match):
        read_run(tmp_path / "run.trec")


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("q1 0 a\n", r"qrels:1: 3 fields; expected 'qid 0 docid rel'"),
        ("q1 0 a 1\nq1 0 b yes\n", r"qrels:2: rel 'yes'"),
        ("q1 0 a 1\nq1 0 a 0\n", r"qrels:2: docid 'a' judged twice for query 'q1'"),
    ],
)
def test_malformed_qrels_lines(tmp_path: Path, text: str, match: str) -> None:
    (tmp_path / "qrels").write_text(text)
    with pytest.raises(TrecFormatError, match=match):
        read_qrels(tmp_path / "qrels")


def test_ids_with_whitespace_or_nan_scores_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="whitespace"):
        write_run({"q 1": [("a", 1.0)]}, tmp_path / "r")
    with pytest.raises(ValueError, match="whitespace"):
        write_qrels({"q": {"": 1}}, tmp_path / "q")
    with pytest.raises(ValueError, match="NaN"):
        write_run({"q": [("a", float("nan"))]}, tmp_path / "r")
    assert os.listdir(tmp_path) == []


def test_write_is_atomic(tmp_path: Path) -> None:
    path = tmp_path / "run.trec"
    write_run({"q": [("old", 1.0)]}, path)
    failing = mock.patch("os.replace", side_effect=OSError("disk gone"))
    with failing, pytest.raises(OSError, match="disk gone"):
        write_run({"q": [("new", 1.0)]}, path)
    assert read_run(path) == {"q": [("old", 1.0)]}  # old file intact
    assert os.listdir(tmp_path) == ["run.trec"]  # temporary file cleaned up
    write_run({"q": [("new", 1.0)]}, path)
    assert read_run(path) == {"q": [("new", 1.0)]}
    assert os.listdir(tmp_path) == ["run.trec"]
