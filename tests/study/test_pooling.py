"""The pooling table: what each dense index's reports say, one row per index."""

from __future__ import annotations

from hierret.encoders import HashEncoder
from hierret.search.searcher import Searcher
from hierret.structure.hierarchy import build_hierarchy
from hierret.structure.units import Corpus, Document
from hierret.study.pooling import pooling_table

LONG = " ".join(f"word{i}" for i in range(60))
TEXT = f"Short\n=====\n\nA few words.\n\nLong\n====\n\n{LONG}\n"


def test_table_reads_the_searchers_reports() -> None:
    h = build_hierarchy(Corpus("c", [Document("d", "D", TEXT)]), max_chars=120, overlap_chars=0)
    s = Searcher(h, HashEncoder(dimension=16, window=16))
    for vectors in ("rawspan", "first-window"):
        s.dense_index("sections", vectors)
    table = pooling_table(s.reports)
    assert list(table.index) == [("sections", "rawspan"), ("sections", "first-window")]
    for key, report in s.reports.items():
        row = table.loc[key]
        assert row["units"] == report.n_units
        assert row["pooled"] == report.n_pooled
        assert row["max windows"] == report.max_windows
        assert row["truncated"] == len(report.truncated)
    assert table.loc[("sections", "rawspan"), "pooled"] >= 1  # the long section is pooled
    assert table.loc[("sections", "rawspan"), "truncated"] == 0
    assert table.loc[("sections", "first-window"), "truncated"] >= 1  # ... or cut
    assert str(table["units"].dtype).startswith("int")


def test_no_reports_give_an_empty_table() -> None:
    table = pooling_table({})
    assert table.empty
    assert list(table.columns)[:3] == ["units", "embedded", "pooled"]
