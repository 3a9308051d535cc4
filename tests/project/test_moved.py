"""The module paths issue 40 moved still import for one release, each with one warning.

``import hierret`` installs :class:`hierret._moved.MovedFinder`: an old path
(``hierret.units``) is the new module itself (``hierret.structure.units``), and the
first import of it in a process warns, naming the new path. No file is left at an old
path, and the repository's own code imports the new paths only (the test session turns
every warning into an error).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from hierret._moved import MOVED, MovedFinder

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "hierret"

#: In a fresh interpreter: each old path imported twice, the warnings each import gave,
#: whether it is the new module, and the new module's own name and spec afterwards.
PROBE = """
import importlib, json, sys, warnings
from hierret._moved import MOVED
out = {}
for old, new in MOVED.items():
    with warnings.catch_warnings(record=True) as first:
        warnings.simplefilter("always")
        module = importlib.import_module(old)
    with warnings.catch_warnings(record=True) as again:
        warnings.simplefilter("always")
        importlib.import_module(old)
    out[old] = {
        "first": [(w.category.__name__, str(w.message)) for w in first],
        "again": len(again),
        "same": module is importlib.import_module(new),
        "name": module.__name__,
        "spec": module.__spec__.name,
    }
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def probed() -> dict[str, dict[str, object]]:
    out = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True
    ).stdout
    result: dict[str, dict[str, object]] = json.loads(out.splitlines()[-1])
    return result


@pytest.mark.parametrize("old", MOVED)
def test_an_old_path_is_the_new_module_and_warns_once(
    old: str, probed: dict[str, dict[str, object]]
) -> None:
    new = MOVED[old]
    seen = probed[old]
    assert seen["same"] is True
    assert seen["first"] == [
        [
            "DeprecationWarning",
            f"{old} is now {new}: import it from there (the old path goes in the next release)",
        ]
    ]
    assert seen["again"] == 0
    assert seen["name"] == seen["spec"] == new, "the module keeps its own name and spec"


def test_the_warning_points_at_the_import(tmp_path: Path) -> None:
    script = tmp_path / "user.py"
    old = next(iter(MOVED))
    script.write_text(f"import {old}\n")
    result = subprocess.run(
        [sys.executable, "-W", "error::DeprecationWarning", str(script)],
        capture_output=True,
        text=True,
    )
    assert result.returncode != 0
    assert f"{script}:1" in result.stderr or 'user.py", line 1' in result.stderr


def test_no_file_is_left_at_an_old_path() -> None:
    left = [
        old
        for old in MOVED
        if PACKAGE.joinpath(*old.split(".")[1:]).with_suffix(".py").exists()
        or PACKAGE.joinpath(*old.split(".")[1:], "__init__.py").exists()
    ]
    assert left == []


def test_the_finder_answers_only_its_table() -> None:
    finder = MovedFinder()
    assert finder.find_spec("hierret.cli", None) is None
    assert finder.find_spec("json", None) is None
    spec = finder.find_spec(next(iter(MOVED)), None)
    assert spec is not None
    assert spec.loader is finder


def test_the_repository_imports_the_new_paths_only() -> None:
    """Every old path, in the code and notebooks of the repository, is one this file and
    the finder name on purpose."""
    pattern = re.compile(
        r"(?<![\w.])(?:" + "|".join(re.escape(old) for old in MOVED) + r")(?![\w])"
    )
    own = {PACKAGE / "_moved.py", Path(__file__).resolve()}
    found = [
        f"{path.relative_to(ROOT)}: {match.group(0)}"
        for folder in ("src", "tests", "docs", "notebooks")
        for path in sorted((ROOT / folder).rglob("*"))
        if path.suffix in (".py", ".ipynb")
        and path not in own
        and not path.name.startswith("_legacy")
        for match in pattern.finditer(path.read_text(encoding="utf-8"))
    ]
    assert found == []
