"""The results table atop DECISIONS.md: each record's key claim, quoted from its claims row."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hierret.publish import summary
from hierret.publish.report import check_markdown, load_results

ROOT = Path(__file__).resolve().parents[2]
RECORDS = ROOT / "data" / "results"

TABLE = (
    "<!-- results table -->\n\n"
    "| record | decision | key comparison | difference | verdict | pages |\n"
    "|---|---|---|---|---|---|\n"
    "| DR-009 | Dense | C1 | | | [notebook](nb.ipynb) |\n\n"
    "<!-- /results table -->\n"
)
RECORD = (
    "## DR-009 · A toy\n\nDense beats BM25 [C1].\n\n### Claims and tests\n\n"
    "| id | claim | test | difference | p | adjusted p | verdict |\n"
    "|---|---|---|---|---|---|---|\n"
    "| C1 | Dense beats BM25 | `dr009.d` > 0 | | | | |\n"
)


def _results(**values: float) -> dict[str, dict[str, dict[str, float]]]:
    base = {"d_diff": 0.1, "d_diff_low": 0.02, "d_diff_high": 0.2, "d_p": 0.004,
            "d_p_holm": 0.01, "d_family_size": 3, "d_mde": 0.07, "d_margin_low": 0.03,
            "d_margin_high": 0.18}  # fmt: skip
    return {"dr009": {"values": base | values}}


def _doc(table: str = TABLE, record: str = RECORD) -> str:
    return summary.update(f"# Records\n\n{table}\n{record}", _results())


def test_update_quotes_the_declared_claim() -> None:
    text = _doc()
    row = summary.rows(text)[0]
    assert (row.record, row.claim) == ("DR-009", "C1")
    assert row.cells[0] == "[DR-009](#dr-009--a-toy)"
    assert row.cells[2] == "C1: Dense beats BM25"
    assert re.sub(r"<!--.*?-->", "", row.cells[3]) == "+0.100 (+0.020 to +0.200)"
    assert row.cells[4] == "holds"
    assert summary.check(text, _results()) == []


def test_a_changed_number_or_verdict_fails() -> None:
    text = _doc()
    moved = summary.check(text, _results(d_diff=0.12))
    assert moved
    assert "+0.120" in moved[0]
    assert "+0.100" in moved[0]
    assert summary.check(text, _results(d_p_holm=0.2))  # the verdict reads not established


def test_a_typed_cell_fails() -> None:
    text = _doc().replace("| holds |", "| non-inferior |", 1)
    assert "non-inferior" in summary.check(text, _results())[0]


def test_a_record_without_a_row_fails() -> None:
    text = _doc(record=RECORD + "\n" + RECORD.replace("DR-009 · A toy", "DR-010 · More"))
    assert any("DR-010 has 0 rows" in p for p in summary.check(text, _results()))


def test_an_unknown_claim_or_record_fails() -> None:
    assert "C7" in summary.check(_doc(TABLE.replace("| C1 |", "| C7 |")), _results())[0]
    text = _doc(TABLE.replace("| DR-009 |", "| DR-011 |"))
    assert any("DR-011" in p for p in summary.check(text, _results()))


def test_a_renamed_record_moves_its_link() -> None:
    text = _doc().replace("## DR-009 · A toy", "## DR-009 · A renamed toy")
    assert "#dr-009--a-renamed-toy" in summary.check(text, _results())[0]


def test_a_table_without_its_end_is_an_error() -> None:
    with pytest.raises(ValueError, match="must close"):
        summary.rows(TABLE.replace(summary.END, ""))


def test_a_malformed_row_is_an_error() -> None:
    with pytest.raises(ValueError, match="key claim's id"):
        summary.rows(TABLE.replace("| C1 |", "| the first |"))


def test_text_without_a_table_has_nothing_to_check() -> None:
    assert summary.rows(RECORD) == []
    assert summary.check(RECORD, _results()) == []


def test_the_slug_is_myst_s() -> None:
    """The record links must land where the site's MyST puts each record's anchor."""
    slugs = pytest.importorskip("myst_parser.slugs")
    text = (ROOT / "DECISIONS.md").read_text(encoding="utf-8")
    titles = re.findall(r"^## (DR-.*)$", text, re.MULTILINE)
    assert len(titles) == 5
    for title in titles:
        assert summary.slug(title) == slugs.github_slugify(title)


def test_decisions_fails_when_a_table_number_leaves_its_record() -> None:
    """A number of the published table edited by hand fails both checks that read it."""
    text = (ROOT / "DECISIONS.md").read_text(encoding="utf-8")
    records = load_results(RECORDS)
    assert summary.check(text, records) == []
    row = summary.rows(text)[0]
    line = text.splitlines()[row.line - 1]
    edited = text.replace(line, line.replace("+0.140<!--@", "+0.150<!--@", 1))
    assert edited != text
    assert summary.check(edited, records)
    assert check_markdown(edited, records)
