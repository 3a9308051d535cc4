"""Where a run's time goes: stages charged their own time, texts counted where they go.

The counts are checked against independent witnesses: a spy that counts the texts the
model is really given, and a cache folder's own count of stored vectors.
"""

from __future__ import annotations

import json
import time
import warnings
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from hierret import _clock
from hierret.encoders import HashEncoder
from hierret.encoders.cache import CachedEncoder, VectorCache
from hierret.publish import timing
from hierret.search.profile import Profile
from hierret.search.searcher import Searcher
from hierret.structure.hierarchy import build_hierarchy
from hierret.structure.units import Corpus, Document, Query


class Spy(HashEncoder):
    """A HashEncoder that keeps every text its model is asked to embed."""

    def __init__(self) -> None:
        super().__init__(dimension=16)
        self.seen: list[str] = []

    def _embed(self, texts: list[str]) -> Any:
        self.seen += texts
        return super()._embed(texts)


@pytest.fixture
def cached(tmp_path: Path) -> tuple[CachedEncoder, Spy]:
    spy = Spy()
    return CachedEncoder(spy, VectorCache(tmp_path / "vectors")), spy


def test_a_second_run_of_the_same_texts_embeds_nothing(cached: tuple[CachedEncoder, Spy]) -> None:
    enc, spy = cached
    label = enc.identity.label()
    texts = [f"passage number {i}" for i in range(7)]
    with _clock.recording() as first:
        enc.encode_passages(texts + texts[:2])  # two repeated within the request
    assert first.embedded == {label: len(spy.seen)} == {label: 7}
    assert first.cached == {label: 0}
    spy.seen.clear()
    with _clock.recording() as second:
        enc.encode_passages(texts)
        enc.encode_passages([*texts[3:], "one new text"])
    assert spy.seen == ["one new text"]
    assert second.embedded == {label: 1}
    assert second.cached == {label: 7 + 4}
    assert enc.cache.count(enc.identity) == 8  # the cache's own count of what is stored


def test_an_encoder_without_a_cache_counts_what_it_embeds() -> None:
    enc = HashEncoder(dimension=8)
    with _clock.recording() as timings:
        enc.encode_queries(["a", "b", "a"])
    assert timings.embedded == {enc.identity.label(): 3}
    assert timings.cached == {enc.identity.label(): 0}
    assert set(timings.seconds) == {f"embed {enc.identity.label()}"}


def test_nested_stages_are_charged_their_own_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a clock the test moves (a real one runs late on a busy machine): each stage is
    charged its own time, the outer one less the inner one's."""
    now = [100.0]
    monkeypatch.setattr(_clock, "time", SimpleNamespace(perf_counter=lambda: now[0]))
    with _clock.recording() as timings, _clock.stage("rank"):
        now[0] += 0.05
        with _clock.stage("embed m"):
            now[0] += 0.1
        now[0] += 0.01
    assert timings.seconds["embed m"] == pytest.approx(0.1)
    assert timings.seconds["rank"] == pytest.approx(0.06)
    assert sum(timings.seconds.values()) == pytest.approx(0.16)


def test_stages_on_the_real_clock() -> None:
    with _clock.recording() as timings:
        start = time.perf_counter()
        with _clock.stage("rank"), _clock.stage("embed m"):
            time.sleep(0.05)
        wall = time.perf_counter() - start
    assert timings.seconds["embed m"] >= 0.05
    assert 0 <= timings.seconds["rank"] <= wall - timings.seconds["embed m"] + 1e-9


def test_a_stage_is_charged_when_its_block_raises() -> None:
    with _clock.recording() as timings, pytest.raises(KeyError), _clock.stage("load"):
        raise KeyError("x")
    assert set(timings.seconds) == {"load"}


def test_a_search_is_cut_into_index_rank_and_embed_stages(
    cached: tuple[CachedEncoder, Spy],
) -> None:
    enc, spy = cached
    text = "Cats\n====\n\nCats purr.\n\nDogs\n====\n\nDogs bark loudly.\n"
    hierarchy = build_hierarchy(Corpus("pets", [Document("d", "Pets", text)]))
    with _clock.recording() as timings:
        Searcher(hierarchy, enc).run(
            [Query("q", "do dogs bark", ())], Profile(ranker="hybrid"), k=2
        )
    label = enc.identity.label()
    assert {"index", "rank", f"embed {label}"} <= set(timings.seconds)
    assert timings.embedded[label] == len(spy.seen) == len(hierarchy.passages) + 1


