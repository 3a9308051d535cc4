"""The hierarchy study's grid: corpora at passage sizes, their runs, tests and record keys."""

from __future__ import annotations

import pandas as pd
import pytest
from pandas import testing as pd_testing

import hierret.study.experiment as experiment
from hierret.datasets import load
from hierret.encoders import HashEncoder
from hierret.evaluation.stats import StatsSettings
from hierret.search.profile import Profile
from hierret.study.hierarchies import KEYS, Hierarchies
from hierret.study.oracle import Oracle
from hierret.study.params import RunParameters, check_notebook
from hierret.study.result import between

ARMS = {"chunk": Profile(), "rawspan": Profile(level="sections")}
FAMILY = [("rawspan", "chunk")]


@pytest.fixture(scope="module")
def grid() -> Hierarchies:
    return Hierarchies.load(
        ["python-reference"],
        [600, 1200],
        HashEncoder(dimension=32),
        max_queries=8,
        max_docs=8,
        k=20,
        n_resamples=200,
    )


def test_each_cell_has_its_own_hierarchy_at_its_size(grid: Hierarchies) -> None:
    assert list(grid.hierarchies) == [("python-reference", 600), ("python-reference", 1200)]
    small, large = (grid.hierarchies["python-reference", c] for c in (600, 1200))
    assert len(small.units("passages")) > len(large.units("passages"))
    assert max(u.end - u.start for u in small.units("passages")) <= 600
    assert grid.stats == StatsSettings(0.95, 200, 0)
    assert grid.searchers["python-reference", 600].hierarchy is small
    assert grid.corpora == ["python-reference"]
    assert grid.table().loc["python-reference", "questions"] == 8
    identity = grid.identity(parameters={"k": 20})
    assert list(identity) == ["encoder", "parameters", "corpora"]
    assert identity["corpora"]["python-reference"]["queries"] == 8


def test_a_grid_without_corpora_or_sizes_says_what_to_give() -> None:
    with pytest.raises(ValueError, match=r"at least one corpus and one passage size"):
        Hierarchies({}, [900], HashEncoder(dimension=8))
    bundle = load("python-reference", max_queries=2, max_docs=2)
    with pytest.raises(ValueError, match=r"chunk_chars=\[900\]"):
        Hierarchies({"p": bundle}, [], HashEncoder(dimension=8))


def test_compare_is_experiment_run_on_every_cell(grid: Hierarchies) -> None:
    got = grid.compare(ARMS, targets=["sections"], baseline="chunk", family=FAMILY)
    assert list(got) == list(grid.searchers)
    for cell, result in got.items():
        alone = experiment.run(
            ARMS,
            grid.bundles[cell[0]].queries,
            searcher=grid.searchers[cell],
            targets=["sections"],
            baseline="chunk",
            family=FAMILY,
            k=grid.k,
            stats=grid.stats,
        )
        pd_testing.assert_frame_equal(
            result.table("sections", "ndcg@10"), alone.table("sections", "ndcg@10")
        )
        assert result.family == FAMILY


def test_tests_are_each_family_per_cell_then_the_sizes(grid: Hierarchies) -> None:
    results = grid.compare(ARMS, targets=["sections"], baseline="chunk")
    got = grid.tests(results, "ndcg@10", {"levels": FAMILY}, across="chunk")
    assert list(got.index.names) == ["family", "corpus", "chars", "comparison"]
    cell = ("python-reference", 600)
    by_hand = results[cell].tests("ndcg@10", family=FAMILY)
    pd_testing.assert_frame_equal(
        got.loc[("levels", *cell)][["diff", "p_holm"]],
        by_hand[["diff", "p_holm"]].rename_axis("comparison"),
    )
    sizes = between({c: results["python-reference", c] for c in (600, 1200)}, "chunk", "ndcg@10")
    pd_testing.assert_frame_equal(
        got.loc[("size", *cell)][["diff"]], sizes[["diff"]].rename_axis("comparison")
    )
    assert got.loc["size"].index.get_level_values("chars").unique().tolist() == [600]


