"""Warming the cache for a run: plan what it embeds, embed the plan, and the run embeds nothing.

The unit tests use the hash encoder; the last test warms a real notebook
(DR-001 at smoke size, with the fast static encoder) through ``docs/warm.py`` on
an empty cache and then runs it: its timing record must count no text embedded.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hierret.cli import main
from hierret.encoders import HashEncoder
from hierret.encoders.cache import (
    PLAN_ENV,
    CachedEncoder,
    Plan,
    VectorCache,
    cached_encoder,
    read_plan,
)
from hierret.encoders.embed import embed_plan

ROOT = Path(__file__).resolve().parents[2]


def _hash(cache: VectorCache) -> CachedEncoder:
    return cached_encoder("hash", cache, dimension=8)


def test_a_planning_run_lists_the_misses_stores_nothing_and_stands_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = VectorCache(tmp_path / "cache")
    monkeypatch.setenv(PLAN_ENV, str(tmp_path / "plan"))
    enc = _hash(cache)
    got = enc.encode_passages(["a cat", "a dog", "a cat"])
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0)
    assert (got[0] == got[2]).all()
    real = HashEncoder(dimension=8).encode_passages(["a cat", "a dog"])
    assert not np.allclose(got[:2], real)  # stand-ins, not the model's vectors
    assert enc.stats.stored == 0
    assert not cache.contains(enc.identity, [b"x" * 32]).any()
    enc.encode_queries(["cats?"])
    groups = [(g.name, g.options, g.role, g.raw, g.texts) for g in read_plan(tmp_path / "plan")]
    assert groups == [
        ("hash", {"dimension": 8}, "passage", False, ["a cat", "a dog"]),
        ("hash", {"dimension": 8}, "query", False, ["cats?"]),
    ]


def test_the_plan_embedded_leaves_nothing_to_plan_and_gives_the_models_vectors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = VectorCache(tmp_path / "cache")
    monkeypatch.setenv(PLAN_ENV, str(tmp_path / "plan"))
    _hash(cache).encode_passages(["a cat", "a dog"])
    _hash(cache).encode_unnormalized(["raw text"])
    reports = embed_plan(tmp_path / "plan", cache, show_progress=False)
    assert [(g.raw, r.embedded) for g, r in reports] == [(False, 2), (True, 1)]
    monkeypatch.setenv(PLAN_ENV, str(tmp_path / "plan2"))
    enc = _hash(cache)
    got = enc.encode_passages(["a cat", "a dog"])
    raw = enc.encode_unnormalized(["raw text"])
    model = HashEncoder(dimension=8)
    assert (got == model.encode_passages(["a cat", "a dog"])).all()
    assert (raw == model.encode_unnormalized(["raw text"])).all()
    assert read_plan(tmp_path / "plan2") == []
    assert enc.stats.misses == 0


def test_an_encoder_without_a_known_name_embeds_for_real_while_planning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(PLAN_ENV, str(tmp_path / "plan"))
    enc = CachedEncoder(HashEncoder(dimension=8), VectorCache(tmp_path / "cache"))
    got = enc.encode_passages(["a cat"])
    assert (got == HashEncoder(dimension=8).encode_passages(["a cat"])).all()
    assert enc.stats.stored == 1
    assert read_plan(tmp_path / "plan") == []


def test_a_plan_for_another_identity_is_refused_before_embedding(tmp_path: Path) -> None:
    cache = VectorCache(tmp_path / "cache")
    other = HashEncoder(dimension=16).identity
    Plan(tmp_path / "plan").add(("hash", {"dimension": 8}), other, "passage", False, ["x"])
    with pytest.raises(ValueError, match="plan again here"):
        embed_plan(tmp_path / "plan", cache, show_progress=False)
    assert _hash(cache).cache.contains(_hash(cache).identity, [b"x" * 32]).sum() == 0


def test_a_line_cut_short_is_skipped(tmp_path: Path) -> None:
    ident = HashEncoder(dimension=8).identity
    Plan(tmp_path).add(("hash", {"dimension": 8}), ident, "query", False, ["kept"])
    with open(next(tmp_path.glob("plan-*.jsonl")), "a", encoding="utf-8") as f:
        f.write('{"name": "hash", "opt')  # a planning run killed while writing
    assert [g.texts for g in read_plan(tmp_path)] == [["kept"]]


def test_the_command_line_embeds_a_plan_and_refuses_a_missing_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ident = HashEncoder(dimension=8).identity
    Plan(tmp_path / "plan").add(("hash", {"dimension": 8}), ident, "query", False, ["a", "b"])
    cache = ["--cache-dir", str(tmp_path / "cache"), "--no-progress"]
    assert main(["embed", "--plan", str(tmp_path / "plan"), *cache]) == 0
    assert "hash questions: 2 distinct texts, 0 were in the cache, 2 embedded" in (
        capsys.readouterr().out
    )
    assert main(["embed", "--plan", str(tmp_path / "nowhere"), *cache]) == 2
    assert "no such folder; make a plan first" in capsys.readouterr().err


@pytest.mark.slow
def test_warm_leaves_nothing_for_the_notebook_to_embed(tmp_path: Path) -> None:
    """docs/warm.py on an empty cache, then the same run: 0 texts embedded, all cached."""
    env = {
        **os.environ,
        "HIERRET_CACHE": str(tmp_path / "cache"),
        "PYTHONHASHSEED": "0",
        "TOKENIZERS_PARALLELISM": "false",
        "HF_HUB_OFFLINE": "1",
        "MPLBACKEND": "module://matplotlib_inline.backend_inline",
    }
    env.pop(PLAN_ENV, None)
    run = ["--smoke", "--kernel", "hierret", "--only", "02_dr001_chunking"]
    run += ["-p", "encoder", "wordllama"]
    warm = subprocess.run(
        [sys.executable, str(ROOT / "docs" / "warm.py"), *run, "--", "--no-progress"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert warm.returncode == 0, warm.stderr[-2000:]
    assert "round 1: the run would embed" in warm.stdout
    assert "the cache is warm" in warm.stdout
    out = tmp_path / "run"
    done = subprocess.run(
        [sys.executable, str(ROOT / "docs" / "execute.py"), "--out", str(out / "nb"), *run],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    values = json.loads((out / "nb" / "timing.json").read_text())["values"]
    embedded = {k: v for k, v in values.items() if k.endswith("_embedded")}
    cached = {k: v for k, v in values.items() if k.endswith("_cached")}
    assert embedded, values
    assert set(embedded.values()) == {0}, embedded
    assert sum(cached.values()) > 0
