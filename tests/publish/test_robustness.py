"""Issue 39, items 4 and 5: robustness shown for every "holds", Monte-Carlo error out of
verdicts (the right standard error, floor p as "≤", detectable effects rounded up, the
one-family line from the p the rows print). Synthetic evidence frames throughout."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from hierret.evaluation.stats import evidence, holm, montecarlo, paired_randomization
from hierret.evaluation.stats import resampling as resampling_module
from hierret.publish import claims, robustness
from hierret.publish.tables import cells as table_cells

# ---- Monte-Carlo error -----------------------------------------------------------------


def test_the_standard_error_of_a_two_sided_p_is_p_2_minus_p() -> None:
    """The spread of p over 400 seeds matches √(p(2−p)/B), and is well above the
    proportion's √(p(1−p)/B) that the published rule used."""
    d = np.random.default_rng(2).normal(0.15, 0.3, 20)
    ps = np.array([paired_randomization(d, np.zeros(20), n_resamples=2000, seed=k)
                   for k in range(400)])  # fmt: skip
    p, spread = float(ps.mean()), float(ps.std(ddof=1))
    right = montecarlo.standard_error(p, 2000)
    assert spread == pytest.approx(right, rel=0.15)
    assert spread > 1.25 * montecarlo.standard_error(p, 2000, "p(1-p)")


def test_the_redraw_rule_takes_its_variance_from_the_setting(monkeypatch) -> None:
    """DR-001's scifact_bm25_abstracts (p 0.0218, adjusted 0.0654 ×3): drawn again by the
    corrected rule, the default, and not by the rule of the records before it."""
    q = tuple(f"q{i}" for i in range(300))
    t = evidence.PairedTest("mean", "a", "b", q, (0.0,) * 300, (0.0,) * 300, 0.0, 0.0, 0.0,
                            0.0218, 0.95, 10_000, 0)  # fmt: skip
    assert evidence.REDRAW_VARIANCE == "p(2-p)"  # the two-sided p's variance
    assert evidence._near_alpha(t, 0.0654)
    monkeypatch.setattr(evidence, "REDRAW_VARIANCE", "p(1-p)")
    assert not evidence._near_alpha(t, 0.0654)


def test_bad_input_to_the_standard_error_is_refused() -> None:
    with pytest.raises(ValueError, match="probability"):
        montecarlo.standard_error(1.5, 100)
    with pytest.raises(ValueError, match="at least 1"):
        montecarlo.standard_error(0.5, 0)
    with pytest.raises(ValueError, match="variance"):
        montecarlo.standard_error(0.5, 100, "p(3-p)")  # type: ignore[arg-type]


def test_sign_flips_drawn_in_blocks_are_the_same(monkeypatch) -> None:
    d = np.random.default_rng(1).normal(size=37)
    whole = resampling_module._sign_flip_means(d, 3001, np.random.default_rng(0))
    monkeypatch.setattr(resampling_module, "_BLOCK", 100)  # 2 resamples a block, odd sizes
    blocks = resampling_module._sign_flip_means(d, 3001, np.random.default_rng(0))
    assert np.array_equal(whole, blocks)


# ---- detectable effects rounded up, floor p as "≤" -------------------------------------


@pytest.mark.parametrize(("mde", "printed"), [(0.0712, "0.08"), (0.07, "0.07"),
                                              (0.0601, "0.07"), (0.1, "0.10")])  # fmt: skip
def test_a_detectable_effect_is_rounded_up(mde: float, printed: str) -> None:
    assert claims.verdict(">", 0.01, 0.4, detectable=mde) == (
        f"not established (could detect ≥ {printed})"
    )


def test_a_table_prints_a_floor_p_and_its_adjusted_p_as_bounds() -> None:
    t = pd.DataFrame({"mean": [0.8, 0.7], "p": [2 / 10_001, 0.0004], "p_holm": [0.0004, 0.0008]})
    got = table_cells(t, n_resamples=10_000)
    assert list(got["p"]) == ["≤ 0.0002", "0.0004"]
    assert list(got["p_holm"]) == ["≤ 0.0004", "0.0008"]
    assert list(table_cells(t)["p"]) == ["0.0002", "0.0004"]  # no resamples: no floor known


# ---- robustness ------------------------------------------------------------------------