def test_the_timings_reach_the_file_named_by_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "nb.json"
    monkeypatch.setenv(_clock.TIMING_ENV, str(target))
    with _clock.recording() as timings:
        with _clock.stage("statistics"):
            with _clock.stage("figures"):
                pass
            assert not target.exists()  # written when the outermost stage ends
        _clock.count("m", embedded=2)
        with _clock.stage("load"):
            pass
    assert _clock.read(target) == timings
    assert [p.name for p in tmp_path.iterdir()] == ["nb.json"]  # no temporary file left


def test_an_unwritable_timing_file_warns_once_and_the_run_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(_clock.TIMING_ENV, str(tmp_path / "no-such-folder" / "nb.json"))
    with warnings.catch_warnings(record=True) as seen, _clock.recording():
        warnings.simplefilter("always")
        for _ in range(3):
            with _clock.stage("rank"):
                pass
    assert [str(w.message).split(" (")[0] for w in seen] == [
        f"timings not written to ${_clock.TIMING_ENV}={tmp_path / 'no-such-folder' / 'nb.json'}"
    ]


def test_read_names_a_file_that_holds_no_timings(tmp_path: Path) -> None:
    bad = tmp_path / "t.json"
    bad.write_text(json.dumps({"seconds": {"rank": "slow"}}), encoding="utf-8")
    with pytest.raises(ValueError, match=r"t\.json: not a timings file"):
        _clock.read(bad)
    assert _clock.read(tmp_path / "absent.json") == _clock.Timings()


def test_record_values_add_up_and_render() -> None:
    a = _clock.Timings(
        {"load": 1.0, "embed m fp32": 2.0, "rank": 0.5}, {"m fp32": 10}, {"m fp32": 5}
    )
    b = _clock.Timings({"statistics": 3.0}, {}, {})
    values, layout = timing.record_values({"02_x": (4.0, a), "03_y": (5.0, b)})
    assert values["02_x_other_s"] == pytest.approx(0.5)
    assert values["03_y_other_s"] == pytest.approx(2.0)
    assert values["all_wall_s"] == 9.0
    assert values["all_m_fp32_embedded"] == 10
    assert values["all_m_fp32_cached"] == 5
    assert layout["stages"]["02_x"] == ["load", "embed m fp32", "rank", "other"]
    frame = timing.table({"values": values, "identity": layout})
    for nb, wall in (("02_x", 4.0), ("03_y", 5.0)):
        rows = frame.loc[nb]
        assert rows.loc["total", "seconds"] == wall
        assert rows.drop("total")["seconds"].sum() == pytest.approx(wall)
    assert frame.loc[("02_x", "embed m fp32"), "embedded"] == 10
    assert np.isnan(frame.loc[("02_x", "rank"), "embedded"])


def test_the_figure_has_one_bar_per_notebook() -> None:
    import matplotlib

    matplotlib.use("Agg")
    values, layout = timing.record_values(
        {
            "02_x": (4.0, _clock.Timings({"embed a": 1.0, "embed b": 1.0, "rank": 1.0})),
            "03_y": (2.0, _clock.Timings({"load": 1.0})),
        }
    )
    fig = timing.figure({"values": values, "identity": layout})
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["02_x", "03_y"]
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["load", "embed", "rank", "other"]
    ends = {round(p.get_x() + p.get_width(), 6) for p in ax.patches if p.get_width() > 0}
    assert {4.0, 2.0} <= ends


