"""Tests for hierret.evaluation.stats: pinned to published figures, then properties."""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import bootstrap, permutation_test
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests

from hierret.evaluation.stats import (
    BootstrapMethod,
    Interval,
    holm,
    mcnemar_exact,
    mean_interval,
    newcombe_paired_interval,
    paired_bootstrap,
    paired_proportions,
    paired_randomization,
    wilson_interval,
)
from hierret.evaluation.stats.resampling import _sign_flip_means


def _limits(ci: Interval, digits: int = 3) -> tuple[float, float]:
    return round(ci.low, digits), round(ci.high, digits)


def _study_arms() -> tuple[list[bool], list[bool]]:
    """Return the source study's 40 queries: both 24, only A 12, only B 2, neither 2."""
    a = [True] * 24 + [True] * 12 + [False] * 2 + [False] * 2
    b = [True] * 24 + [False] * 12 + [True] * 2 + [False] * 2
    return a, b


# --- Published figures ---------------------------------------------------------------


def test_wilson_pins_from_study() -> None:
    assert _limits(wilson_interval(36, 40)) == (0.769, 0.960)
    assert _limits(wilson_interval(26, 40)) == (0.495, 0.779)
    assert wilson_interval(36, 40).estimate == 0.9


def test_paired_proportions_pins_from_study() -> None:
    a, b = _study_arms()
    r = paired_proportions(a, b)
    assert (r.n, r.both, r.only_a, r.only_b, r.neither) == (40, 24, 12, 2, 2)
    assert round(r.difference.estimate, 3) == 0.250
    assert _limits(r.difference) == (0.068, 0.415)
    assert round(r.mcnemar_p, 4) == 0.0129
    assert _limits(r.arm_a) == (0.769, 0.960)
    assert _limits(r.arm_b) == (0.495, 0.779)
    assert r.difference == newcombe_paired_interval(24, 12, 2, 2)
    assert round(mcnemar_exact(12, 2), 4) == 0.0129


def test_newcombe_pin_fagerland_cavo_2012() -> None:
    # Fagerland, Lydersen & Laake (2014), Statistical Analysis of Contingency Tables,
    # ch. 8: complete response before/after consolidation therapy (Cavo et al., 2012),
    # table [[59, 6], [16, 80]]; Newcombe square-and-add (method 10) interval
    # -0.0621 (95% CI -0.1186 to -0.0046), as also pinned in the book's R package
    # `contingencytables` (tests/testthat/test-ch8.R).
    ci = newcombe_paired_interval(59, 6, 16, 80)
    assert round(ci.estimate, 4) == -0.0621
    assert _limits(ci, 4) == (-0.1186, -0.0046)


# --- Newcombe method 10: properties ---------------------------------------------------

counts = st.integers(min_value=0, max_value=60)
tables = st.tuples(counts, counts, counts, counts).filter(lambda t: sum(t) > 0)


@given(tables, st.sampled_from([0.8, 0.9, 0.95, 0.99]))
def test_newcombe_contains_estimate_within_bounds(
    table: tuple[int, int, int, int], confidence: float
) -> None:
    ci = newcombe_paired_interval(*table, confidence=confidence)
    n = sum(table)
    assert ci.estimate == pytest.approx((table[1] - table[2]) / n)
    assert -1.0 <= ci.low <= ci.estimate <= ci.high <= 1.0
    assert ci.confidence == confidence


@given(tables)
def test_newcombe_swapping_arms_negates_interval(table: tuple[int, int, int, int]) -> None:
    both, only_a, only_b, neither = table
    ci = newcombe_paired_interval(both, only_a, only_b, neither)
    swapped = newcombe_paired_interval(both, only_b, only_a, neither)
    assert swapped.low == pytest.approx(-ci.high, abs=1e-12)
    assert swapped.high == pytest.approx(-ci.low, abs=1e-12)


@given(tables)
def test_newcombe_narrows_as_n_grows(table: tuple[int, int, int, int]) -> None:
    widths = [
        (ci.high - ci.low)
        for k in (1, 2, 4)
        for ci in [newcombe_paired_interval(*(k * x for x in table))]
    ]
    assert widths[0] > widths[1] > widths[2]


@given(tables)
def test_newcombe_widens_with_confidence(table: tuple[int, int, int, int]) -> None:
    narrow = newcombe_paired_interval(*table, confidence=0.9)
    wide = newcombe_paired_interval(*table, confidence=0.99)
    assert wide.low <= narrow.low
    assert narrow.high <= wide.high