def test_holm_without_statsmodels_gc_is_statsmodels_holm() -> None:
    rng = np.random.default_rng(0)
    for m in (1, 2, 5, 24, 78):
        p = {f"t{i}": float(v) for i, v in enumerate(rng.uniform(0, 0.2, m))}
        p |= {"tie_a": 0.01, "tie_b": 0.01}
        assert robustness._holm(p) == holm(p)


def test_the_rank_test_is_scipys_wilcoxon_without_zeros() -> None:
    from scipy.stats import wilcoxon

    a = np.array([0.5, 0.7, 0.7, 0.2, 0.9, 0.3, 0.8, 0.6, 0.1, 0.4, 0.55, 0.65])
    b = np.array([0.4, 0.7, 0.5, 0.1, 0.6, 0.3, 0.5, 0.61, 0.0, 0.2, 0.35, 0.7])
    p, sign = robustness.rank_test(a, b)
    d = (a - b)[a != b]
    want = wilcoxon(d, correction=False, method="asymptotic").pvalue  # ties: no exact
    assert p == pytest.approx(want)
    assert sign == 1


def test_families_are_pooled_across_corpora_by_name() -> None:
    tests = pd.DataFrame({
        "test": ["T1", "T2", "T3", "T4", "T5"],
        "family": ["F1", "F1", "F2", "F3", "F4"],
        "family_name": ["study, python-reference 900", "study, python-reference 900",
                        "study, scifact-sections 900", "study, scifact-sections 1800", "ndcg"],
    })  # fmt: skip
    assert robustness.across(tests, "T1") == (["T1", "T2", "T3"], 2)
    assert robustness.across(tests, "T4") == (["T4"], 1)
    assert robustness.across(tests, "T5") == (["T5"], 1)


def _record(
    d_pyref: np.ndarray, d_other: np.ndarray, p: tuple[float, float], n_resamples: int = 10_000
) -> dict[str, dict[str, object]]:
    """A record with one published test (T1, key ``d``, Python reference) and the same
    family on SciFact (T2), each with its per-question differences."""
    tests = pd.DataFrame({
        "test": ["T1", "T2"], "key": ["d", ""], "kind": ["mean", "mean"],
        "n": [len(d_pyref), len(d_other)], "p": list(p), "family": ["F1", "F2"],
        "family_name": ["study, pyref", "study, scifact"], "family_size": [1, 1],
        "n_resamples": [n_resamples] * 2, "seed": [0, 0],
    })  # fmt: skip
    questions = pd.concat([
        pd.DataFrame({"test": t, "query": [f"q{i}" for i in range(len(d))], "a": d,
                      "b": np.zeros(len(d))})
        for t, d in (("T1", d_pyref), ("T2", d_other))
    ])  # fmt: skip
    values = {"d_diff": float(np.mean(d_pyref)), "d_diff_low": 0.01, "d_diff_high": 0.3,
              "d_p": p[0], "d_family_size": 1, "d_mde": 0.05, "d_margin_low": 0.0,
              "d_margin_high": 0.2}  # fmt: skip
    return {"dr009": {"values": values, "evidence": tests, "questions": questions}}


def _claim() -> claims.Claim:
    return claims.Claim("DR-009", "C1", "x", "dr009.d", ">", ("",) * 7, 1)


def test_a_holds_that_a_rank_test_does_not_keep_is_marked_fragile() -> None:
    """A few large gains and many small losses: the mean holds, the ranks point the other way."""
    d = np.array([1.0] * 8 + [-0.05 - 0.001 * i for i in range(32)])
    results = _record(d, d, (0.001, 0.001))
    cell = claims.cells(_claim(), results)[-1]
    assert cell.startswith("holds (fragile: Wilcoxon ")
    assert "the other way" in cell
    assert robustness.base(cell) == "holds"


def test_a_holds_that_its_family_across_corpora_does_not_keep_is_marked_fragile() -> None:
    d = np.random.default_rng(0).normal(0.3, 0.2, 40)
    # alone 0.03; pooled with 0.04: 2 × 0.03 = 0.06 (resamples enough that 0.06 is not
    # within Monte-Carlo error of 0.05, so nothing is drawn again)
    results = _record(d, d, (0.03, 0.04), n_resamples=1_000_000)
    cell = claims.cells(_claim(), results)[-1]
    assert cell == "holds (fragile: Wilcoxon < 0.0001; across 2 corpora 0.06)"


def test_a_robust_holds_says_so() -> None:
    d = np.random.default_rng(0).normal(0.3, 0.2, 40)
    cell = claims.cells(_claim(), _record(d, d, (0.001, 0.3)))[-1]
    assert cell == "holds (robust: Wilcoxon < 0.0001; across 2 corpora 0.002)"


