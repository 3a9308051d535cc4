"""docs/execute.py --nbval: one execution under nbval gives the checked cells and the pages.

The reference is nbformat's own reading of the files written back: the outputs a
Jupyter front end would show, the execution counts, and the timing file each kernel
wrote through $HIERRET_TIMING.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from types import ModuleType

import pytest

import hierret
from hierret import _clock
from hierret.publish.report import load_results

ROOT = Path(__file__).resolve().parents[2]
nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbval")


@pytest.fixture
def execute(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    src = str(Path(hierret.__file__).resolve().parents[1])  # kernels import this hierret
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([src, os.environ.get("PYTHONPATH", "")]))
    spec = importlib.util.spec_from_file_location("execute_nbval", ROOT / "docs" / "execute.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _notebook(path: Path, *sources: str) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Small"),
        *(nbformat.v4.new_code_cell(s) for s in sources),
    ]
    nbformat.write(nb, path)
    return path


def test_nbval_outputs_are_written_back_with_the_kernels_timings(
    execute: ModuleType, tmp_path: Path
) -> None:
    good = _notebook(
        tmp_path / "good.ipynb",
        "print('hello')",
        "from hierret import _clock\nwith _clock.stage('rank'):\n"
        "    _clock.count('m', embedded=2)\n1 + 1",
    )
    bad = _notebook(
        tmp_path / "bad.ipynb", "x = 1", "raise ValueError('broken cell')", "print('after')"
    )
    folder = tmp_path / "timing"
    folder.mkdir()
    before = os.environ.get(_clock.TIMING_ENV)
    code, wall = execute._run_nbval([good, bad], "python3", folder)
    assert os.environ.get(_clock.TIMING_ENV) == before  # each kernel had its own
    assert code == 1  # the broken cell fails the check
    assert set(wall) == {"good", "bad"}
    assert min(wall.values()) > 0
    cells = [c for c in nbformat.read(good, 4).cells if c.cell_type == "code"]
    assert [c.execution_count for c in cells] == [1, 2]
    assert cells[0].outputs[0].text == "hello\n"
    assert cells[1].outputs[0].data["text/plain"] == "2"
    broken = [c for c in nbformat.read(bad, 4).cells if c.cell_type == "code"]
    assert broken[1].outputs[0].ename == "ValueError"
    assert broken[2].outputs[0].text == "after\n"  # nbval runs on, as before
    nbformat.validate(nbformat.read(bad, 4))
    recorded = _clock.read(folder / "good.json")
    assert set(recorded.seconds) == {"rank"}
    assert recorded.embedded == {"m": 2}
    assert not (folder / "bad.json").exists()  # it never entered a stage


@pytest.mark.parametrize(
    ("cache_bytes", "size", "n_notebooks", "out", "results"),
    [
        (0, "reference", 2, {"timing", "timing_cold"}, {"timing", "timing_cold"}),
        (10, "reference", 2, {"timing"}, {"timing"}),
        (0, "reference", 1, {"timing"}, {"timing"}),
        (0, "class", 2, {"timing"}, {"timing_class", "timing_class_cold"}),
        (10, "smoke", 2, {"timing"}, {"timing_smoke"}),
    ],
)
def test_a_full_run_on_an_empty_cache_is_also_the_cold_record(
    execute: ModuleType,
    tmp_path: Path,
    cache_bytes: int,
    size: str,
    n_notebooks: int,
    out: set[str],
    results: set[str],
) -> None:
    """Beside the notebooks the run is `timing` (the site reads it); in the results folder
    each size has its own records, which the notebooks' heads show (`run_times`)."""
    runs = {f"0{i}_nb": (2.0, _clock.Timings({"rank": 1.0})) for i in range(n_notebooks)}
    identity = {"size": size, "cache_bytes_before": cache_bytes}
    execute._write_timing(runs, identity, tmp_path / "out", tmp_path / "results")
    written = load_results(tmp_path / "out")
    assert set(written) == out
    assert set(load_results(tmp_path / "results")) == results
    assert written["timing"]["values"]["all_wall_min"] == 2.0 * n_notebooks / 60
    assert written["timing"]["identity"]["size"] == size
    for name in results:  # the file each size's reader looks for
        assert (tmp_path / "results" / f"{name.replace('_', '-')}.json").is_file()


def test_papermill_waits_for_a_cells_output_as_long_as_for_a_kernel(
    execute: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """nbclient waits 4 s for a cell's output messages, and papermill makes the end of that
    wait an error: a reproduce at load 7 failed so on a finished, correct cell. The
    executions docs/execute.py starts wait as long as for a kernel to start."""
    seen: dict[str, object] = {}

    class Stop(Exception):
        pass

    def record(*args: object, **kwargs: object) -> None:
        seen.update(kwargs)
        raise Stop

    monkeypatch.setattr(execute.pm, "execute_notebook", record)
    with pytest.raises(Stop):
        execute.main(["--out", str(tmp_path / "nb"), "--smoke", "--only", "01_structure"])
    assert seen["iopub_timeout"] == execute.KERNEL_WAIT_S >= 60


def test_under_nbval_a_notebook_s_parameters_are_read_as_papermill_gave_them(
    execute: ModuleType, tmp_path: Path
) -> None:
    """nbval's kernels keep no input history, where check_notebook reads the parameters
    cell and papermill's injected one: the runner names the notebook's file instead, so
    the record's parameters are the run's (not only the names given choices, which made
    every parameter read "(not a parameter then)" in the smoke site's comparison)."""
    path = _notebook(
        tmp_path / "params.ipynb",
        "k = 10\nseed = 0",
        "# Parameters\nk = 5\n",
        "from hierret.study import check_notebook\nrun = check_notebook(globals())\n"
        "print(sorted(dict(run).items()))",
    )
    nb = nbformat.read(path, 4)
    nb.cells[1].metadata["tags"] = ["parameters"]
    nb.cells[2].metadata["tags"] = ["injected-parameters"]
    nbformat.write(nb, path)
    code, _ = execute._run_nbval([path], "python3", tmp_path)
    assert code == 0
    printed = [c for c in nbformat.read(path, 4).cells if c.cell_type == "code"][2]
    assert printed.outputs[0].text == "[('k', 5), ('seed', 0)]\n"
    assert execute.NOTEBOOK_ENV not in os.environ  # named for the runner's kernels only
