"""hierret.publish.tables: a result table as every notebook shows it."""

from __future__ import annotations

import numpy as np
import pandas as pd

from hierret.publish.tables import cells, fields, p_limit, styled


def test_counts_estimates_p_values_and_empty_cells() -> None:
    t = pd.DataFrame(
        {
            "hits": [90.0, 68.0],
            "n": [157.0, 157.0],
            "rate": [0.5732, 0.4331],
            "diff": [0.1401, np.nan],
            "p": [0.0000999, np.nan],
            "p_holm": [0.0213, None],
        },
        index=["passages", "whole"],
    )
    shown = cells(t, n_resamples=10_000)
    assert shown.loc["passages"].tolist() == ["90", "157", "0.573", "0.140", "< 0.0001", "0.0213"]
    assert shown.loc["whole"].tolist() == ["68", "157", "0.433", "", "", ""]


def test_p_values_at_the_resolution_of_the_resampling() -> None:
    assert p_limit(1000) == 0.001
    t = pd.DataFrame({"p": [1 / 1001, 2 / 1001]})
    # 2 / 1001 is the smallest p 1,000 sign flips can give: a bound, "≤" (issue 39)
    assert cells(t, n_resamples=1000)["p"].tolist() == ["< 0.001", "≤ 0.0020"]
    assert cells(t)["p"].tolist() == ["0.0010", "0.0020"]  # an exact test: four decimals


def test_one_precision_per_column_and_whole_estimates_stay_estimates() -> None:
    t = pd.DataFrame(
        {"latency ms": [102.31, 42.598], "mean": [1.0, 0.0], "passages": [156.0, 18.0]}
    )
    assert cells(t).to_dict("list") == {
        "latency ms": ["102.3", "42.6"],
        "mean": ["1.000", "0.000"],
        "passages": ["156", "18"],
    }


def test_mixed_columns_cell_by_cell_and_known_columns_by_name() -> None:
    record = pd.Series(
        {"n_documents": 79, "share_over_window": 0.17514, "corpus": "pyref", "sizes": [600, 900]},
        dtype=object,
    )
    assert cells(record)["value"].tolist() == ["79", "0.175", "pyref", "600, 900"]
    variation = pd.DataFrame({"max_abs_diff": [7.82e-08, 0.0], "min_cosine": [0.99999994, 1.0]})
    assert cells(variation).to_dict("list") == {
        "max_abs_diff": ["7.82e-08", "0.00e+00"],
        "min_cosine": ["1.000000", "1.000000"],
    }


def test_styled_carries_its_caption_and_wraps_long_text() -> None:
    t = pd.DataFrame({"text": ["a long passage of text " * 4], "rank": [3]})
    html = styled(t, "The first pair to read", index=False).to_html()
    assert "<caption>The first pair to read</caption>" in html
    assert "white-space: normal" in html
    assert ">3<" in html


def test_highlight_marks_the_best_of_each_column() -> None:
    t = pd.DataFrame({"a": [0.5, 0.7, 0.9]}, index=["x", "y", "oracle"])
    html = styled(t, highlight_max=(["x", "y"], slice(None))).to_html()
    assert html.count("font-weight: bold") == 1


def test_fields_flattens_a_nested_record() -> None:
    table = fields(
        {
            "profile": {"name": "shipped", "selection": {"top_k": 10, "min_keep": 3}},
            "metrics": {"ndcg@10": 0.6253},
        }
    )
    assert cells(table)["value"].to_dict() == {
        "profile.name": "shipped",
        "profile.selection.top_k": "10",
        "profile.selection.min_keep": "3",
        "metrics.ndcg@10": "0.625",
    }


def test_headers_read_as_words_with_the_row_names_in_the_header_row() -> None:
    """Headers wrapped at underscores ("diff_ low") above an empty row holding the index
    name, and bare 0/1 row numbers, on the notebooks' pages."""
    t = pd.DataFrame(
        {"only_a": [1, 2], "diff_low": [0.1, 0.2]},
        index=pd.MultiIndex.from_tuples([("pyref", 900), ("qasper", 900)], names=["corpus", "n"]),
    )
    head = styled(t, "x").to_html().split("</thead>")[0]
    assert head.count("<tr>") == 1  # one header row: no row for the index names
    assert ">corpus · n</th>" in head
    assert ">only a</th>" in head
    assert ">diff low</th>" in head
    assert t.columns.name is None  # the caller's table is left as it was
    bare = styled(pd.DataFrame({"a": [1, 2]}), "y").to_html()
    assert "row_heading" not in bare  # no 0, 1 row labels


def test_large_counts_large_estimates_and_infinities_read_as_a_person_writes_them() -> None:
    """`784.949` and `464970` in a record's table, `-inf` as a threshold, on the site."""
    mixed = pd.DataFrame({"value": pd.Series([784.949, 464970, 79, 0.1234], dtype=object)})
    assert cells(mixed)["value"].tolist() == ["784.9", "464,970", "79", "0.123"]
    thresholds = pd.DataFrame({"threshold": [-np.inf, 0.5]})
    assert cells(thresholds)["threshold"].tolist() == ["\u2212∞", "0.500"]
