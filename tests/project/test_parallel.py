"""The test command's parallel run (``pytest -n auto --dist loadgroup``, tests/conftest.py).

On a small project of its own, with this suite's conftest: each file's tests run in one
worker and its module fixture is made once; the two Ray files run in the same worker, one
after the other; the long units (the Ray files, a file with a ``slow`` test) are handed out
first. pytest-xdist 3.8's own loadgroup scheduler stopped grouping anything under pytest
9.2 without a word (pytest-xdist issue 1386): this is the check that would have said so.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("xdist", reason="pytest-xdist (the test extra) is not installed")

TESTS = Path(__file__).resolve().parents[1]

MODULE = """
import os

import pytest


@pytest.fixture(scope="module")
def made():
    with open(os.environ["SETUP_LOG"], "a", encoding="utf-8") as f:
        f.write(f"{__name__} {os.getpid()}\\n")


@pytest.mark.parametrize("i", range(4))
def test_one(made, i):
    pass
"""


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "tests").mkdir(parents=True)
    (root / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\ntestpaths = ["tests"]\nmarkers = ["slow: long"]\n',
        encoding="utf-8",
    )
    shutil.copy(TESTS / "conftest.py", root / "tests" / "conftest.py")
    (root / "tests" / "core").mkdir()
    for name in ("test_a", "core/test_embed_ray", "core/test_embed_ray_cluster", "test_z"):
        body = MODULE.replace("def test_one", "@pytest.mark.slow\ndef test_one", 1)
        (root / "tests" / f"{name}.py").write_text(
            body if name == "test_z" else MODULE, encoding="utf-8"
        )
    return root


def _pytest(root: Path, log: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SETUP_LOG": str(log), "PYTEST_XDIST_AUTO_NUM_WORKERS": "2"}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,  # a guard against a hang only
    )


def test_a_file_is_one_unit_and_the_ray_files_share_one(tmp_path: Path) -> None:
    root, log = _project(tmp_path), tmp_path / "setups.txt"
    args = ("-n", "auto", "--dist", "loadgroup", "--no-loadscope-reorder")
    done = _pytest(root, log, *args)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    setups = [line.split() for line in log.read_text(encoding="utf-8").splitlines()]
    modules = [m for m, _ in setups]
    assert sorted(modules) == sorted(set(modules)), f"a module fixture made twice: {setups}"
    assert len(modules) == 4
    pid = dict(setups)
    assert pid["test_embed_ray"] == pid["test_embed_ray_cluster"], setups
    assert len(set(pid.values())) == 2, f"one worker ran everything: {setups}"


def test_the_long_units_are_handed_out_first(tmp_path: Path) -> None:
    root, log = _project(tmp_path), tmp_path / "setups.txt"
    done = _pytest(root, log, "--collect-only", "--dist", "loadgroup")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    files = [line.split("::")[0] for line in done.stdout.splitlines() if "::" in line]
    order = list(dict.fromkeys(files))
    assert order == [
        "tests/core/test_embed_ray.py",
        "tests/core/test_embed_ray_cluster.py",
        "tests/test_z.py",
        "tests/test_a.py",
    ]
