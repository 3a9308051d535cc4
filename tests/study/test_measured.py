"""Kept measurements: reused only while every input, the machine and the code are the same."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from hierret.encoders import HashEncoder
from hierret.search.vectors.index import IdentityMismatchError, VectorIndex
from hierret.study import cost, measured
from hierret.study import variation as variation_mod
from hierret.study.measured import Measurements

TEXTS = ["cats purr", "dogs bark", "birds sing at dawn"]


class Counting:
    def __init__(self) -> None:
        self.calls = 0

    def __call__(self) -> dict[str, float]:
        self.calls += 1
        return {"value": float(self.calls)}


def test_a_kept_measurement_is_reused_and_any_input_change_measures_again(tmp_path: Path) -> None:
    memo, measure = Measurements(tmp_path), Counting()
    first = memo.recall("m", {"a": 1}, measure)
    assert memo.recall("m", {"a": 1}, measure) == first
    assert measure.calls == 1
    assert Measurements(tmp_path).recall("m", {"a": 1}, measure) == first  # another process
    assert memo.recall("m", {"a": 2}, measure) == {"value": 2.0}
    assert memo.recall("other", {"a": 1}, measure) == {"value": 3.0}
    assert (memo.reused, memo.measured) == (1, 3)  # the other object counted its own


def test_another_machine_or_code_is_another_measurement(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memo = Measurements(tmp_path)
    here = memo.path("m", {"a": 1})
    env = measured._environment()
    for change in ({"hierret_code": "0" * 16}, {"cpus": env["cpus"] + 1}):
        monkeypatch.setattr(measured, "_environment", lambda c=change: {**env, **c})
        assert memo.path("m", {"a": 1}) != here


def test_remeasure_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    measure = Counting()
    Measurements(tmp_path).recall("m", {}, measure)
    monkeypatch.setenv(measured.REMEASURE_ENV, "1")
    again = Measurements(tmp_path)
    assert again.recall("m", {}, measure) == {"value": 2.0}
    monkeypatch.delenv(measured.REMEASURE_ENV)
    assert Measurements(tmp_path).recall("m", {}, measure) == {"value": 2.0}  # replaced


def test_a_damaged_measurement_is_measured_again(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    memo, measure = Measurements(tmp_path), Counting()
    memo.recall("m", {}, measure)
    memo.path("m", {}).write_text('{"value": ')  # cut short
    with caplog.at_level(logging.WARNING, logger="hierret.study.measured"):
        assert memo.recall("m", {}, measure) == {"value": 2.0}
    assert "damaged" in caplog.text
    assert Measurements(tmp_path).recall("m", {}, measure) == {"value": 2.0}  # rewritten


def test_a_folder_that_cannot_be_written_only_costs_a_measurement(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    memo, measure = Measurements(blocker / "measurements"), Counting()
    assert memo.recall("m", {}, measure) == {"value": 1.0}
    assert memo.recall("m", {}, measure) == {"value": 2.0}


class CountingHash(HashEncoder):
    def __init__(self) -> None:
        super().__init__(dimension=16)
        self.embedded = 0

    def _embed(self, texts: list[str]) -> Any:
        self.embedded += len(texts)
        return super()._embed(texts)


def test_encoder_cost_is_kept_with_its_latencies(tmp_path: Path) -> None:
    enc = CountingHash()
    index = VectorIndex(["a", "b", "c"], enc.encode_passages(TEXTS), enc.identity.describe())
    memo = Measurements(tmp_path)
    first = cost.measure_cost(enc, index, TEXTS, ["why bark", "who purrs"], memo=memo)
    embedded = enc.embedded
    again = cost.measure_cost(enc, index, TEXTS, ["why bark", "who purrs"], memo=memo)
    assert again == first
    assert enc.embedded == embedded
    changed = cost.measure_cost(enc, index, TEXTS, ["why bark"], memo=memo)
    assert len(changed.latency_ms) == 1
    other = HashEncoder(dimension=8)  # a kept result never hides a wrong encoder
    with pytest.raises(IdentityMismatchError):
        cost.measure_cost(other, index, TEXTS, ["why bark"], memo=memo)


def test_embedding_variation_is_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    memo = Measurements(tmp_path)
    first = variation_mod.embedding_variation("hash", TEXTS, memo=memo)

    def no_process(*args: object, **kwargs: object) -> None:
        raise AssertionError("a kept table started a process")

    monkeypatch.setattr(variation_mod, "_in_fresh_process", no_process)
    again = variation_mod.embedding_variation("hash", TEXTS, memo=memo)
    pd.testing.assert_frame_equal(again, first)
    with pytest.raises(AssertionError, match="started a process"):
        variation_mod.embedding_variation("hash", TEXTS, seed=1, memo=memo)


def test_a_model_loaded_on_first_use_is_not_timed_as_throughput(tmp_path: Path) -> None:
    """measure_cost warms the encoder up untimed (a LazyEncoder loads its model then)."""
    import time

    from hierret.encoders.lazy import LazyEncoder, Recipe

    def slow_load() -> HashEncoder:
        time.sleep(0.5)
        return HashEncoder(dimension=16)

    recipe = Recipe("hash", {"dimension": 16}, (), ("numpy",))
    LazyEncoder(slow_load, recipe, tmp_path).identity  # noqa: B018 - writes the manifest
    lazy = LazyEncoder(slow_load, recipe, tmp_path)
    assert not lazy.loaded
    index = VectorIndex(
        ["a", "b", "c"], HashEncoder(dimension=16).encode_passages(TEXTS), lazy.identity.describe()
    )
    measured_cost = cost.measure_cost(lazy, index, TEXTS, [])
    assert lazy.loaded
    assert measured_cost.per_second > len(TEXTS) / 0.5  # the half-second load is not in it


def test_inputs_that_json_cannot_name_exactly_are_refused(tmp_path: Path) -> None:
    import numpy as np

    with pytest.raises(TypeError, match=r"must be JSON values.*text_digest"):
        Measurements(tmp_path).recall("m", {"vectors": np.zeros(3)}, Counting())