def test_the_site_page_shows_the_record_or_says_there_is_none(tmp_path: Path) -> None:
    import importlib.util

    import matplotlib

    from hierret.publish.report import write_results

    matplotlib.use("Agg")
    root = Path(__file__).resolve().parents[2]
    spec = importlib.util.spec_from_file_location("timing_page", root / "docs" / "timing_page.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    values, layout = timing.record_values(
        {"02_x": (4.0, _clock.Timings({"embed m fp32": 2.5}, {"m fp32": 1234}, {"m fp32": 0}))}
    )
    path = write_results(
        tmp_path / "timing.json",
        "timing",
        values,
        {
            **layout,
            "smoke": True,
            "executor": "nbval",
            "cpus": 2,
            "load_average_before": [1.5, 1, 1],
            "load_average_after": [2, 1, 1],
        },
    )
    text = module.page(json.loads(path.read_text(encoding="utf-8")), tmp_path / "figures")
    assert "| 02_x | embed m fp32 | 2.5 | 62.5% | 1,234 | 0 |" in text
    assert "|  | **total** | 4.0 | 100.0% |  |  |" in text  # the notebook named once
    assert text.count("| 02_x |") == 1
    assert "load average 1.5 when the run started and 2.0 when it ended" in text
    assert (tmp_path / "figures" / "timing.png").is_file()
    assert "This build has no timing record" in module.page(None, tmp_path / "none")
    record = json.loads(path.read_text(encoding="utf-8"))
    cold = {
        **record,
        "name": "timing_cold",
        "identity": {**record["identity"], "cache_bytes_after": 3 * 2**20},
    }
    both = module.page(record, tmp_path / "both", cold)
    assert "## The first run, on an empty cache" in both
    assert "the cache held 3 MiB afterwards" in both
    assert both.count("|  | **total** |") == 2
    (tmp_path / "site" / "notebooks").mkdir(parents=True)
    (tmp_path / "site" / "notebooks" / "02_x.ipynb").write_text("{}", encoding="utf-8")
    linked = module.page(record, tmp_path / "site" / "figures")  # the site has its page
    assert "| [02_x](notebooks/02_x.ipynb) | embed m fp32 |" in linked
    assert (tmp_path / "both" / "timing-cold.png").is_file()
    assert "first run" not in text  # no cold record: no such section
    assert not (tmp_path / "none").exists()


def _timing_record(folder: Path, file: str, walls: dict[str, float], cache_bytes: int) -> None:
    record = {
        "name": file[:-5].replace("-", "_"),
        "machine": {"cpu": "Test CPU"},
        "identity": {"cpus": 2, "cache_bytes_before": cache_bytes},
        "values": {f"{nb}_wall_s": s for nb, s in walls.items()},
    }
    (folder / file).write_text(json.dumps(record), encoding="utf-8")


def test_each_size_shows_its_first_run_and_its_cached_rerun(tmp_path: Path) -> None:
    """A record that started on an empty cache is a first run; the latest run of a size is
    the cached column only when it found vectors cached (a cold one is not a rerun)."""
    _timing_record(tmp_path, "timing-cold.json", {"02_nb": 970.0}, 0)
    _timing_record(tmp_path, "timing.json", {"02_nb": 16.0}, 10**9)
    _timing_record(tmp_path, "timing-class-cold.json", {"02_nb": 250.0}, 0)
    _timing_record(tmp_path, "timing-class.json", {"02_nb": 250.0}, 0)  # the same cold run
    _timing_record(tmp_path, "timing-smoke.json", {"01_other": 9.0}, 10**9)
    presets = {"class": {"max_docs": 400, "sizes": lambda p: p}}
    table = timing.run_times("02_nb", presets, results=tmp_path)
    assert list(table.index) == ["smoke", "class", "reference"]
    assert table.loc["reference", "first run (empty cache)"] == "16 min"
    assert table.loc["reference", "vectors cached"] == "16 s"
    assert table.loc["class", "first run (empty cache)"] == "4 min"
    assert table.loc["class", "vectors cached"] == "not measured"
    assert table.loc["smoke", "vectors cached"] == "not measured"  # another notebook's
    assert table.loc["class", "what it changes"].startswith("max_docs 400, sizes: <function")
    assert table.loc["reference", "measured on"] == "2 × Test CPU, load not recorded"


