"""Record values from a table: keys by template, ints kept, ambiguous keys refused."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from hierret.record_keys import record_values


def test_keys_are_the_template_slugged_and_values_keep_their_kind() -> None:
    table = pd.DataFrame({"corpus": ["pyref", "qasper"], "chars": [900, 1800],
                          "arm": ["fusion-rawspan", "chunk"], "mean": [0.5, 0.25],
                          "low": [0.4, 0.2], "pooled": [3, 7]})
    values = record_values(table, "{corpus}_{chars}_{arm}_{column}",
                           {"mean": "", "low": "low", "pooled": "pooled"})
    assert values == {"pyref_900_fusion_rawspan": 0.5, "pyref_900_fusion_rawspan_low": 0.4,
                      "pyref_900_fusion_rawspan_pooled": 3, "qasper_1800_chunk": 0.25,
                      "qasper_1800_chunk_low": 0.2, "qasper_1800_chunk_pooled": 7}
    assert isinstance(values["pyref_900_fusion_rawspan_pooled"], int)
    assert all(type(v) in (int, float) for v in values.values())
    json.dumps(values)  # plain Python numbers


def test_format_specs_index_fields_and_column_lists() -> None:
    table = pd.DataFrame({"w": [0, 5, 10], "mean": [0.1, 0.2, 0.3]},
                         index=pd.Index(["doc", "doc", "sec"], name="target"))
    values = record_values(table.reset_index(), "weight_{w:02d}_{target}", ["mean"])
    assert values == {"weight_00_doc": 0.1, "weight_05_doc": 0.2, "weight_10_sec": 0.3}


def test_mistakes_are_named() -> None:
    table = pd.DataFrame({"arm": ["a", "a"], "target": ["x", "y"], "mean": [1.0, 2.0]})
    with pytest.raises(ValueError, match=r"columns \['median'\] are not in the table"):
        record_values(table, "{arm}", ["median"])
    with pytest.raises(ValueError, match="names 'targte', not a column"):
        record_values(table, "{arm}_{targte}", ["mean"])
    with pytest.raises(ValueError, match="two cells get the key 'a_mean'"):
        record_values(table, "{arm}_{column}", ["mean"])
