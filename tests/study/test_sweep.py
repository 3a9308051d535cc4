"""A sweep is experiment.run over profiles differing in some fields: same numbers, one row each."""

from __future__ import annotations

from dataclasses import replace
from functools import cache

import matplotlib
import numpy as np
import pytest

from hierret.datasets import load
from hierret.encoders import HashEncoder
from hierret.evaluation import evaluate, lift, qrels_from_evidence, stats
from hierret.evaluation.stats import StatsSettings
from hierret.publish.charts import sweep_figure
from hierret.search.profile import Profile
from hierret.search.searcher import Searcher
from hierret.structure.hierarchy import build_hierarchy
from hierret.structure.units import Query
from hierret.study import sweep

matplotlib.use("Agg")


@cache
def setup() -> tuple[Searcher, list[Query]]:
    bundle = load("python-reference", max_queries=12, max_docs=8)
    h = build_hierarchy(bundle.corpus, heading_styles=bundle.heading_styles)
    return Searcher(h, HashEncoder(dimension=64, window=48)), list(bundle.queries)


def test_each_row_is_the_profile_searched_and_judged_by_hand() -> None:
    s, queries = setup()
    fused = Profile(level="fused", pool=20)
    grid = {"vectors": ["rawspan", "centroid"], "section_weight": [0.0, 0.5, 1.0]}
    table = sweep.run(
        fused,
        grid,
        queries,
        searcher=s,
        targets=["documents", "sections"],
        k=20,
        stats=StatsSettings(n_resamples=200),
    ).table()
    assert len(table) == 2 * 2 * 3
    assert list(table.columns) == [
        "vectors",
        "section_weight",
        "target",
        "n",
        "mean",
        "low",
        "high",
    ]
    assert table["vectors"].tolist()[:6] == ["rawspan"] * 3 + ["centroid"] * 3
    h = s.hierarchy
    for row in table.itertuples():
        run = s.run(
            queries, replace(fused, vectors=row.vectors, section_weight=row.section_weight), k=20
        )
        if row.target == "documents":
            run = lift(run, h.parents("sections", "documents"))
        per_q = evaluate(run, qrels_from_evidence(queries, h.units(row.target)), ["ndcg@10"])[
            "ndcg@10"
        ]
        values = np.array([per_q[q] for q in sorted(per_q)])
        assert row.mean == pytest.approx(values.mean(), abs=1e-12)
        assert row.n == len(queries)
        assert row.low <= row.mean <= row.high
    assert table["mean"].nunique() > 2  # the settings differ in what they find


def test_hit_rates_and_bad_grids() -> None:
    s, queries = setup()
    table = sweep.run(
        Profile(level="sections"),
        {"vectors": ["rawspan"]},
        queries,
        searcher=s,
        targets=["sections"],
        metric="hit@1",
    ).table()
    assert 0.0 <= table.loc[0, "mean"] <= 1.0
    with pytest.raises(ValueError, match="unknown profile fields \\['weight'\\]"):
        sweep.run(Profile(), {"weight": [0.5]}, queries, searcher=s).table()
    with pytest.raises(ValueError, match="each once"):
        sweep.run(Profile(), {"pool": [10, 10]}, queries, searcher=s).table()
    with pytest.raises(ValueError, match="each once"):
        sweep.run(Profile(), {"pool": []}, queries, searcher=s).table()
    with pytest.raises(ValueError, match="section_weight"):
        sweep.run(Profile(level="fused"), {"section_weight": [1.5]}, queries, searcher=s).table()


def test_plot_has_a_panel_per_target_and_a_line_per_group() -> None:
    s, queries = setup()
    table = sweep.run(
        Profile(level="fused"),
        {"vectors": ["rawspan", "centroid"], "section_weight": [0.0, 1.0]},
        queries,
        searcher=s,
        targets=["documents", "sections"],
        stats=StatsSettings(n_resamples=50),
    ).table()
    fig = sweep_figure(
        table, "section_weight", by="vectors", ylabel="nDCG@10", marks=[0.65], title="animals"
    )
    assert [ax.get_title() for ax in fig.axes] == ["documents target", "sections target"]
    assert [len(ax.get_lines()) for ax in fig.axes] == [3, 3]  # two groups and the mark
    assert fig.axes[0].get_ylabel() == "nDCG@10"
    assert fig.texts[0].get_text() == "animals"


