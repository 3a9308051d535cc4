"""The benchmark page (docs/bench_page.py) and the record it reads (data/results/bench.json)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _scripts import load

ROOT = Path(__file__).resolve().parents[2]
RECORD = ROOT / "data" / "results" / "bench.json"


page = load(ROOT / "docs" / "bench_page.py", "bench_page")
run_all = load(ROOT / "tests" / "benchmarks" / "run_all.py", "bench_run_all")


def test_without_a_record_the_page_says_how_to_make_one(tmp_path: Path) -> None:
    out = tmp_path / "bench.md"
    assert page.main(["--out", str(out), "--results", str(tmp_path)]) == 0
    text = out.read_text(encoding="utf-8")
    assert "nox -s bench -- --record" in text
    assert not (tmp_path / page.FIGURE).exists()


@pytest.mark.skipif(not RECORD.exists(), reason="no bench record committed")
def test_the_committed_record_renders_every_ratio_and_its_figure(tmp_path: Path) -> None:
    record = json.loads(RECORD.read_text(encoding="utf-8"))
    values = record["values"]
    assert record["name"] == "bench"
    assert all(k == run_all.key(k) for k in values), (
        "every key is made by hierret.publish.record.key"
    )
    out = tmp_path / "bench.md"
    page.main(["--out", str(out), "--results", str(RECORD.parent)])
    text = out.read_text(encoding="utf-8")
    assert (tmp_path / page.FIGURE).stat().st_size > 0
    for row in page._rows(values):
        assert row.label in text
    assert "bare SentenceTransformer.encode" in text
    assert f"{values['encode_path_warm_model_calls']} model calls" in text
    for backend in ("minilm", "minilm-int8", "e5-small", "wordllama"):
        assert f"| `{backend}` |" in text


@pytest.mark.skipif(not RECORD.exists(), reason="no bench record committed")
def test_a_missing_value_is_named(tmp_path: Path) -> None:
    record = json.loads(RECORD.read_text(encoding="utf-8"))
    del record["values"]["encode_path_ratio_vs_bare"]
    with pytest.raises(KeyError, match="encode_path_ratio_vs_bare"):
        page.page(record, tmp_path / page.FIGURE)


def test_gather_keys_every_number_by_its_path(tmp_path: Path) -> None:
    bench = {
        "bm25": {"results": [{"analyzer": "english", "speedup": 90.0, "n_docs": 5}]},
        "metrics": {"ratio_vs_ranx": 0.5},
        "speed": {"dense": {"faiss": {"min_s": 1.0}}},
        "peak": {"fp32_peak_gflops": 100.0},
        "encode": {"backends": {"minilm-int8": {"pps": 3.0, "identity": "x"}}},
    }
    for name, data in bench.items():
        (tmp_path / f"{name}.json").write_text(json.dumps(data), encoding="utf-8")
    values, described = run_all.gather(tmp_path)
    assert values == {
        "bm25_english_speedup": 90.0,
        "bm25_english_n_docs": 5,
        "metrics_ratio_vs_ranx": 0.5,
        "speed_dense_faiss_min_s": 1.0,
        "peak_fp32_peak_gflops": 100.0,
        "encode_backends_minilm_int8_pps": 3.0,
    }
    assert described == {"encoders": {"minilm-int8": "x"}, "arithmetic": {}}


def test_each_engine_is_a_fraction_of_its_arithmetics_peak(tmp_path: Path) -> None:
    backend = {"pps": 2.0, "identity": "x", "tokens_mean": 200.0, "gflop_per_text": 4.0}
    bench = {
        "bm25": {"results": []},
        "metrics": {},
        "speed": {},
        "peak": {"fp32_peak_gflops": 100.0, "int8_peak_gops": 400.0, "tokens": 4096.0,
                 "threads": 2},
        "encode": {"backends": {
            "minilm": {**backend, "gflops": 8.0, "arithmetic": "fp32"},
            "e5-small": {**backend, "gflops": 8.0, "arithmetic": "int8"},
            "wordllama": {"pps": 900.0, "identity": "w"},
        }, "passages": {  # the same abstracts cut at 900 characters: shorter texts
            "e5-small": {**backend, "pps": 5.0, "tokens_mean": 100.0, "gflop_per_text": 2.0,
                         "gflops": 10.0, "arithmetic": "int8"},
        }},
    }  # fmt: skip
    for name, data in bench.items():
        (tmp_path / f"{name}.json").write_text(json.dumps(data), encoding="utf-8")
    values, described = run_all.gather(tmp_path)
    assert values["encode_backends_minilm_fraction_of_peak"] == pytest.approx(0.08)
    assert values["encode_backends_e5_small_fraction_of_peak"] == pytest.approx(0.02)
    assert "encode_backends_wordllama_fraction_of_peak" not in values
    assert described["arithmetic"] == {"minilm": "fp32", "e5-small": "int8"}
    rows = page.efficiency_table(values, described)
    assert "| `minilm` | whole abstracts | 2.0 | 200 | 4.00 | 8.0 | fp32 | 8.0% | 8.0% |" in rows
    assert any(
        r.startswith("| `e5-small` | whole") and r.endswith("| int8 | 2.0% | 8.0% |") for r in rows
    )
    assert values["encode_passages_e5_small_fraction_of_peak"] == pytest.approx(0.025)
    assert "| `e5-small` | passages | 5.0 | 100 | 2.00 | 10.0 | int8 | 2.5% | 10% |" in rows
    assert not any(r.startswith("| `minilm` | passages") for r in rows)  # not measured
    assert any("fp32 100 GFLOP/s, int8 400 GOP/s" in r for r in rows)
    assert page.efficiency_table({}, described) == []  # a record from before: no table


@pytest.mark.skipif(not RECORD.exists(), reason="no bench record committed")
def test_a_warm_run_that_calls_the_model_misses_its_goal() -> None:
    values = dict(json.loads(RECORD.read_text(encoding="utf-8"))["values"])
    values["encode_path_warm_model_calls"] = 1
    row = next(line for line in page.ratio_table(values) if "warm cache" in line)
    assert "| **no** |" in row
    assert "1 model calls" in row


def _agreement(maxabs: float, set_differs: int) -> dict:
    g = {"units": 668, "units_cos_min": 0.99994, "units_cos_mean": 0.99998, "units_maxabs": maxabs,
         "questions": 157, "questions_cos_min": 0.99993, "questions_cos_mean": 0.99996,
         "questions_maxabs": maxabs / 2, "top10_set_differs": set_differs,
         "top10_order_differs": set_differs}  # fmt: skip
    values = {f"python_reference_{k}": x for k, x in g.items()}
    return {"values": values, "identity": {"load_1min_at_start": 0.5}, "machine": {"cpu": "X"}}


@pytest.mark.parametrize(
    ("maxabs", "differs", "verdict"),
    [(0.003, 28, "**not within** it (the largest"), (0.001, 3, "**not within** it, and some"),
     (0.001, 0, "**within** it, and every top 10 is identical")],
)  # fmt: skip
def test_the_fast_e5_path_is_judged_against_dr002s_variation(
    maxabs: float, differs: int, verdict: str
) -> None:
    dr002 = {"values": {"variation_e5_small_cpu_maxabs": 0.0015}}
    text = "\n".join(page.agreement_table(_agreement(maxabs, differs), dr002))
    assert "| Python reference: 668 texts, 157 questions | 0.999940 (0.999980) |" in text
    assert f"| {maxabs:.4f} | {differs}, {differs} |" in text
    assert f"{maxabs:.4f}, is {verdict}" in text
    assert "0.0015" in text
    without = "\n".join(page.agreement_table(_agreement(maxabs, differs), None))
    assert "cannot say" in without
    assert "**" not in without
    assert page.agreement_table(None, dr002) == []


def test_the_agreement_record_keys_every_number_by_corpus() -> None:
    agreement = load(ROOT / "tests" / "benchmarks" / "e5_agreement.py", "e5_agreement")
    row = {"units": 3, "level": "passage", "units_cos_min": 0.5, "ok": True}
    assert agreement.record_values({"python-reference": row}) == {
        "python_reference_units": 3,
        "python_reference_units_cos_min": 0.5,
    }
