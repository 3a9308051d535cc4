"""The numbers check as a fresh machine meets it: new times pass, a moved finding fails.

`nox -s reproduce` compares the run's records with DECISIONS.md and README.md
(docs/check_decisions.py). A run on another machine, or on a loaded one,
re-measures every machine fact (throughput, latency, run-to-run variation,
wall time) and, on an empty cache, its timing record is a cold run's: none of
that may fail the main command. A finding that moves by one unit of its last
published digit must.
"""

from __future__ import annotations

import json
import re
import shutil
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from hierret.publish.report import _MARKER, check_markdown, facts_of, format_value, load_results

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "data" / "results"
PAGES = ("DECISIONS.md", "README.md")


def _check_decisions() -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "check_decisions", ROOT / "docs" / "check_decisions.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _other_machine(value: Any) -> Any:
    """A different measurement of the same thing: every machine fact changes."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return value
    if isinstance(value, int):
        return value * 3 + 7
    return value * 2.7 + 0.013


def _fresh_run(tmp_path: Path) -> Path:
    """Copies of the committed records as a cold run on another CPU would write them."""
    run = tmp_path / "run"
    shutil.copytree(RESULTS, run)
    cold = json.loads((RESULTS / "timing-cold.json").read_text(encoding="utf-8"))
    for file in run.glob("*.json"):
        record = json.loads(file.read_text(encoding="utf-8"))
        if record["name"] == "timing":  # a first run on an empty cache: a cold run's times
            record["values"] = {k: _other_machine(v) for k, v in cold["values"].items()}
            record["facts"] = sorted(record["values"])
        for k in record.get("facts", []):
            record["values"][k] = _other_machine(record["values"][k])
        record["machine"] = {**record["machine"], "cpu": "Another CPU", "cpu_flags": ["avx2"]}
        file.write_text(json.dumps(record), encoding="utf-8")
    return run


def _one_unit(number: str) -> Decimal:
    """One unit of the last digit of a published number ('0.984' -> 0.001, '12.3%' -> 0.001)."""
    text = number.replace(",", "").replace("−", "-").rstrip("%")
    mantissa, _, exponent = text.lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    unit = Decimal(1).scaleb(-decimals + (int(exponent) if exponent else 0))
    return unit / 100 if number.endswith("%") else unit


def test_every_record_says_which_values_are_machine_facts() -> None:
    records = load_results(RESULTS)
    for name, record in records.items():
        assert set(record["facts"]) <= set(record["values"]), name
    assert set(records["timing"]["facts"]) == set(records["timing"]["values"])
    assert records["dr005"]["facts"]
    assert records["dr003"]["facts"]
    assert records["dr002"]["facts"]
    # costs are facts, the findings beside them are not
    assert "dr005.cost_plain_ms_per_passage" in facts_of(records)
    assert "dr005.cost_plain_passages" not in facts_of(records)
    decisions = {n: r for n, r in records.items() if n.startswith("dr")}
    assert not any(re.search(r"ndcg|_p_holm|_diff", k) for k in facts_of(decisions))


def test_a_fresh_machine_with_other_times_passes(tmp_path: Path) -> None:
    run = _fresh_run(tmp_path)
    changed = load_results(run)
    assert (
        changed["dr005"]["values"]["cost_plain_ms_per_passage"]
        != (load_results(RESULTS)["dr005"]["values"]["cost_plain_ms_per_passage"])
    )
    code = _check_decisions().main(["--results", str(run), "--reference", str(RESULTS)])
    assert code == 0


def test_the_site_shows_this_runs_facts_beside_the_reference(tmp_path: Path) -> None:
    run = _fresh_run(tmp_path)
    out = tmp_path / "DECISIONS.md"
    code = _check_decisions().main(
        ["--results", str(run), "--reference", str(RESULTS), "--site-copy", str(out)]
    )
    assert code == 0
    value = load_results(run)["dr005"]["values"]["cost_plain_ms_per_passage"]
    assert f"(this run: {format_value(value, '.0f')})" in out.read_text(encoding="utf-8")


@pytest.mark.parametrize("page", PAGES)
def test_every_finding_moved_by_one_unit_fails(tmp_path: Path, page: str) -> None:
    reference = load_results(RESULTS)
    run = load_results(_fresh_run(tmp_path))
    facts = facts_of(reference)
    text = (ROOT / page).read_text(encoding="utf-8")
    findings = [m for m in _MARKER.finditer(text) if m["key"] not in facts]
    assert findings or page == "README.md"
    for m in findings:
        name, _, field = m["key"].partition(".")
        values = run[name]["values"]
        old = values[field]
        step = _one_unit(m["num"])
        new: Any = old + int(step) if isinstance(old, int) else float(Decimal(repr(old)) + step)
        assert format_value(new, m["fmt"]) != m["num"].replace("−", "-"), m["key"]
        values[field] = new
        try:
            problems = check_markdown(text, run, reference)
        finally:
            values[field] = old
        assert any(p.startswith(f"{m['key']}:") for p in problems), m["key"]


def test_a_machine_fact_must_be_labelled_as_the_reference_machines() -> None:
    results = {"dr": {"values": {"ms": 54, "n": 3}, "facts": ["ms"]}}
    assert check_markdown("On the reference machine it took 54<!--@dr.ms--> ms.", results) == []
    problems = check_markdown("It took 54<!--@dr.ms--> ms over 3<!--@dr.n--> runs.", results)
    assert len(problems) == 1
    assert "reference machine" in problems[0]


def test_a_moved_reference_fact_still_fails() -> None:
    """The reference record is the committed one: the text must quote it."""
    reference = {"dr": {"values": {"ms": 54}, "facts": ["ms"]}}
    run = {"dr": {"values": {"ms": 80}, "facts": ["ms"]}}
    text = "On the reference machine, 50<!--@dr.ms--> ms."
    assert check_markdown(text, run, reference) == [
        "dr.ms: the text says '50', the reference record says '54'"
    ]


def test_adopting_a_runs_findings_keeps_the_reference_machines_facts(tmp_path: Path) -> None:
    run = _fresh_run(tmp_path)
    record = json.loads((run / "dr005.json").read_text(encoding="utf-8"))
    finding = next(k for k in record["values"] if k not in record["facts"])
    record["values"][finding] = 12345
    quoted = (ROOT / "DECISIONS.md").read_text(encoding="utf-8")
    # a fact this run no longer measures (one the text does not quote)
    dropped = next(k for k in record["facts"] if f"@dr005.{k}" not in quoted)
    del record["values"][dropped]
    (run / "dr005.json").write_text(json.dumps(record), encoding="utf-8")
    reference = tmp_path / "reference"
    shutil.copytree(RESULTS, reference)
    pages = [tmp_path / "DECISIONS.md"]
    shutil.copy(ROOT / "DECISIONS.md", pages[0])
    args = ["--results", str(run), "--reference", str(reference), "--file", str(pages[0])]
    assert _check_decisions().main([*args, "--update", "--keep-reference-facts"]) == 0
    adopted, before = load_results(reference), load_results(RESULTS)
    assert adopted["dr005"]["values"][finding] == 12345
    for k in before["dr005"]["facts"]:
        if k != dropped:
            assert adopted["dr005"]["values"][k] == before["dr005"]["values"][k]
    assert dropped not in adopted["dr005"]["facts"]  # listed only where it has a value
    assert adopted["dr005"]["machine"] == before["dr005"]["machine"]
    assert adopted["timing"] == before["timing"]  # all machine facts: left alone