@given(tables)
def test_paired_proportions_agrees_with_counts(table: tuple[int, int, int, int]) -> None:
    both, only_a, only_b, neither = table
    a = [1] * both + [1] * only_a + [0] * only_b + [0] * neither
    b = [1] * both + [0] * only_a + [1] * only_b + [0] * neither
    r = paired_proportions(a, b)
    assert (r.both, r.only_a, r.only_b, r.neither) == table
    assert r.difference == newcombe_paired_interval(*table)
    assert r.mcnemar_p == mcnemar_exact(only_a, only_b)
    assert r.arm_a == wilson_interval(both + only_a, sum(table))
    assert r.arm_b == wilson_interval(both + only_b, sum(table))


# --- Wilson and McNemar -----------------------------------------------------------------


@given(st.integers(1, 500).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson_contains_estimate(case: tuple[int, int]) -> None:
    successes, n = case
    ci = wilson_interval(successes, n)
    assert 0.0 <= ci.low <= ci.estimate <= ci.high <= 1.0


@pytest.mark.parametrize(("only_a", "only_b"), [(12, 2), (0, 5), (7, 7), (3, 11), (1, 0)])
def test_mcnemar_matches_statsmodels_exact(only_a: int, only_b: int) -> None:
    expected = mcnemar([[10, only_a], [only_b, 10]], exact=True).pvalue
    assert mcnemar_exact(only_a, only_b) == pytest.approx(expected, rel=1e-12)
    assert mcnemar_exact(only_a, only_b) == mcnemar_exact(only_b, only_a)


def test_mcnemar_without_discordant_pairs_is_one() -> None:
    assert mcnemar_exact(0, 0) == 1.0
    assert paired_proportions([True, False], [True, False]).mcnemar_p == 1.0


def test_results_are_python_scalars() -> None:
    a, b = _study_arms()
    r = paired_proportions(np.array(a), np.array(b))
    for ci in (r.difference, r.arm_a, r.arm_b):
        assert all(type(v) is float for v in (ci.estimate, ci.low, ci.high, ci.confidence))
    assert type(r.mcnemar_p) is float
    assert all(type(v) is int for v in (r.n, r.both, r.only_a, r.only_b, r.neither))
    x, y = np.linspace(0, 1, 12), np.linspace(0, 1, 12) ** 2
    ci = paired_bootstrap(x, y, n_resamples=199)
    assert all(type(v) is float for v in (ci.estimate, ci.low, ci.high))
    assert type(paired_randomization(x, y, n_resamples=199)) is float
    assert all(type(v) is float for v in holm({"x": np.float64(0.2)}).values())


# --- Holm -------------------------------------------------------------------------------


def test_holm_hand_example() -> None:
    # Sorted 0.01, 0.03, 0.04 -> 3 * 0.01, 2 * 0.03, max(1 * 0.04, 0.06).
    adjusted = holm({"A vs B": 0.01, "A vs C": 0.04, "B vs C": 0.03})
    assert list(adjusted) == ["A vs B", "A vs C", "B vs C"]
    assert adjusted == pytest.approx({"A vs B": 0.03, "A vs C": 0.06, "B vs C": 0.06})
    assert holm({"x": 0.5, "y": 0.6}) == {"x": 1.0, "y": 1.0}
    assert holm({"only": 0.2}) == {"only": 0.2}


@pytest.mark.parametrize("seed", range(5))
def test_holm_matches_statsmodels(seed: int) -> None:
    p = np.random.default_rng(seed).uniform(0, 0.2, size=7)
    names = [f"c{i}" for i in range(p.size)]
    expected = multipletests(p, method="holm")[1]
    adjusted = holm(dict(zip(names, p.tolist(), strict=True)))
    assert [adjusted[k] for k in names] == pytest.approx(expected.tolist())


# --- Bootstrap and randomisation ------------------------------------------------------


def _clearly_better(n: int = 30) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    b = rng.uniform(0.2, 0.6, size=n)
    return b + rng.uniform(0.1, 0.3, size=n), b


@pytest.mark.parametrize("method", ["BCa", "percentile"])
def test_paired_bootstrap_is_seeded_and_contains_difference(method: BootstrapMethod) -> None:
    a, b = _clearly_better()
    first = paired_bootstrap(a, b, n_resamples=999, seed=1, method=method)
    again = paired_bootstrap(a, b, n_resamples=999, seed=1, method=method)
    other = paired_bootstrap(a, b, n_resamples=999, seed=2, method=method)
    assert first == again
    assert other != first
    assert first.estimate == pytest.approx(float(np.mean(a - b)))
    assert 0.0 < first.low <= first.estimate <= first.high


@pytest.mark.parametrize("method", ["BCa", "percentile"])
def test_paired_bootstrap_resamples_pairs_like_scipy_paired(method: BootstrapMethod) -> None:
    rng = np.random.default_rng(1)
    a, b = rng.random(25), rng.random(25)

    def diff(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.asarray(np.mean(x, axis=axis) - np.mean(y, axis=axis))

    ref = bootstrap(
        (a, b), diff, paired=True, n_resamples=999, method=method, rng=np.random.default_rng(3)
    ).confidence_interval
    ours = paired_bootstrap(a, b, n_resamples=999, seed=3, method=method)
    assert (ours.low, ours.high) == pytest.approx((ref.low, ref.high), abs=1e-12)


def test_identical_arms_give_zero_difference_and_p_one() -> None:
    x = np.random.default_rng(0).random(20)
    assert paired_bootstrap(x, x, n_resamples=99) == Interval(0.0, 0.0, 0.0, 0.95)
    assert paired_randomization(x, x, n_resamples=99) == 1.0


def test_mean_interval() -> None:
    x = np.random.default_rng(4).uniform(0, 1, size=40)
    ci = mean_interval(x, n_resamples=999, seed=5)
    assert ci == mean_interval(x, n_resamples=999, seed=5)
    assert ci.estimate == pytest.approx(float(np.mean(x)))
    assert ci.low < ci.estimate < ci.high
    assert mean_interval([0.3, 0.3], n_resamples=9) == Interval(0.3, 0.3, 0.3, 0.95)


def test_randomization_clearly_better_arm_is_small_and_seeded() -> None:
    a, b = _clearly_better()
    p = paired_randomization(a, b, n_resamples=999, seed=1)
    assert p == paired_randomization(a, b, n_resamples=999, seed=1)
    assert p <= 0.002
    assert paired_randomization(b, a, n_resamples=999, seed=1) == p


def test_randomization_exact_matches_enumeration() -> None:
    # 2**8 = 256 <= n_resamples, so scipy enumerates every sign pattern.
    rng = np.random.default_rng(11)
    a, b = rng.random(8), rng.random(8)
    d = a - b
    observed = abs(d.mean())
    flipped = [abs((d * np.array(s)).mean()) for s in itertools.product([1, -1], repeat=8)]
    expected = np.mean([m >= observed - 1e-12 for m in flipped])
    assert paired_randomization(a, b, n_resamples=1000) == pytest.approx(expected)
    # All five differences positive: only the all-+ and all-- patterns are as extreme.
    assert paired_randomization([2, 3, 4, 5, 6], [1, 1, 1, 1, 1]) == pytest.approx(2 / 32)


@pytest.mark.parametrize(
    ("kind", "n", "n_resamples", "seed"),
    [
        ("scores", 2, 3, 0),  # 4 patterns > 3 resamples: random, not exact
        ("scores", 13, 10_000, 1),  # 2**13 <= 10_000: scipy's exact test
        ("scores", 14, 10_000, 2),
        ("scores", 40, 999, 3),
        ("scores", 300, 10_000, 0),
        ("hits", 30, 999, 4),  # 0/±1 differences: null means tie the observed one
        ("hits", 300, 10_000, 5),
        ("hits", 300, 10_000, 8),
        ("zeros", 20, 999, 6),
        ("tenths", 60, 10_000, 9),  # equal sums that round differently: scipy's tolerance
        ("tiny", 50, 999, 7),  # observed mean a few ulps from 0
    ],
)
def test_randomization_equals_scipy_permutation_test_bit_for_bit(
    kind: str, n: int, n_resamples: int, seed: int
) -> None:
    rng = np.random.default_rng(n)
    if kind == "hits":
        a, b = (rng.random(n) < 0.6).astype(float), (rng.random(n) < 0.5).astype(float)
    elif kind == "zeros":
        a = b = rng.random(n)
    elif kind == "tenths":
        a, b = rng.integers(0, 10, n) / 10, rng.integers(0, 10, n) / 10
    elif kind == "tiny":
        a, b = rng.random(n), rng.random(n)
        b = b - (b.mean() - a.mean())
    else:
        a, b = rng.random(n), rng.random(n)

    def mean(x: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.asarray(np.mean(x, axis=axis))

    args = {"permutation_type": "samples", "vectorized": True, "n_resamples": n_resamples}
    expected = permutation_test((a - b,), mean, rng=np.random.default_rng(seed), **args)
    ours = paired_randomization(a, b, n_resamples=n_resamples, seed=seed)
    assert ours == min(1.0, float(expected.pvalue))
    if n_resamples < 2**n:  # the random test: hierret's null distribution is scipy's, bit for bit
        null = _sign_flip_means(a - b, n_resamples, np.random.default_rng(seed))
        assert np.array_equal(null, expected.null_distribution)
    if kind == "hits":  # the case the tie tolerance exists for: some null means equal it
        null = expected.null_distribution
        assert np.any(np.abs(null) == abs(float(expected.statistic)))


# --- Validation ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: wilson_interval(41, 40), r"successes=41 exceeds n=40"),
        (lambda: wilson_interval(0, 0), r"n=0"),
        (lambda: wilson_interval(-1, 10), r"successes=-1 is negative"),
        (lambda: wilson_interval(3, 10, confidence=1.0), r"confidence=1\.0"),
        (lambda: wilson_interval(3, 10, confidence=0), r"confidence=0 "),
        (lambda: wilson_interval(3, 10, confidence=95), r"confidence=95 "),
        (lambda: newcombe_paired_interval(0, 0, 0, 0), r"n=0"),
        (lambda: newcombe_paired_interval(1, -2, 0, 0), r"only_a=-2 is negative"),
        (lambda: mcnemar_exact(3, -1), r"only_b=-1 is negative"),
        (lambda: paired_proportions([1, 0], [1, 0, 1]), r"a has 2 values but b has 3"),
        (lambda: paired_proportions([], []), r"a is empty"),
        (lambda: paired_proportions([1, 2], [1, 0]), r"a holds values other than 0/1"),
        (lambda: paired_proportions([[1, 0]], [[1, 0]]), r"a has shape \(1, 2\)"),
        (lambda: paired_bootstrap([0.1, 0.2], [0.3]), r"a has 2 values but b has 1"),
        (lambda: paired_bootstrap([0.1, np.nan], [0.3, 0.4]), r"a contains NaN"),
        (lambda: paired_bootstrap([0.1, 0.2], [0.3, 0.4], n_resamples=0), r"n_resamples=0"),
        (lambda: paired_bootstrap([0.1], [0.3], confidence=-0.5), r"confidence=-0\.5"),
        (lambda: mean_interval([]), r"x is empty"),
        (lambda: paired_randomization([0.1], [0.2, 0.3]), r"a has 1 values but b has 2"),
        (lambda: holm({}), r"pvalues is empty"),
        (lambda: holm({"A vs B": 1.5}), r"pvalues\['A vs B'\]=1\.5"),
        (lambda: holm({"A vs B": float("nan")}), r"pvalues\['A vs B'\]=nan"),
    ],
)
def test_invalid_arguments_raise_value_error(call: Callable[[], object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()


def test_non_integer_count_raises_type_error() -> None:
    with pytest.raises(TypeError, match=r"successes=3\.5 is not an integer"):
        wilson_interval(3.5, 10)  # type: ignore[arg-type]


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1)), min_size=2, max_size=15),
    st.integers(0, 2**32 - 1),
)
def test_percentile_limits_lie_within_observed_differences(
    pairs: list[tuple[float, float]], seed: int
) -> None:
    a, b = np.array(pairs).T
    d = a - b
    ci = paired_bootstrap(a, b, n_resamples=199, seed=seed, method="percentile")
    assert d.min() - 1e-12 <= ci.low <= ci.high <= d.max() + 1e-12
    assert d.min() - 1e-12 <= ci.estimate <= d.max() + 1e-12


def test_stats_settings_refuse_what_no_study_could_use() -> None:
    from hierret.evaluation.stats import DEFAULT_STATS, StatsSettings

    assert StatsSettings(0.95, 10_000, 0) == DEFAULT_STATS
    with pytest.raises(ValueError, match=r"confidence=1\.0"):
        StatsSettings(confidence=1.0)
    with pytest.raises(ValueError, match="n_resamples=0"):
        StatsSettings(n_resamples=0)
    with pytest.raises(TypeError, match="n_resamples=True"):
        StatsSettings(n_resamples=True)
    with pytest.raises(ValueError, match="seed=-1"):
        StatsSettings(seed=-1)
    with pytest.raises(AttributeError):
        DEFAULT_STATS.seed = 1  # type: ignore[misc]  # frozen, like a Profile