def test_values_key_each_kind_of_table_as_the_records_do(grid: Hierarchies) -> None:
    results = grid.compare(ARMS, targets=["sections"], baseline="chunk")
    oracle = Oracle(results, ["sections"], "ndcg@10")
    values = grid.values(arms=oracle.tables, corpora=grid.table())
    mean = oracle.tables.loc[("python-reference", 600, "sections", "rawspan"), "mean"]
    assert values["pyref_600_section_rawspan"] == mean
    assert "pyref_600_section_rawspan_low" in values
    assert values["questions_pyref"] == 8
    swept = pd.DataFrame(
        {"vectors": ["rawspan"], "section_weight": [0.7], "target": ["sections"], "mean": [0.5]}
    )
    assert grid.values(weights=swept) == {"weight_rawspan_07_sec": 0.5}
    with pytest.raises(ValueError, match=r"no keys for tables \['weight'\]: .* weights"):
        grid.values(weight=swept)
    assert set(KEYS) >= {"arms", "corpora", "tests", "tests_at", "out_of_fold", "pooling"}


def test_sweep_and_pooling_read_one_cell(grid: Hierarchies) -> None:
    grid.compare({"sections": Profile(level="sections", vectors="rawspan")}, targets=["sections"])
    pooled = grid.pooling("rawspan")
    assert pooled.index.get_level_values("corpus").tolist() == ["python-reference"]
    swept = grid.sweep(
        Profile(level="fused"),
        {"section_weight": [0.0, 1.0]},
        "some/dir/python-reference",
        targets=["sections"],
    )
    assert swept.table()["section_weight"].tolist() == [0.0, 1.0]
    with pytest.raises(KeyError, match=r"\('python-reference', 900\) is not a cell"):
        grid.sweep(Profile(level="fused"), {"section_weight": [0.0]}, "python-reference", 900)


def test_oracle_plot_draws_each_corpus_and_target_at_one_size(grid: Hierarchies) -> None:
    results = grid.compare(ARMS, targets=["documents", "sections"], baseline="chunk")
    oracle = Oracle(results, ["documents", "sections"], "ndcg@10")
    fig = oracle.plot(1200, label="nDCG@10", with_oracle=False)
    titles = [ax.get_title() for ax in fig.axes]
    assert titles == ["python-reference · documents", "python-reference · sections"]
    assert fig.axes[0].get_xlabel() == "nDCG@10 (mean, 95% interval)"


def test_presets_by_notebook_name_give_its_run_times() -> None:
    cell = "size = 'smoke'\nmax_queries = None\nmax_docs = None"
    ns: dict[str, object] = {
        "In": ["", cell, "check_notebook()"],
        "size": "smoke",
        "max_queries": None,
        "max_docs": None,
    }
    run = check_notebook(ns, presets="01_structure")
    assert run.notebook == "01_structure"
    assert ns["max_queries"] == 10  # the smoke preset, found by the notebook's name
    caption = run.times().caption
    assert caption is not None
    assert "Run sizes" in caption
    with pytest.raises(ValueError, match=r"no presets for a notebook '01_struct'"):
        check_notebook(ns, presets="01_struct")
    with pytest.raises(ValueError, match=r"do not name their notebook"):
        RunParameters(["k"], ns).times()


def test_a_kind_without_columns_records_every_column_of_its_table_not_its_index(
    grid: Hierarchies,
) -> None:
    context = pd.DataFrame(
        {"tokens": [40.0], "alone": [0.25]},
        index=pd.MultiIndex.from_tuples([("scifact-sections", 900)], names=["corpus", "chars"]),
    )
    assert grid.values(late=context) == {
        "late_scifact_900_tokens": 40.0,
        "late_scifact_900_alone": 0.25,
    }
    costs = pd.DataFrame({"seconds": [1.5]}, index=pd.Index(["plain"], name="method"))
    assert grid.values(cost=costs) == {"cost_plain_seconds": 1.5}


def test_the_grid_hands_on_the_ledger_its_results_keep_their_tests_in(grid: Hierarchies) -> None:
    results = grid.compare(ARMS, targets=["sections"], baseline="chunk", family=FAMILY)
    assert all(r.ledger is grid.ledger for r in results.values())