def test_times_say_their_load_and_a_busier_machine_is_warned(tmp_path: Path) -> None:
    _timing_record(tmp_path, "timing-class-cold.json", {"02_nb": 250.0}, 0)
    record = json.loads((tmp_path / "timing-class-cold.json").read_text(encoding="utf-8"))
    record["identity"] |= {"load_average_before": [1.5, 1, 1], "load_average_after": [2.5, 2, 2]}
    (tmp_path / "timing-class-cold.json").write_text(json.dumps(record), encoding="utf-8")
    table = timing.run_times("02_nb", results=tmp_path)
    assert table.loc["class", "measured on"] == "2 × Test CPU, load 1.5 → 2.5"
    busy = timing.busier_than_measured([record], load=10.0, cpus=2)
    assert busy is not None
    assert "load 10.0 on 2 CPUs now (5.0 per CPU)" in busy
    assert "at most 2.5 on 2 CPUs (1.2 per CPU)" in busy
    assert timing.busier_than_measured([record], load=3.0, cpus=2) is None  # 1.5 ≤ 1.25 + 0.5
    assert timing.busier_than_measured([record], load=3.6, cpus=2) is not None
    assert timing.busier_than_measured([record], load=7.0, cpus=8) is None  # a CPU each
    assert timing.busier_than_measured([{"identity": {"cpus": 2}}], load=50.0) is None
    shown: list[object] = []
    with pytest.MonkeyPatch.context() as mp:  # in a notebook: the warning above the table
        mp.setattr("IPython.get_ipython", lambda: True)
        mp.setattr("IPython.display.display", shown.append)
        mp.setattr("os.getloadavg", lambda: (40.0, 40.0, 40.0))
        mp.delenv(timing.TIMING_ENV, raising=False)
        timing.run_times("02_nb", results=tmp_path)
        mp.setenv(timing.TIMING_ENV, str(tmp_path / "t.json"))  # a site build: not said
        timing.run_times("02_nb", results=tmp_path)
    assert len(shown) == 1
    assert "This machine is busier" in shown[0].data  # type: ignore[attr-defined]


def test_exercise_times_are_read_by_number_and_listed_from_the_notebook(tmp_path: Path) -> None:
    record = {"values": {"nb_exercise_1_wall_s": 45.2, "nb_exercise_3_wall_s": 400.0, "x": 1}}
    assert timing.exercise_times("nb", record) == {1: "45 s", 3: "7 min"}
    notebook = {"cells": [{"metadata": {}}, {"metadata": {"exercises": [{"k": 1}, {"j": 2}]}}]}
    (tmp_path / "nb.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    assert timing.exercises_of(tmp_path / "nb.ipynb") == [{"k": 1}, {"j": 2}]


def test_the_exercises_table_gives_each_exercise_its_time_or_says_none_was_measured(
    tmp_path: Path,
) -> None:
    """What the cell under a notebook's exercises shows: a code cell's output, the same
    on the site, in JupyterLab and in papermill's output (no glue role to resolve)."""
    cell = {"cell_type": "markdown", "metadata": {"exercises": [{"k": 5}, {"a": [1]}, {}]},
            "source": ["1. **Fewer.** Predict.\n", "\n", "3. **All** of it.\n"]}  # fmt: skip
    (tmp_path / "nb.ipynb").write_text(json.dumps({"cells": [cell]}), encoding="utf-8")
    loads = {"load_average_before": [1.23, 1, 1], "load_average_after": [2.2, 2, 2]}
    record = {"values": {"nb_exercise_1_wall_s": 27.0, "nb_exercise_3_wall_s": 400.0},
              "identity": {"cpus": 2, **loads}, "machine": {"cpu": "Xeon"}}  # fmt: skip
    (tmp_path / timing.EXERCISES_RECORD).write_text(json.dumps(record), encoding="utf-8")
    table = timing.exercise_table("nb", results=tmp_path, source=tmp_path / "nb.ipynb")
    assert table.index.tolist() == ["1. Fewer", "2", "3. All"]
    assert table.to_dict("index") == {
        "1. Fewer": {"what it changes": "k 5", "time at class size": "27 s",
                     "measured on": "2 × Xeon, load 1.2 → 2.2"},
        "2": {"what it changes": "a [1]", "time at class size": "not measured yet",
              "measured on": ""},
        "3. All": {"what it changes": "the reference parameters",
                   "time at class size": "7 min", "measured on": "2 × Xeon, load 1.2 → 2.2"},
    }  # fmt: skip
    (tmp_path / timing.EXERCISES_RECORD).unlink()  # no record: every time not measured
    table = timing.exercise_table("nb", results=tmp_path, source=tmp_path / "nb.ipynb")
    assert set(table["time at class size"]) == {"not measured yet"}
    assert timing.exercise_table("nb", results=tmp_path, source=tmp_path / "no.ipynb").empty


def test_each_notebooks_exercises_show_their_measured_times() -> None:
    """The published notebooks' exercises, from the committed exercises record."""
    table = timing.exercise_table("05_dr004_hierarchy")
    assert table.index[0] == "1. Lean to passages"
    assert table["what it changes"].iloc[0] == "section_weight 0.3"
    assert "not measured yet" not in set(table["time at class size"])
    assert table["measured on"].iloc[0].startswith("2 × ")
