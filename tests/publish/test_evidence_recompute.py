"""Every published test recomputed from its evidence files by an independent path.

``data/results/evidence/{record}-tests.tsv`` and ``…-questions.tsv.gz`` hold each
paired test's questions and settings (:mod:`hierret.publish.evidence`). This test
reads them with pandas alone and recomputes, with scipy and numpy written here
(nothing of hierret's statistics is imported):

* the difference (the mean of the per-question differences);
* its interval: scipy's percentile bootstrap of the mean difference (``mean``
  tests), or Newcombe's method-10 paired interval from Wilson's score limits
  (``hits`` tests), and the 90 % interval the margin claims are read by;
* the p-value: a two-sided paired randomisation test with the seeded sign flips
  of :func:`scipy.stats.permutation_test` (done here in numpy, checked against
  scipy itself on a few tests, because scipy's loop takes seconds per test), or
  McNemar's exact test (:func:`scipy.stats.binomtest`);
* Holm's adjustment within each family, the minimum detectable effect at 80 %
  power,

and compares every one with the number the result record publishes. Any
difference beyond floating-point noise fails.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest, bootstrap, norm, permutation_test

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "data" / "results"
RECORDS = sorted(p.name.removesuffix("-tests.tsv") for p in RESULTS.glob("evidence/*-tests.tsv"))
TOLERANCE = 1e-9
ALPHA = 0.05


def _read(name: str) -> tuple[pd.DataFrame, dict[str, tuple[np.ndarray, np.ndarray]], dict]:
    read = {"sep": "\t", "keep_default_na": False, "na_values": [""]}
    read["dtype"] = {"query": str, "key": str}
    tests = pd.read_csv(RESULTS / "evidence" / f"{name}-tests.tsv", **read)
    tests["key"] = tests["key"].fillna("")
    questions = pd.read_csv(RESULTS / "evidence" / f"{name}-questions.tsv.gz", **read)
    pairs = {
        t: (g["a"].to_numpy(float), g["b"].to_numpy(float)) for t, g in questions.groupby("test")
    }
    values = json.loads((RESULTS / f"{name}.json").read_text(encoding="utf-8"))["values"]
    return tests, pairs, values


def _sign_flip_p(d: np.ndarray, n_resamples: int, seed: int) -> float:
    """scipy.stats.permutation_test's two-sided p for (d,), permutation_type="samples"."""
    if n_resamples >= 2 ** len(d):
        return _scipy_p(d, n_resamples, seed)
    rng = np.random.default_rng(seed)
    null = np.empty(n_resamples)
    draws = rng.integers(0, 2**32, size=(n_resamples, len(d)), dtype=np.uint32)
    for start in range(0, n_resamples, 20_000):
        keep = (draws[start : start + 20_000] & 1).astype(bool)
        null[start : start + 20_000] = np.where(keep, d, -d).mean(axis=1)
    observed = d.mean()
    gamma = abs(np.finfo(float).eps * 100 * observed)
    below = np.count_nonzero(null <= observed + gamma) + 1
    above = np.count_nonzero(null >= observed - gamma) + 1
    return min(1.0, min(below, above) / (n_resamples + 1) * 2)


def _scipy_p(d: np.ndarray, n_resamples: int, seed: int) -> float:
    res = permutation_test(
        (d,),
        np.mean,
        permutation_type="samples",
        vectorized=True,
        n_resamples=n_resamples,
        alternative="two-sided",
        rng=np.random.default_rng(seed),
    )
    return min(1.0, float(res.pvalue))