def test_on_hit_rates_the_rank_test_is_mcnemars_own() -> None:
    """0/1 outcomes: the signed-rank test of ±1 differences is the sign test on the
    discordant questions, McNemar's exact test, which the row already used."""
    hits = np.array([1.0] * 30 + [0.0] * 10)
    results = _record(hits, hits, (0.001, 0.5))
    results["dr009"]["evidence"]["kind"] = ["hits", "hits"]  # type: ignore[index]
    cell = claims.cells(_claim(), results)[-1]
    assert cell == "holds (robust: Wilcoxon = McNemar; across 2 corpora 0.002)"


def test_a_row_that_does_not_hold_carries_no_robustness() -> None:
    d = np.random.default_rng(0).normal(0.3, 0.2, 40)
    results = _record(d, d, (0.2, 0.3))
    assert claims.cells(_claim(), results)[-1].startswith("not established (could detect")


# ---- the one-family line ---------------------------------------------------------------


def test_a_floor_p_makes_the_one_family_line_say_could() -> None:
    """p at its floor with 99 resamples (0.02) is a bound: pooled over 3 tests the bound
    is 0.06, but the true p may be far smaller, so the verdict only could change."""
    tests = pd.DataFrame({"test": ["T1", "T2", "T3"], "key": ["d", "", ""],
                          "kind": ["mean"] * 3, "n": [40] * 3, "p": [0.02, 0.3, 0.4],
                          "n_resamples": [99] * 3, "seed": [0] * 3})  # fmt: skip
    values = {"d_diff": 0.1, "d_p": 0.02}
    line = claims.sensitivity("DR-009", {"dr009": {"values": values, "evidence": tests}},
                              [_claim()])  # fmt: skip
    assert line.endswith("C1 could read not established (a p at its resampling floor is a bound).")


def test_a_pooled_p_within_monte_carlo_error_is_drawn_again() -> None:
    """Published p 0.026 at 1,000 resamples pooled with a p of 0.9: 0.052, within three
    standard errors of 0.05; drawn again at 10,000 its p is about 0.008, and no verdict
    changes (the old line said "C1 would read not established")."""
    a = np.random.default_rng(1).uniform(0, 1, 30)
    b = a - np.random.default_rng(1).normal(0.1, 0.2, 30)
    assert paired_randomization(a, b, n_resamples=10_000, seed=0) < 0.01
    tests = pd.DataFrame({"test": ["T1", "T2"], "key": ["d", ""], "kind": ["mean"] * 2,
                          "n": [30, 30], "p": [0.026, 0.9], "n_resamples": [1000] * 2,
                          "seed": [0, 0]})  # fmt: skip
    questions = pd.DataFrame({"test": ["T1"] * 30 + ["T2"] * 30, "query": list(range(60)),
                              "a": np.r_[a, a], "b": np.r_[b, a]})  # fmt: skip
    values = {"d_diff": float(np.mean(a - b)), "d_p": 0.026}
    results = {"dr009": {"values": values, "evidence": tests, "questions": questions}}
    line = claims.sensitivity("DR-009", results, [_claim()])
    assert line.endswith("no verdict would change.")
    del results["dr009"]["questions"]  # without the questions nothing can be drawn again
    assert claims.sensitivity("DR-009", results, [_claim()]).endswith(
        "C1 would read not established."
    )


# ---- floor p in prose ------------------------------------------------------------------


def test_a_prose_p_at_its_floor_needs_less_or_equal() -> None:
    from hierret.publish import floors

    tests = pd.DataFrame({"test": ["T1", "T2"], "key": ["x", "y"], "kind": ["mean"] * 2,
                          "n": [300, 300], "p": [2 / 10_001, 0.0004],
                          "n_resamples": [10_000] * 2})  # fmt: skip
    results = {"dr009": {"values": {}, "evidence": tests}}
    text = ("A holds (p = 0.0002<!--@dr009.x_p:.2g-->).\nB holds (adjusted p =\n"
            "0.0008<!--@dr009.x_p_holm:.2g-->), C (p = 0.0004<!--@dr009.y_p:.2g-->), and D\n"
            "(p ≤ 0.0002<!--@dr009.x_p:.2g-->).")  # fmt: skip
    found = floors.problems(text, results)
    assert [f.split(":")[0] for f in found] == ["line 1", "line 3"]
    assert "write 'p ≤ 0.0008'" in found[1]
