"""Record values picked from tables, figures saved, records written: what a study publishes."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from hierret.experiment import compare, compare_hits
from hierret.figures import save
from hierret.publish import publish_record, table_values
from hierret.report import check_markdown, load_results

matplotlib.use("Agg")


def _hits() -> pd.DataFrame:
    passages = [True] * 30 + [False] * 10
    whole = [True] * 20 + [False] * 20
    return compare_hits({"passages": {f"q{i}": v for i, v in enumerate(passages)},
                         "whole": {f"q{i}": v for i, v in enumerate(whole)}}, baseline="whole")


def test_old_record_keys_from_a_hit_table() -> None:
    t = _hits()
    values = table_values(t, "hit1_sec", ["passages", "whole"],
                          {"hits": "", "rate": "rate", "low": "low", "high": "high"})
    values |= table_values(t, "hit1_sec", {"passages": ""},
                           ("n", "diff", "diff_low", "diff_high", "p", "only_arm", "only_base"))
    assert values["hit1_sec_passages"] == 30
    assert type(values["hit1_sec_passages"]) is int
    assert values["hit1_sec_whole"] == 20
    assert values["hit1_sec_n"] == 40
    assert type(values["hit1_sec_only_arm"]) is int
    assert values["hit1_sec_passages_rate"] == pytest.approx(0.75)
    assert values["hit1_sec_diff"] == pytest.approx(0.25)
    assert isinstance(values["hit1_sec_p"], float)
    assert not any(k.startswith("hit1_sec_whole_diff") for k in values)
    # a count quotes without decimals in DECISIONS.md, as the record's int says
    results = {"dr": {"values": values}}
    assert check_markdown("30<!--@dr.hit1_sec_passages--> of 40<!--@dr.hit1_sec_n-->",
                          results) == []


def test_defaults_pick_the_statistics_and_skip_empty_cells() -> None:
    rng = np.random.default_rng(0)
    scores = {a: {f"q{i}": float(v) for i, v in enumerate(rng.random(12))}
              for a in ("dense", "bm25", "hybrid")}
    t = compare(scores, baseline="dense", family=["bm25", "hybrid"], n_resamples=100)
    values = table_values(t, "ndcg")
    assert sorted(k for k in values if k.startswith("ndcg_dense")) == [
        "ndcg_dense_high", "ndcg_dense_low", "ndcg_dense_mean"]
    assert {f"ndcg_bm25_{c}" for c in ("diff", "diff_low", "diff_high", "p", "p_holm")} <= set(
        values)
    assert "ndcg_dense_n" not in values  # counts only when asked for
    assert values["ndcg_hybrid_mean"] == pytest.approx(float(t.loc["hybrid", "mean"]))
    renamed = table_values(t, "sweep", columns={"mean": "ndcg", "nope": "x"})
    assert sorted(renamed) == ["sweep_bm25_ndcg", "sweep_dense_ndcg", "sweep_hybrid_ndcg"]
    with pytest.raises(KeyError):
        table_values(t, "ndcg", ["no such arm"])


def test_integer_columns_stay_int() -> None:
    t = pd.DataFrame({"over_window": [3, 7], "over_window_share": [0.1, 0.2]}, index=[600, 900])
    values = table_values(t, "", {900: ""}, ["over_window", "over_window_share"])
    assert values == {"over_window": 7, "over_window_share": 0.2}
    assert type(values["over_window"]) is int
    assert table_values(t, "sweep", columns={"over_window_share": "over_window"}) == {
        "sweep_600_over_window": 0.1, "sweep_900_over_window": 0.2}


def test_save_figure_and_publish_record(tmp_path: Path) -> None:
    fig, _ = plt.subplots()
    save(fig, None, "nothing.png")
    save(fig, tmp_path / "figures", "f.png")
    assert (tmp_path / "figures" / "f.png").stat().st_size > 0
    publish_record("drx", {"a": 1}, {"corpus": "c"}, None)
    assert not (tmp_path / "results").exists()
    publish_record("drx", {"a": 1, "b": 0.5}, {"corpus": "c"}, tmp_path / "results")
    path = tmp_path / "results" / "drx.json"
    assert load_results(tmp_path / "results")["drx"]["values"] == {"a": 1, "b": 0.5}
    assert json.loads(path.read_text())["identity"]["corpus"] == "c"

