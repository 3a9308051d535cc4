"""The tests stand on the floors they test: a test file's folder is what it may import.

The package's floors run core < publish < study (``tests/project/test_floors.py``), and
``tests/`` has one folder a floor, plus two for what stands above the package:

- ``core/``: the core only, neither ``hierret.publish`` nor ``hierret.study``;
- ``publish/``: the core and ``hierret.publish``, not ``hierret.study``;
- ``study/``: the whole package (a study uses both floors below it);
- ``site/`` (the site's scripts and pages, the notebooks executed, the benchmarks'
  page) and ``project/`` (the repository as a whole: floors, faces, the module cap,
  the design note, the environments): anything.

A test whose own subject is low (a corpus loader, a reranker) but which reaches a
higher floor stands on that floor: what it imports decides, as for a module. The
helpers at the top of ``tests/`` (``_scripts.py``, ``_straddle.py``, ``_toy.py``) are
shared by several floors, so they stand on the lowest, the core. Every import counts,
those inside functions too, and so do ``importlib.import_module`` and
``pytest.importorskip`` with a written module name. ``benchmarks/`` holds scripts, not
tests, and ``data/`` none. Every test file is in a floor folder, and no two files of
``tests/`` share a basename: pytest's default import mode (``prepend``, no
``__init__.py`` files) imports each by its basename alone.
A test imports another test module only from its own folder: pytest puts a test's own
folder on ``sys.path``, not its neighbours', so such an import works in the whole run
and fails when the folder runs alone (what is shared goes to ``tests/_toy.py``).
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
#: What each folder's files may not import, by the floor above the one they stand on.
BARRED = {
    "core": ("hierret.publish", "hierret.study"),
    "publish": ("hierret.study",),
    "study": (),
    "site": (),
    "project": (),
}
SHARED = "core"  # the floor of the helpers at the top of tests/
OTHER = {"benchmarks", "data", "__pycache__"}  # folders of tests/ that are no floor
CALLS = {"import_module", "importorskip"}  # calls that import the module they name


def imported(source: str) -> set[str]:
    """The modules ``source`` imports, at any depth: ``import a.b`` and ``from a import b``
    name ``a.b`` (``b`` may be a module), ``import_module("a")`` and ``importorskip("a")``
    name ``a``.

    >>> sorted(imported("def f():\\n    from hierret import study\\n"))
    ['hierret', 'hierret.study']
    """
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
            found |= {f"{node.module}.{a.name}" for a in node.names}
        elif isinstance(node, ast.Call) and node.args:
            name = getattr(node.func, "attr", getattr(node.func, "id", None))
            first = node.args[0]
            if name in CALLS and isinstance(first, ast.Constant):
                found.add(str(first.value))
    return found


def misplaced(path: Path, floor: str) -> list[str]:
    """The imports of ``path`` that a file of ``floor``'s folder may not make."""
    names = imported(path.read_text(encoding="utf-8"))
    return sorted(m for m in names for b in BARRED[floor] if m == b or m.startswith(b + "."))


def _files() -> list[tuple[str, Path]]:
    """(floor, file) for every Python file of a floor folder and every shared helper."""
    files = [(SHARED, p) for p in sorted(TESTS.glob("_*.py"))]
    for folder in sorted(p for p in TESTS.iterdir() if p.is_dir() and p.name in BARRED):
        files += [(folder.name, p) for p in sorted(folder.rglob("*.py"))]
    return files


def test_the_floors_are_the_folders_of_tests() -> None:
    folders = {p.name for p in TESTS.iterdir() if p.is_dir()} - OTHER
    assert folders == set(BARRED), "tests/ has one folder a floor (BARRED), and data/, benchmarks/"


def test_every_test_file_is_in_a_floor_folder() -> None:
    loose = sorted(p.name for p in TESTS.glob("test_*.py"))
    nested = sorted(
        str(p.relative_to(TESTS))
        for p in TESTS.rglob("test_*.py")
        if len(p.relative_to(TESTS).parts) > 2
    )
    assert loose == [], "put a test in tests/<floor>/ (core, publish, study, site, project)"
    assert nested == [], "a floor folder has no subfolders"


def test_no_two_files_of_tests_share_a_basename() -> None:
    names = Counter(p.name for p in TESTS.rglob("*.py") if "__pycache__" not in p.parts)
    assert {n: c for n, c in names.items() if c > 1 and n != "__init__.py"} == {}


@pytest.mark.parametrize(
    ("floor", "path"), _files(), ids=lambda v: v if isinstance(v, str) else v.name
)
def test_a_test_imports_nothing_above_its_floor(floor: str, path: Path) -> None:
    above = misplaced(path, floor)
    assert above == [], (
        f"{path.relative_to(TESTS)} imports {above}, above the {floor} floor: move it to the "
        "floor of the highest package floor it imports (study/ reaches everything)"
    )


@pytest.mark.parametrize(
    ("floor", "path"), _files(), ids=lambda v: v if isinstance(v, str) else v.name
)
def test_a_test_imports_test_modules_of_its_own_folder_only(floor: str, path: Path) -> None:
    tests = {m for m in imported(path.read_text(encoding="utf-8")) if m.startswith("test_")}
    elsewhere = sorted(m for m in tests if not path.with_name(f"{m.split('.')[0]}.py").is_file())
    assert elsewhere == [], f"{path.relative_to(TESTS)} imports {elsewhere} from another folder"


@pytest.mark.parametrize(
    ("floor", "source", "barred"),
    [
        (
            "core",
            "from hierret.study.experiment import run\n",
            ["hierret.study.experiment", "hierret.study.experiment.run"],
        ),
        ("core", "def f():\n    import hierret.publish.tables\n", ["hierret.publish.tables"]),
        ("core", "from hierret import publish\n", ["hierret.publish"]),
        ("core", "importlib.import_module('hierret.study')\n", ["hierret.study"]),
        ("publish", "study = pytest.importorskip('hierret.study.sets')\n", ["hierret.study.sets"]),
        ("publish", "from hierret.publish import tables\n", []),
        ("core", "import hierret.studying\nfrom hierret.search import publish_x\n", []),
        ("study", "from hierret.publish import tables\nfrom hierret import study\n", []),
    ],
)
def test_the_rule_sees_an_import_above_the_floor(
    tmp_path: Path, floor: str, source: str, barred: list[str]
) -> None:
    path = tmp_path / "test_x.py"
    path.write_text(source, encoding="utf-8")
    assert misplaced(path, floor) == barred