def test_out_of_fold_scores_each_question_by_a_value_chosen_without_it() -> None:
    s, queries = setup()
    grid = {"vectors": ["rawspan", "centroid"], "section_weight": [0.0, 0.5, 1.0]}
    swept = sweep.run(
        Profile(level="fused", pool=20),
        grid,
        queries,
        searcher=s,
        targets=["documents", "sections"],
        k=20,
        stats=StatsSettings(n_resamples=200),
    )
    table = swept.out_of_fold("section_weight", folds=4, seed=3)
    assert len(table) == 2 * 2  # vectors x targets
    for row in table.to_dict("records"):
        per_query = swept.result.per_query(row["target"], "ndcg@10")
        columns = [
            f"vectors={row['vectors']!r}, section_weight={w!r}" for w in grid["section_weight"]
        ]
        qids = list(per_query.index)
        folds = np.array_split(np.random.default_rng(3).permutation(len(qids)), 4)
        held, chosen = {}, []
        for fold in folds:  # by hand: the best mean on the other questions, first on ties
            out = {qids[i] for i in fold}
            train = per_query.loc[[q for q in qids if q not in out], columns].mean()
            best = max(range(len(columns)), key=lambda j: (train.iloc[j], -j))
            chosen.append(grid["section_weight"][best])
            held |= {q: per_query.loc[q, columns[best]] for q in out}
        assert row["chosen"] == chosen
        assert row["mean"] == pytest.approx(np.mean(list(held.values())), abs=1e-12)
        assert row["low"] <= row["mean"] <= row["high"]
        assert row["in_sample_mean"] == pytest.approx(max(per_query[columns].mean()))
    with pytest.raises(ValueError, match="not a field of the sweep"):
        swept.out_of_fold("pool")
    with pytest.raises(ValueError, match="folds must be between 2"):
        swept.out_of_fold("section_weight", folds=1)


def test_cross_validate_never_chooses_with_the_held_out_questions() -> None:
    rng = np.random.default_rng(3)
    scores = rng.random((23, 6))
    held, chosen, fold = stats.cross_validate(scores, folds=4, seed=11)
    assert sorted(set(fold.tolist())) == [0, 1, 2, 3]
    for i, column in enumerate(chosen):
        train = fold != i
        assert column == int(np.argmax(scores[train].mean(axis=0)))  # chosen without fold i
        # a question of the fold changes nothing about its own fold's choice
        poisoned = scores.copy()
        poisoned[~train] = 0.0
        poisoned[~train, (column + 1) % 6] = 1e9
        assert stats.cross_validate(poisoned, folds=4, seed=11)[1][i] == column
    np.testing.assert_array_equal(held, scores[np.arange(23), np.asarray(chosen)[fold]])


@pytest.mark.parametrize(("shape", "folds"), [((5, 0), 2), ((5,), 2), ((5, 2), 1), ((5, 2), 6)])
def test_cross_validate_refuses_bad_input(shape: tuple[int, ...], folds: int) -> None:
    with pytest.raises(ValueError, match=r"scores must be|folds must be"):
        stats.cross_validate(np.zeros(shape), folds=folds)


def test_the_swept_object_runs_the_grid_and_draws_its_table() -> None:
    """``Swept.of`` is :func:`sweep.run`; ``Swept.plot`` draws :meth:`Swept.table`."""
    s, queries = setup()
    grid = {"vectors": ["rawspan", "centroid"], "section_weight": [0.0, 1.0]}
    on = {
        "searcher": s,
        "targets": ["documents", "sections"],
        "stats": StatsSettings(n_resamples=50),
    }
    swept = sweep.Swept.of(Profile(level="fused"), grid, queries, **on)
    assert swept.table().equals(sweep.run(Profile(level="fused"), grid, queries, **on).table())
    fig = swept.plot("section_weight", by="vectors", marks=[0.65], title="animals")
    assert [len(ax.get_lines()) for ax in fig.axes] == [3, 3]  # two groups and the mark
    assert fig.texts[0].get_text() == "animals"
