"""Record keys from table labels; figures saved; values glued and written."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import pytest

from hierret.figures import save
from hierret.record import publish, record_key, table_values
from hierret.report import check_markdown, load_results

matplotlib.use("Agg")


def test_record_key_keeps_case_and_drops_what_markers_cannot_hold() -> None:
    assert record_key("pyref", "dense", "all-MiniLM-L6-v2", "ndcg@10") == (
        "pyref_dense_all_MiniLM_L6_v2_ndcg10")
    assert record_key("", "floor", "pyref", "") == "floor_pyref"


def test_table_values_joins_row_labels_and_columns() -> None:
    quality = pd.DataFrame({"recall@5": [0.5, 0.25], "ndcg@10": [0.6, np.nan]},
                           index=pd.MultiIndex.from_tuples([("pyref", "dense", "all-MiniLM-L6-v2"),
                                                            ("pyref", "hybrid", "wordllama")]))
    assert table_values(quality) == {"pyref_dense_all_MiniLM_L6_v2_recall5": 0.5,
                                     "pyref_dense_all_MiniLM_L6_v2_ndcg10": 0.6,
                                     "pyref_hybrid_wordllama_recall5": 0.25}
    assert table_values(quality, "test", ["ndcg@10"]) == {
        "test_pyref_dense_all_MiniLM_L6_v2_ndcg10": 0.6}
    assert table_values(quality, "q", {"recall@5": "r"}) == {
        "q_pyref_dense_all_MiniLM_L6_v2_r": 0.5, "q_pyref_hybrid_wordllama_r": 0.25}


def test_table_values_keeps_ints_and_plain_numbers() -> None:
    sizes = pd.DataFrame({"questions": [157, 300], "units": [668, 1000],
                          "level": ["passages", "documents"], "share": [0.5, 1.0]},
                         index=["python", "scifact"])
    values = table_values(sizes, "", ["questions", "units", "share"])
    assert values == {"python_questions": 157, "python_units": 668, "python_share": 0.5,
                      "scifact_questions": 300, "scifact_units": 1000, "scifact_share": 1.0}
    assert [type(v) for v in values.values()] == [int, int, float] * 2
    series = pd.Series({"pyref": np.float32(0.25)})
    assert table_values(series, "floor") == {"floor_pyref": 0.25}
    assert type(table_values(series, "floor")["floor_pyref"]) is float


def test_table_values_refuses_labels_that_collide() -> None:
    with pytest.raises(ValueError, match="two cells give the key 'x_minilm_int8'"):
        table_values(pd.Series({"minilm-int8": 1.0, "minilm_int8": 2.0}), "x")


def test_save_figure_only_where_asked(tmp_path: Path) -> None:
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    save(fig, None, "a.png")
    save(fig, tmp_path / "figures", "a.png")
    path = tmp_path / "figures" / "a.png"
    assert path == tmp_path / "figures" / "a.png"
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    plt.close(fig)


def test_publish_writes_a_record_the_decisions_check_reads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    values = {"pyref_dense_all_MiniLM_L6_v2_ndcg10": 0.6022, "python_questions": 157}
    assert publish("dr9", values, {"seed": 0}, None) is None
    path = publish("dr9", values, {"seed": 0}, tmp_path)
    assert path == tmp_path / "dr9.json"
    record = json.loads(path.read_text())
    assert record["values"] == values
    assert record["identity"] == {"seed": 0}
    text = "0.602<!--@dr9.pyref_dense_all_MiniLM_L6_v2_ndcg10--> of 157<!--@dr9.python_questions-->"
    assert check_markdown(text, load_results(tmp_path)) == []
