"""Late chunking on a grid (hierret.study.late_chunking): each cell's searcher, its context,
its cost, and arms that search with a cell's late vectors beside the ordinary ones."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from hierret.datasets import load
from hierret.encoders import SentenceTransformerEncoder
from hierret.encoders.cache import CachedEncoder, VectorCache
from hierret.search.profile import Profile
from hierret.search.vectors.late import LateChunker
from hierret.study.experiment import Arm
from hierret.study.hierarchies import Cell, Hierarchies
from hierret.study.late_chunking import LateChunking
from hierret.study.measured import Measurements

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "docs"))  # the shared tiny model
from bad_input_cases import _tiny_model as tiny


@pytest.fixture(scope="module")
def late(tmp_path_factory: pytest.TempPathFactory) -> LateChunking:
    pytest.importorskip("sentence_transformers")
    folder = tiny.build(tmp_path_factory.mktemp("tiny"))
    encoder = CachedEncoder(
        SentenceTransformerEncoder(str(folder)), VectorCache(tmp_path_factory.mktemp("cache"))
    )
    bundle = load("python-reference", max_queries=3, max_docs=2)
    grid = Hierarchies({"pyref": bundle}, [300, 600], encoder, k=20)
    memo = Measurements(tmp_path_factory.mktemp("measurements"))
    return LateChunking(grid, overlap=4, memo=memo)


def test_each_cell_searches_with_its_own_late_vectors(late: LateChunking) -> None:
    grid = late.grid
    assert list(late.searchers) == [("pyref", 300), ("pyref", 600)]
    alone = LateChunker(grid.encoder, overlap=4)
    for cell, searcher in late.searchers.items():
        assert searcher is not grid.searchers[cell]
        want = alone.passage_vectors(grid.hierarchies[cell])
        index = searcher.dense_index("passages")
        assert index.ids == want.ids
        np.testing.assert_allclose(index.vectors, want.vectors, atol=1e-6)
        ordinary = grid.searchers[cell].dense_index("passages")
        assert not np.allclose(ordinary.vectors, index.vectors)  # another method's vectors
    table = late.table()
    assert table.index.names == ["corpus", "chars"]
    assert table.loc[("pyref", 300), "passages"] > table.loc[("pyref", 600), "passages"]
    assert set(table.columns) >= {"tokens", "before", "after", "alone", "long"}
    assert late.identity() == alone.identity.describe()


def test_arms_given_per_cell_search_with_that_cells_late_vectors(late: LateChunking) -> None:
    def arms(cell: Cell) -> dict[str, Profile | Arm]:
        return {"chunk": Profile(), "late": Arm(Profile(), late.searchers[cell])}

    results = late.grid.compare(arms, targets=["sections"], baseline="chunk")
    for cell, r in results.items():
        assert r.arms == ["chunk", "late"]
        assert r.hierarchies["late"] is late.grid.hierarchies[cell]
        assert r.traces["late"].run != r.traces["chunk"].run


def test_cost_times_a_cell_and_is_kept_per_machine(late: LateChunking) -> None:
    costs = late.cost(4, windows=(None,))  # the tiny model reads 32 positions
    assert costs.index.tolist()[0] == "plain"
    assert costs.index.tolist()[1].startswith("late")
    assert (costs["seconds"] > 0).all()
    assert late.memo.measured == 1
    again = late.cost(4, windows=(None,))
    assert late.memo.reused == 1
    pd.testing.assert_frame_equal(again, costs, check_like=True, check_dtype=False)
    with pytest.raises(KeyError, match=r"\('pyref', 900\) is not a cell of the grid"):
        late.cost(4, ("pyref", 900))
