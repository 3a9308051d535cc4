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

ROOT = Path(__file__).resolve().parent.parent
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
    ("cache_bytes", "smoke", "n_notebooks", "cold"),
    [(0, False, 2, True), (10, False, 2, False), (0, True, 2, False), (0, False, 1, False)],
)
def test_a_full_run_on_an_empty_cache_is_also_the_cold_record(
    execute: ModuleType, tmp_path: Path, cache_bytes: int, smoke: bool, n_notebooks: int, cold: bool
) -> None:
    runs = {f"0{i}_nb": (2.0, _clock.Timings({"rank": 1.0})) for i in range(n_notebooks)}
    identity = {"smoke": smoke, "cache_bytes_before": cache_bytes}
    execute._write_timing(runs, identity, [tmp_path])
    records = load_results(tmp_path)
    assert set(records) == ({"timing", "timing_cold"} if cold else {"timing"})
    assert records["timing"]["values"]["all_wall_min"] == 2.0 * n_notebooks / 60
    if cold:
        assert records["timing_cold"]["values"] == records["timing"]["values"]
        assert (tmp_path / "timing-cold.json").is_file()
