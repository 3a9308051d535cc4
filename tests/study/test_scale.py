"""The embedding cost model: its formula on hand-computed inputs, its record, its page."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _scripts import load

from hierret.study.scale import (
    CostModel,
    distinct_corpora,
    efficiency,
    passages,
    record_bytes,
    throughput_range,
    worker_throughput,
)

ROOT = Path(__file__).resolve().parents[2]
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


def test_the_driver_term_passages_and_one_corpus_once() -> None:
    # the driver holds one job's texts whatever the workers; shards split them, the
    # largest share counting: ceil(1001 / 4) = 251 texts
    assert CostModel.driver_bytes(1000, bytes_per_text=2168.0) == 2_168_000.0
    assert CostModel.driver_bytes(1001, bytes_per_text=2.0, shards=4) == 502.0
    with pytest.raises(ValueError, match="shards must be at least 1"):
        CostModel.driver_bytes(10, 1.0, shards=0)
    with pytest.raises(ValueError, match="must not be negative"):
        CostModel.driver_bytes(10, -1.0)
    assert passages(5183, 12213 / 5183) == 12213
    assert passages(3, 1.5) == 4  # 4.5 rounds to the even 4
    with pytest.raises(ValueError, match="per_document must be positive"):
        passages(10, 0.0)
    suite = [
        {"name": "FEVER", "documents": 10},
        {"name": "Climate-FEVER", "documents": 11, "same_corpus_as": "FEVER"},
        {"name": "NQ", "documents": 5},
    ]
    assert [c["name"] for c in distinct_corpora(suite)] == ["FEVER", "NQ"]
    with pytest.raises(ValueError, match="which is not among the corpora"):
        distinct_corpora([{"name": "A", "same_corpus_as": "B"}])


@pytest.fixture(scope="module")
def record() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(RECORD.read_text(encoding="utf-8"))
    return loaded


def test_the_record_follows_the_formula_and_the_cited_sizes(record: dict[str, Any]) -> None:
    v = record["values"]
    corpora = json.loads(CORPORA.read_text(encoding="utf-8"))
    assert "Thakur" in corpora["source"]
    assert len(corpora["corpora"]) == 18
    assert v["msmarco_texts"] == v["msmarco_documents"] == 8_841_823  # passages, one each
    # BEIR counted in passages (SciFact's measured rate), FEVER's corpus once
    ppd = v["passages_per_document"]
    assert ppd == pytest.approx(v["scifact_passages"] / v["scifact_documents"])
    assert v["scifact_documents"] == 5183
    assert 2 < ppd < 3
    suite = [c for c in corpora["corpora"] if c["name"] != "Climate-FEVER"]
    assert v["beir_corpora_counted"] == len(suite) == 17
    assert v["beir_documents"] == sum(c["documents"] for c in suite)
    assert v["beir_texts"] == sum(round(c["documents"] * ppd) for c in suite)
    assert v["beir_public_texts"] == sum(round(c["documents"] * ppd) for c in suite if c["public"])
    assert v["beir_texts"] > 2 * v["beir_documents"]
    # the driver term: one job's peak, from the measured bytes a passage; streamed (keys
    # and locators, the BEIR path) against the texts held in the driver
    assert v["driver_peak_b_per_passage"] > v["driver_held_b_per_passage"] > 0
    per, fixed = v["driver_streamed_b_per_passage"], v["driver_streamed_fixed_b"]
    assert 0 < per < v["driver_held_b_per_passage"] / 4
    sizes = range(v["driver_streamed_sizes"])
    assert [v[f"driver_streamed_{i}_documents"] for i in sizes][-1] == v["scifact_documents"]
    for i in sizes:  # the bound is above every measured stage's peak
        n = v[f"driver_streamed_{i}_passages"]
        assert per * n + fixed >= v[f"driver_streamed_{i}_peak_b_per_passage"] * n
    for corpus in ("msmarco", "beir", "beir_public"):
        peak = v[f"{corpus}_texts"] * v["driver_peak_b_per_passage"] / 1e9
        assert v[f"{corpus}_driver_gb_in_driver"] == pytest.approx(peak)
        streamed = (v[f"{corpus}_texts"] * per + fixed) / 1e9
        assert v[f"{corpus}_driver_gb"] == pytest.approx(streamed)
    ident = record["identity"]
    assert ident["measured_workers"] == [1, 2]
    assert any("beyond 2 workers" in a for a in ident["assumed"])
    assert "not measured" in ident["gpu"]
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
    assert f"**driver memory** {v['driver_peak_b_per_passage']:,.0f} B a passage" in text
    assert f"streamed driver at {v['driver_streamed_b_per_passage']:,.0f} B a passage" in text
    assert "| 1 worker | 2 workers | 8 workers † | 32 workers † |" in text
    assert "Measured here:" in text
    assert "Assumed:" in text
    assert "A GPU is not measured" in text
    fast, slow = (page._duration(v[f"e5_small_msmarco_1w_{p}_h"]) for p in ("fast", "slow"))
    marco = text[text.index("**MS MARCO passages** (8,841,823 texts, from 8,841,823") :]
    marco = marco[: marco.index("\n\n", marco.index("|---"))]  # its table, one row per encoder
    assert f"| e5-small (4-bit) | {fast}–{slow} |" in marco
    assert f"| {v['wordllama_msmarco_gb']:,.1f} | {v['msmarco_driver_gb']:,.1f} |" in marco
    assert marco.count("\n| ") == 5  # the header and one row per encoder
    assert "Embedding past one machine" not in page.page(None, tmp_path / "none")
    assert [page._duration(h) for h in (0.5, 3.25, 72.0)] == ["30 min", "3.2 h", "3.0 days"]


def test_the_record_when_a_local_ray_cannot_start(record: dict[str, Any]) -> None:
    script = load(ROOT / "docs" / "cost_model.py", "cost_model_script")
    from hierret.publish.report import load_results

    def runs(one: float, two: float) -> dict[str, Any]:
        return {
            "one": {"encode_s": one, "encode_cpu_s": one},
            "two": [{"encode_s": two, "encode_cpu_s": two}] * 2,
        }

    measured = {
        "texts": 128,
        "efficiency": {"minilm-int8": runs(8.0, 10.0), "hash": runs(1.0, 1.0)},
        "ray": {
            "local_hash_s": 0.2,
            "local_minilm-int8_s": 100.0,
            "ray_failed": "Exception: The current node timed out during startup.",
            "ray_failed_after_s": 133.0,
        },
        "write_s_per_text": 4e-5,
        "driver": {
            "corpus": "scifact",
            "documents": 10,
            "passages": 25,
            "stages": [["passage texts", 2500], [script.RAY_RECEIVES, 1000]],
        },
        "load": {n: {"load_s": 1.0, "dimension": 384} for n in script.ENCODERS},
    }
    records = load_results(ROOT / "data" / "results")
    corpora = json.loads(CORPORA.read_text(encoding="utf-8"))
    earlier = record["values"]
    v = script.values_from(measured, records, corpora, earlier)
    assert v["ray_measured"] == 0
    assert v["ray_init_s"] == earlier["ray_init_s"]
    base = earlier.get("earlier_local_hash_s", earlier["local_hash_s"])
    assert v["startup_s"] == pytest.approx(earlier["ray_init_s"] + earlier["ray_hash_2_s"] - base)
    assert v["local_hash_s"] == 0.2  # the local runs measured now are kept
    assert v["efficiency_minilm_int8"] == pytest.approx(0.8)
    assert v["passages_per_document"] == 2.5
    assert v["driver_peak_b_per_passage"] == 100.0
    assert v["driver_held_b_per_passage"] == 40.0
    with pytest.raises(RuntimeError, match="no earlier cost_model record holds Ray's terms"):
        script.values_from(measured, records, corpora, None)
