"""DR-002's pieces: each encoder's cost as one study (:class:`hierret.study.Costs`), the
identity guard shown, a testbed's seeded sample of texts, and :class:`hierret.study.Embedders`
writing DR-002's keys from its tables, in the record's order."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from hierret.encoders import HashEncoder
from hierret.encoders.cache import VectorCache, cached_encoder
from hierret.evaluation.stats import StatsSettings
from hierret.search.profile import Profile
from hierret.study import Costs, Embedders, Testbed, identity_guard
from hierret.study.measured import Measurements

FEW = StatsSettings(n_resamples=50)


@pytest.fixture(scope="module")
def bed() -> Testbed:
    return Testbed.load("python-reference", 600, 120, max_queries=5, max_docs=8)


def test_costs_measure_each_pair_but_those_skipped_and_reuse_them(
    bed: Testbed, tmp_path: Path
) -> None:
    cache, memo = VectorCache(tmp_path / "v"), Measurements(tmp_path / "m")
    encoders = {"a": cached_encoder("hash", cache, dimension=8),
                "b": cached_encoder("hash", cache, dimension=16)}  # fmt: skip
    costs = Costs.measure({"pyref": bed, "other": bed}, encoders, 4, 2, memo=memo,
                          skip=[("other", "b")])  # fmt: skip
    assert costs.frame.index.tolist() == [("pyref", "a"), ("pyref", "b"), ("other", "a")]
    assert (costs.frame["passages/s"] > 0).all()
    again = Costs.measure({"pyref": bed}, encoders, 4, 2, memo=memo)
    assert (
        again.frame.loc[("pyref", "a"), "passages/s"]
        == costs.frame.loc[("pyref", "a"), "passages/s"]
    )  # kept, not timed again
    assert "HIERRET_REMEASURE" in costs.table().caption
    table = pd.DataFrame({"mean": [0.5, 0.4], "low": [0.4, 0.3], "high": [0.6, 0.5]},
                         index=["a", "b"])  # fmt: skip
    assert costs.plot({("pyref", "dense"): table}, ylabel="nDCG@10") is not None


def test_the_guard_refuses_another_encoders_queries(bed: Testbed) -> None:
    line = identity_guard(HashEncoder(dimension=8), HashEncoder(8, window=64), bed)
    assert line.startswith("IdentityMismatchError: ")
    assert "64" in line
    with pytest.raises(ValueError, match="the identity of the index"):
        identity_guard(HashEncoder(dimension=8), HashEncoder(dimension=8), bed)


def test_a_sample_is_seeded_in_hierarchy_order_and_capped(bed: Testbed) -> None:
    texts = bed.texts()
    pick = sorted(np.random.default_rng(3).choice(len(texts), 4, replace=False))
    assert bed.sample(4, 3) == [texts[i] for i in pick]
    assert bed.sample(10_000, 3) == texts
    assert bed.sample(4, 3, "sections") != bed.sample(4, 3)


def test_embedders_record_every_table_in_the_records_order(bed: Testbed) -> None:
    encoders = {"x": HashEncoder(dimension=8), "y": HashEncoder(dimension=16)}
    searchers = {e: bed.searcher(x) for e, x in encoders.items()}
    result = bed.compare(searchers, ["ndcg@10"], profile=Profile(), stats=FEW)
    tables = {("python-reference", "dense", "ndcg@10"): result.table("passages", "ndcg@10")}
    sizes = pd.DataFrame({"python-reference": bed.summary()}).T
    sizes["1/n"] = 1 / sizes["questions"]
    quality = pd.concat({k: t["mean"] for k, t in tables.items()}).unstack(2)
    frame = pd.DataFrame({"passages/s": [9.0, 8.0], "build s (est.)": [1.0, 2.0],
                          "latency ms": [2.0, 3.0], "latency p90 ms": [3.0, 4.0]},
                         index=pd.MultiIndex.from_tuples([("python-reference", "x"),
                                                          ("python-reference", "y")]))  # fmt: skip
    variation = pd.DataFrame({"max_abs_diff": [0.0, 1e-7], "min_cosine": [1.0, 0.99]},
                             index=["x", "y"])  # fmt: skip
    ablation = pd.DataFrame({"ndcg@10 ip": [0.4, None], "ndcg@10 cosine": [0.5, 0.6]},
                            index=["x", "y"])  # fmt: skip
    prefix = result.table("passages", "ndcg@10").rename({"x": "prefix on", "y": "prefix off"})
    study = Embedders(encoders, {"python-reference": bed}, sizes, quality, tables,
                      Costs(frame, Measurements()), variation, 24, ablation, prefix)  # fmt: skip
    values = study.values({"margin": 0.02, "other": 1})
    keys = list(values)
    assert keys[:2] == ["e5_prefix_on_n", "e5_prefix_on_mean"]
    assert values["pyref_questions"] == len(bed.queries)
    assert (
        values["test_pyref_dense_y_diff"]
        == tables[("python-reference", "dense", "ndcg@10")].loc["y", "diff"]
    )
    assert "test_pyref_dense_y_p" not in values  # the raw p is not recorded, p_holm is
    assert values["cost_pyref_x_pps"] == 9.0
    assert "cost_pyref_x_build_s_est" not in values
    assert values["variation_y_mincos"] == 0.99
    assert values["norm_x_ip"] == 0.4
    assert "norm_y_ip" not in values  # an empty cell: nothing to ablate
    assert keys[-1] == "margin"
    assert keys[-6:-1] == [
        "variation_y_mincos",
        "variation_n_texts",
        "norm_x_ip",
        "norm_x_cos",
        "norm_y_cos",
    ]
    assert "e5_prefix_on_mean" not in Embedders(
        encoders, {}, sizes, quality, tables, Costs(frame, Measurements()), variation, 24,
        ablation,
    ).values({"margin": 0.02})  # fmt: skip
    identity = study.identity(FEW, {"seed": 0})
    assert list(identity) == ["encoders", "corpora", "confidence", "n_resamples", "seed",
                              "parameters"]  # fmt: skip
    assert Embedders.facts == ("cost_*", "variation_*_m*")