def _wilson(k: int, n: int, z: float) -> tuple[float, float]:
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def _newcombe(x: np.ndarray, y: np.ndarray, level: float) -> tuple[float, float]:
    """Newcombe (1998) method 10: the paired difference's interval from Wilson limits."""
    a, b = x > 0, y > 0
    n = len(a)
    e, f = int(np.sum(a & b)), int(np.sum(a & ~b))
    g, h = int(np.sum(~a & b)), int(np.sum(~a & ~b))
    z = norm.ppf(1 - (1 - level) / 2)
    l1, u1 = _wilson(e + f, n, z)
    l2, u2 = _wilson(e + g, n, z)
    p1, p2 = (e + f) / n, (e + g) / n
    denominator = (e + f) * (g + h) * (e + g) * (f + h)
    numerator = e * h - f * g  # Newcombe's phi, its numerator shrunk by n/2 towards 0
    numerator = numerator - n / 2 if numerator > n / 2 else 0.0 if numerator >= 0 else numerator
    phi = numerator / math.sqrt(denominator) if denominator > 0 else 0.0
    d = p1 - p2
    dl = math.sqrt((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2)
    du = math.sqrt((u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2)
    return d - dl, d + du


def _holm(p: np.ndarray) -> np.ndarray:
    order = np.argsort(p, kind="stable")
    m = len(p)
    stepped = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out = np.empty(m)
    out[order] = np.minimum(stepped, 1.0)
    return out


def recompute(row: pd.Series, x: np.ndarray, y: np.ndarray) -> dict[str, float]:
    """Difference, both intervals, p and detectable effect of one test, from scratch."""
    d = x - y
    out = {"diff": float(np.mean(d))}
    n_boot, seed = int(row["interval_resamples"]), int(row["seed"])
    if row["kind"] == "hits":
        out["low"], out["high"] = _newcombe(x, y, float(row["confidence"]))
        out["margin_low"], out["margin_high"] = _newcombe(x, y, 1 - 2 * ALPHA)
        only_a, only_b = int(np.sum((x > 0) & (y <= 0))), int(np.sum((x <= 0) & (y > 0)))
        out["p"] = 1.0 if only_a + only_b == 0 else binomtest(only_a, only_a + only_b).pvalue
        discordant = max(only_a + only_b, 1) / len(d)
        var = max(discordant - ((only_a - only_b) / len(d)) ** 2, 1 / len(d) ** 2) / len(d)
        se = math.sqrt(var)
    else:
        for level, names in ((float(row["confidence"]), ("low", "high")),
                             (1 - 2 * ALPHA, ("margin_low", "margin_high"))):  # fmt: skip
            if np.all(d == d[0]):
                out[names[0]] = out[names[1]] = out["diff"]
                continue
            res = bootstrap((d,), np.mean, n_resamples=n_boot, confidence_level=level,
                            method="percentile", rng=np.random.default_rng(seed))  # fmt: skip
            out[names[0]] = float(res.confidence_interval.low)
            out[names[1]] = float(res.confidence_interval.high)
        out["p"] = _sign_flip_p(d, int(row["n_resamples"]), seed)
        se = float(np.std(d, ddof=1)) / math.sqrt(len(d))
    m = int(row["family_size"])
    out["mde"] = (norm.ppf(1 - ALPHA / (2 * m)) + norm.ppf(0.8)) * se
    return out


#: Which record value each recomputed quantity is published as (``K_{suffix}``).
PUBLISHED = {"diff": "diff", "low": "diff_low", "high": "diff_high", "p": "p", "mde": "mde",
             "margin_low": "margin_low", "margin_high": "margin_high"}  # fmt: skip


def _differences(name: str) -> tuple[int, float, list[str]]:
    tests, pairs, values = _read(name)
    problems, largest = [], 0.0
    fresh = {}
    for _, row in tests.iterrows():
        x, y = pairs[row["test"]]
        assert len(x) == int(row["n"]), f"{name} {row['test']}: {len(x)} questions, not {row['n']}"
        fresh[row["test"]] = recompute(row, x, y)
    for _, fam in tests.groupby("family"):
        adjusted = _holm(np.array([fresh[t]["p"] for t in fam["test"]]))
        for t, p in zip(fam["test"], adjusted, strict=True):
            fresh[t]["p_holm"] = float(p) if len(fam) > 1 else fresh[t]["p"]
    for _, row in tests.iterrows():
        mine, key = fresh[row["test"]], row["key"]
        for quantity, value in mine.items():
            column = {"low": "low", "high": "high", "p_holm": "p_adjusted"}.get(quantity, quantity)
            targets = [(f"{name} {row['test']} {column} (tests file)", float(row[column]))]
            suffix = PUBLISHED.get(quantity, "p_holm" if int(row["family_size"]) > 1 else "")
            if key and suffix and f"{key}_{suffix}" in values:
                targets.append((f"{name}.{key}_{suffix}", float(values[f"{key}_{suffix}"])))
            for where, published in targets:
                gap = abs(value - published)
                largest = max(largest, gap)
                if gap > TOLERANCE * max(1.0, abs(published)):
                    problems.append(f"{where}: published {published!r}, recomputed {value!r}")
    return len(tests), largest, problems


@pytest.mark.parametrize("name", RECORDS)
def test_every_published_test_recomputes(name: str) -> None:
    """The record's numbers from its evidence files, by scipy and numpy alone."""
    n, largest, problems = _differences(name)
    print(f"{name}: {n} tests recomputed, largest difference {largest:.3g}")
    assert problems == []


def test_every_record_with_tests_has_evidence() -> None:
    """A record that publishes a difference with an interval has its evidence files."""
    for file in sorted(RESULTS.glob("dr*.json")):
        values = json.loads(file.read_text(encoding="utf-8"))["values"]
        if any(k.endswith("_diff_low") for k in values):
            assert file.stem in RECORDS, f"{file.name} publishes tests but has no evidence files"


def test_the_numpy_sign_flips_are_scipys() -> None:
    """The randomisation p-value computed here is scipy's permutation_test's, bit for bit."""
    rng = np.random.default_rng(7)
    for n, shift in ((30, 0.0), (80, 0.1), (200, 0.05)):
        d = rng.normal(shift, 1.0, n)
        assert _sign_flip_p(d, 2_000, 3) == _scipy_p(d, 2_000, 3)


def test_the_newcombe_interval_matches_a_published_example() -> None:
    """The worked example of Fagerland, Lydersen & Laake (2014), *Statistical Analysis of
    Contingency Tables*, ch. 8 (Newcombe's method 10): 24 both, 12 and 2 discordant,
    2 neither give 0.068 to 0.415."""
    x = np.array([1] * 36 + [0] * 4, dtype=float)
    y = np.array([1] * 24 + [0] * 12 + [1] * 2 + [0] * 2, dtype=float)
    low, high = _newcombe(x, y, 0.95)
    assert (round(low, 3), round(high, 3)) == (0.068, 0.415)


def test_the_evidence_page_runs(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    """The code of the site's page on re-testing a claim runs as written, from the
    repository's root, and prints the published difference."""
    import re

    text = (ROOT / "docs" / "evidence.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)
    assert len(blocks) >= 2
    monkeypatch.chdir(ROOT)
    scope: dict[str, object] = {}
    for block in blocks:
        exec(compile(block, "docs/evidence.md", "exec"), scope)
    values = json.loads((RESULTS / "dr001.json").read_text(encoding="utf-8"))["values"]
    shown = capsys.readouterr().out
    assert f"{values['scifact_hybrid_abstracts_diff']:+.3f}" in shown
