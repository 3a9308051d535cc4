"""What an encoder costs: throughput and per-query latency, timed as documented."""

from __future__ import annotations

import matplotlib
import numpy as np
import pandas as pd
import pytest

from hierret.encoders import HashEncoder
from hierret.encoders.base import Encoder
from hierret.search.vectors.index import IdentityMismatchError, VectorIndex
from hierret.structure.units import Query
from hierret.study.cost import EncoderCost, measure_cost, tradeoff_figure

matplotlib.use("Agg")

TEXTS = ["cats purr", "dogs bark", "birds sing", "fish swim"]


class CountingEncoder(HashEncoder):
    """A hash encoder that records every batch it embeds."""

    def __init__(self) -> None:
        super().__init__(dimension=16)
        self.batches: list[list[str]] = []

    def _embed(self, texts: list[str]) -> np.ndarray:
        self.batches.append(list(texts))
        return super()._embed(texts)


def _index(enc: Encoder) -> VectorIndex:
    return VectorIndex(["a", "b", "c", "d"], enc.encode_passages(TEXTS), enc.identity.describe())


def test_a_warm_up_text_then_the_texts_in_one_batch_then_each_query_alone() -> None:
    enc = CountingEncoder()
    index = _index(enc)
    enc.batches.clear()
    cost = measure_cost(enc, index, TEXTS[:3], ["why do dogs bark", Query("q", "do cats purr", ())])
    assert enc.batches == [TEXTS[:1], TEXTS[:3], ["why do dogs bark"], ["do cats purr"]]
    assert cost.per_second > 0
    assert len(cost.latency_ms) == 2
    assert all(ms >= 0 for ms in cost.latency_ms)


def test_summaries() -> None:
    cost = EncoderCost(per_second=10.0, latency_ms=(1.0, 2.0, 3.0, 4.0, 100.0))
    assert cost.latency_mean_ms == 22.0
    assert cost.latency_p90_ms == pytest.approx(np.percentile([1, 2, 3, 4, 100], 90))
    assert cost.row(n_units=50) == {
        "passages/s": 10.0,
        "build s (est.)": 5.0,
        "latency ms": 22.0,
        "latency p90 ms": cost.latency_p90_ms,
    }
    none = EncoderCost(per_second=1.0, latency_ms=())
    assert np.isnan(none.latency_mean_ms)
    assert np.isnan(none.latency_p90_ms)


def test_refusals() -> None:
    enc = HashEncoder(dimension=16)
    with pytest.raises(ValueError, match="texts is empty"):
        measure_cost(enc, _index(enc), [], ["q"])
    with pytest.raises(IdentityMismatchError):
        measure_cost(HashEncoder(dimension=16, window=64), _index(enc), TEXTS, ["q"])


def test_tradeoff_figure_has_a_panel_per_corpus_and_ranker_and_one_legend() -> None:
    """Drawn by hierret.publish.charts (tests/publish/test_charts.py tests the drawing itself)."""
    table = pd.DataFrame(
        {"mean": [0.6, 0.4], "low": [0.5, 0.3], "high": [0.7, 0.45]}, index=["minilm", "e5"]
    )
    speed = pd.Series({(c, a): s for c in "ab" for a, s in (("minilm", 10.0), ("e5", 50.0))})
    tables = {(c, r): table for c in "ab" for r in ("dense", "hybrid")}
    fig = tradeoff_figure(speed, tables, ylabel="nDCG@10")
    assert [ax.get_title() for ax in fig.axes] == ["a, dense", "a, hybrid", "b, dense", "b, hybrid"]
    assert [ax.get_legend() for ax in fig.axes] == [None] * 4
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["minilm", "e5"]
