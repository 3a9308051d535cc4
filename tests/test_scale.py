"""The embedding cost model: its formula on hand-computed inputs, its record, its page."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _scripts import load

from hierret.study.scale import (
    CostModel,
    efficiency,
    record_bytes,
    throughput_range,
    worker_throughput,
)

ROOT = Path(__file__).resolve().parent.parent
RECORD = ROOT / "data" / "results" / "cost-model.json"
CORPORA = ROOT / "data" / "scale" / "beir-corpora.json"


def test_the_formula_on_hand_computed_inputs() -> None:
    model = CostModel(
        startup_s=10.0, load_s=5.0, throughput=4.0, efficiency=0.5, write_s_per_text=0.01
    )
    # 10 + 5 + 1000 / (1 x 4 x 1) + 1000 x 0.01 = 275: one worker keeps all its pace
    assert model.seconds(1000, 1) == pytest.approx(275.0)
    # 10 + 5 + 1000 / (8 x 4 x 0.5) + 10 = 87.5
    assert model.seconds(1000, 8) == pytest.approx(87.5)
    assert efficiency(12.0, [20.0, 15.0]) == pytest.approx(0.6)  # the slower worker counts
    assert worker_throughput(30.0, cores=2, eff=0.75) == pytest.approx(20.0)
    assert worker_throughput(30.0, cores=1, eff=0.75) == pytest.approx(30.0)
    assert record_bytes(384) == 32 + 384 * 4 + 4 + 12
    assert record_bytes(256) == 1072
    assert throughput_range({"a_pps": 2.0, "b_pps": 7.0, "c_pps": 1.0}, ["a", "b"]) == (2.0, 7.0)
    with pytest.raises(ValueError, match="workers must be at least 1"):
        model.seconds(10, 0)
    with pytest.raises(ValueError, match="must be positive"):
        CostModel(0.0, 0.0, 0.0, 1.0, 0.0)
    with pytest.raises(ValueError, match="no throughput among"):
        throughput_range({"a_pps": 1.0}, ["z"])


@pytest.fixture(scope="module")
def record() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(RECORD.read_text(encoding="utf-8"))
    return loaded


def test_the_record_follows_the_formula_and_the_cited_sizes(record: dict[str, Any]) -> None:
    v = record["values"]
    corpora = json.loads(CORPORA.read_text(encoding="utf-8"))
    assert "Thakur" in corpora["source"]
    assert len(corpora["corpora"]) == 18
    assert v["msmarco_texts"] == 8_841_823
    assert v["beir_texts"] == sum(c["passages"] for c in corpora["corpora"])
    eff = v["efficiency_minilm_int8"]
    for enc in ("minilm", "minilm_int8", "e5_small", "wordllama"):
        assert v[f"{enc}_pps_low"] <= v[f"{enc}_pps_high"]
        model = CostModel(
            v["startup_s"],
            v[f"{enc}_load_s"],
            v[f"{enc}_pps_low"] / (v["cores"] * eff),
            eff,
            v["write_s_per_text"],
        )
        for w in (1, 2, 8, 32):
            hours = v[f"{enc}_msmarco_{w}w_slow_h"]
            assert hours == pytest.approx(model.seconds(8_841_823, w) / 3600)
        bytes_ = v["msmarco_texts"] * record_bytes(v[f"{enc}_dimension"])
        assert v[f"{enc}_msmarco_gb"] == pytest.approx(bytes_ / 1e9)
    # at the records' own machine size the model gives the records' own rate back
    two = v["minilm_int8_msmarco_2w_fast_h"] * 3600
    fixed = v["startup_s"] + v["minilm_int8_load_s"] + 8_841_823 * v["write_s_per_text"]
    assert 8_841_823 / (two - fixed) == pytest.approx(v["minilm_int8_pps_high"])


def test_the_timing_page_shows_the_record(record: dict[str, Any], tmp_path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    page = load(ROOT / "docs" / "timing_page.py", "timing_page")
    v = record["values"]
    text = page.page(None, tmp_path / "figures", None, record)
    assert "## Embedding past one machine: the cost model" in text
    assert f"**start-up** {v['startup_s']:.1f} s" in text
    fast, slow = (page._duration(v[f"e5_small_msmarco_1w_{p}_h"]) for p in ("fast", "slow"))
    marco = text[text.index("**MS MARCO passages** (8,841,823 texts)") :]
    marco = marco[: marco.index("\n\n", marco.index("|---"))]  # its table, one row per encoder
    assert f"| e5-small (4-bit) | {fast}–{slow} |" in marco
    assert f"| {v['wordllama_msmarco_gb']:,.1f} |" in marco
    assert marco.count("\n| ") == 5  # the header and one row per encoder
    assert "Embedding past one machine" not in page.page(None, tmp_path / "none")
    assert [page._duration(h) for h in (0.5, 3.25, 72.0)] == ["30 min", "3.2 h", "3.0 days"]
