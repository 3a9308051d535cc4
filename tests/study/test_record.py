"""One record-key rule; record values read off tables; figures saved; records published."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import pytest

from hierret.evaluation.stats import StatsSettings
from hierret.publish.figures import save
from hierret.publish.record import key, publish, table_values
from hierret.publish.report import check_markdown, load_results
from hierret.study.experiment import compare, compare_hits

matplotlib.use("Agg")


def test_key_is_one_rule_for_every_label() -> None:
    assert key("pyref", "dense", "all-MiniLM-L6-v2", "ndcg@10") == (
        "pyref_dense_all_minilm_l6_v2_ndcg10"
    )
    assert key("", "floor", "pyref", "") == "floor_pyref"
    assert key("scifact", "dense-e5+maxsim", "vs_first", "recall@5", "diff_low") == (
        "scifact_dense_e5_maxsim_vs_first_recall5_diff_low"
    )
    assert key("fused, hybrid", 900, "p_holm") == "fused_hybrid_900_p_holm"


def test_table_values_joins_row_labels_and_columns() -> None:
    quality = pd.DataFrame(
        {"recall@5": [0.5, 0.25], "ndcg@10": [0.6, np.nan]},
        index=pd.MultiIndex.from_tuples(
            [("pyref", "dense", "all-MiniLM-L6-v2"), ("pyref", "hybrid", "wordllama")]
        ),
    )
    assert table_values(quality) == {
        "pyref_dense_all_minilm_l6_v2_recall5": 0.5,
        "pyref_dense_all_minilm_l6_v2_ndcg10": 0.6,
        "pyref_hybrid_wordllama_recall5": 0.25,
    }
    assert table_values(quality, "test", columns=["ndcg@10"]) == {
        "test_pyref_dense_all_minilm_l6_v2_ndcg10": 0.6
    }
    assert table_values(quality, "q", columns={"recall@5": "r"}) == {
        "q_pyref_dense_all_minilm_l6_v2_r": 0.5,
        "q_pyref_hybrid_wordllama_r": 0.25,
    }


def test_rows_are_picked_and_renamed_and_counts_stay_int() -> None:
    passages = [True] * 30 + [False] * 10
    whole = [True] * 20 + [False] * 20
    t = compare_hits(
        {
            "passages": {f"q{i}": v for i, v in enumerate(passages)},
            "whole": {f"q{i}": v for i, v in enumerate(whole)},
        },
        baseline="whole",
    )
    values = table_values(t, "hit1_sec", ["passages", "whole"], {"hits": "", "rate": "rate"})
    values |= table_values(t, "hit1_sec", {"passages": ""}, ("n", "diff", "p", "only_arm"))
    assert values["hit1_sec_passages"] == 30
    assert type(values["hit1_sec_passages"]) is int  # a float column of counts
    assert values["hit1_sec_n"] == 40
    assert type(values["hit1_sec_only_arm"]) is int
    assert values["hit1_sec_passages_rate"] == pytest.approx(0.75)
    assert values["hit1_sec_diff"] == pytest.approx(0.25)
    assert isinstance(values["hit1_sec_p"], float)
    results = {"dr": {"values": values}}
    assert (
        check_markdown("30<!--@dr.hit1_sec_passages--> of 40<!--@dr.hit1_sec_n-->", results) == []
    )


def test_empty_cells_are_left_out_and_numbers_are_plain() -> None:
    rng = np.random.default_rng(0)
    scores = {
        a: {f"q{i}": float(v) for i, v in enumerate(rng.random(12))}
        for a in ("dense", "bm25", "hybrid")
    }
    t = compare(
        scores, baseline="dense", family=["bm25", "hybrid"], stats=StatsSettings(n_resamples=100)
    )
    values = table_values(t, "ndcg")
    assert not any(k.startswith("ndcg_dense_diff") for k in values)  # the baseline's own
    assert {f"ndcg_bm25_{c}" for c in ("diff", "diff_low", "diff_high", "p", "p_holm")} <= set(
        values
    )
    assert values["ndcg_hybrid_mean"] == pytest.approx(float(t.loc["hybrid", "mean"]))
    sizes = pd.DataFrame(
        {"questions": [157, 300], "share": [0.5, 1.0]}, index=["python", "scifact"]
    )
    assert [type(v) for v in table_values(sizes).values()] == [int, float] * 2
    series = pd.Series({"pyref": np.float32(0.25), "scifact": np.nan})
    assert table_values(series, "floor") == {"floor_pyref": 0.25}
    assert type(table_values(series, "floor")["floor_pyref"]) is float
    json.dumps(table_values(sizes))
    mixed = pd.DataFrame({"pyref": {"questions": 157, "level": "passages"}}).T  # object dtype
    assert table_values(mixed, columns=["questions"]) == {"pyref_questions": 157}
    assert type(table_values(mixed, columns=["questions"])["pyref_questions"]) is int


def test_a_template_orders_the_parts_and_takes_format_specs() -> None:
    table = pd.DataFrame(
        {"corpus": ["pyref", "qasper"], "w": [5, 10], "mean": [0.5, 0.25], "pooled": [3, 7]}
    )
    values = table_values(
        table, columns={"pooled": "pooled", "mean": ""}, template="{column}_{corpus}_{w:02d}"
    )
    assert values == {
        "pooled_pyref_05": 3,
        "pyref_05": 0.5,
        "pooled_qasper_10": 7,
        "qasper_10": 0.25,
    }
    indexed = table.set_index(["corpus", "w"])
    assert table_values(indexed, columns=["mean"], template="x_{w}_{corpus}") == {
        "x_5_pyref": 0.5,
        "x_10_qasper": 0.25,
    }


def test_mistakes_are_named() -> None:
    table = pd.DataFrame({"arm": ["a", "a"], "target": ["x", "y"], "mean": [1.0, 2.0]})
    with pytest.raises(ValueError, match=r"columns \['median'\] are not in the table"):
        table_values(table, columns=["median"])
    with pytest.raises(ValueError, match=r"rows \['no such arm'\] are not in the table"):
        table_values(table.set_index("target"), rows=["no such arm"])
    with pytest.raises(ValueError, match="names 'targte', not a field"):
        table_values(table, columns=["mean"], template="{arm}_{targte}")
    with pytest.raises(ValueError, match="two cells get the key 'a_mean'"):
        table_values(table, columns=["mean"], template="{arm}_{column}")
    with pytest.raises(ValueError, match="two cells get the key 'x_minilm_int8'"):
        table_values(pd.Series({"minilm-int8": 1.0, "minilm_int8": 2.0}), "x")
    with pytest.raises(ValueError, match="column 'target' holds 'x': a record holds numbers"):
        table_values(table.set_index("arm", append=True), columns=["target"])


def test_save_figure_only_where_asked(tmp_path: Path) -> None:
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    save(fig, None, "a.png")
    assert not list(tmp_path.iterdir())
    save(fig, tmp_path / "figures", "a.png")
    assert (tmp_path / "figures" / "a.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    plt.close(fig)


def test_publish_writes_a_record_the_decisions_check_reads(tmp_path: Path) -> None:
    values = {"pyref_dense_all_minilm_l6_v2_ndcg10": 0.6022, "python_questions": 157}
    publish("dr9", values, {"seed": 0}, None)
    assert not list(tmp_path.iterdir())
    publish("dr9", values, {"seed": 0}, tmp_path)
    record = json.loads((tmp_path / "dr9.json").read_text())
    assert record["values"] == values
    assert record["identity"] == {"seed": 0}
    text = "0.602<!--@dr9.pyref_dense_all_minilm_l6_v2_ndcg10--> of 157<!--@dr9.python_questions-->"
    assert check_markdown(text, load_results(tmp_path)) == []


@pytest.mark.parametrize("umask", [0o022, 0o002])
def test_records_and_figures_get_the_mode_open_gives_under_the_umask(
    tmp_path: Path, umask: int
) -> None:
    """A result record rewritten over a 0600 file, and a saved figure, get 0666 & ~umask
    (0644 under the usual 022), like any file `open()` writes, not a temporary file's 0600."""
    import os
    import stat

    import matplotlib.pyplot as plt

    old = os.umask(umask)
    try:
        (tmp_path / "dr9.json").write_text("{}")
        (tmp_path / "dr9.json").chmod(0o600)  # what an earlier writer left
        publish("dr9", {"n": 1}, {"seed": 0}, tmp_path)
        fig, _ = plt.subplots()
        save(fig, tmp_path, "f.png", show=False)
    finally:
        os.umask(old)
    want = 0o666 & ~umask
    assert stat.S_IMODE((tmp_path / "dr9.json").stat().st_mode) == want
    assert stat.S_IMODE((tmp_path / "f.png").stat().st_mode) == want
    assert json.loads((tmp_path / "dr9.json").read_text())["values"] == {"n": 1}
