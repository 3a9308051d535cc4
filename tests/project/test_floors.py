"""The plan of the package: three floors, imports only downward, no cycles.

``hierret`` (the core: load, structure, embed, index, search, judge),
``hierret.publish`` (what a reader sees: tables, figures, records, checks) and
``hierret.study`` (what compares, sweeps and tunes arms for a record). A
module's floor is its folder, so the rule needs no list of modules: the core
imports neither floor above it, ``publish`` imports nothing from ``study``, and
``study`` may use both. Every import counts, those inside functions and under
``TYPE_CHECKING`` too: an import hidden in a function is still a dependency.
"""

from __future__ import annotations

import ast
import importlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
PACKAGE = SRC / "hierret"
FLOORS = {"core": 0, "publish": 1, "study": 2}


def _name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def floor(module: str) -> str:
    """``study``, ``publish`` or ``core``: the folder a module lives in."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in ("study", "publish") else "core"


def _targets(node: ast.Import | ast.ImportFrom) -> Iterator[str]:
    """The modules an import statement names: ``import a.b`` names ``a.b``; ``from a import
    b`` names ``a`` (its ``__init__`` runs) and ``a.b`` when ``b`` is a module."""
    if isinstance(node, ast.Import):
        yield from (a.name for a in node.names)
        return
    assert not node.level, "use absolute imports (from hierret...)"
    base = node.module or ""
    yield base  # ``from pkg import sub`` runs pkg's ``__init__`` too: pkg is named here
    for alias in node.names:
        sub = f"{base}.{alias.name}"
        if sub in MODULES:
            yield sub


def imports(path: Path) -> set[str]:
    """The ``hierret`` modules a file imports, at any depth, ``TYPE_CHECKING`` included."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import | ast.ImportFrom):
            for target in _targets(node):
                if target == "hierret" or target.startswith("hierret."):
                    while target not in MODULES:
                        target = target.rsplit(".", 1)[0]
                    found.add(target)
    return found


GRAPH = {m: imports(p) - {m} for m, p in MODULES.items()}


def test_every_import_runs_downward() -> None:
    """core < publish < study, derived from the folders."""
    upward = sorted(
        f"{m} ({floor(m)}) imports {t} ({floor(t)})"
        for m, deps in GRAPH.items()
        for t in deps
        if FLOORS[floor(t)] > FLOORS[floor(m)]
    )
    assert upward == []


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    component = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        component.append(w)
                        if w == v:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles() -> None:
    """A package's own ``__init__`` counts when a module names it (``import hierret``)."""
    assert _cycles(GRAPH) == []


def test_the_top_level_is_the_small_core() -> None:
    top = [m for m in MODULES if m.count(".") == 1]
    public = sorted(m for m in top if not m.split(".")[1].startswith("_"))
    packages = sorted(m for m in public if MODULES[m].name == "__init__.py")
    modules = sorted(set(public) - set(packages))
    # issue 40: 14 modules beside 9 packages were a flat list, not the concepts; grouped
    # into structure/, vectors/, embed/, search/ and cli/: no public module at the top.
    # Issue 24's floor is at most eight packages: vectors/, rankers/ and rerank/ live in
    # search/, cache/ and embed/ in encoders/, stats/ in evaluation/
    assert modules == [], modules
    assert len(packages) <= 8, packages
    assert {"hierret.study", "hierret.publish"} <= set(packages)


def test_matplotlib_is_imported_only_under_publish() -> None:
    drawing = sorted(
        m
        for m, p in MODULES.items()
        if floor(m) != "publish" and "matplotlib" in p.read_text(encoding="utf-8")
    )
    assert drawing == []


@pytest.mark.parametrize("face", ["hierret", "hierret.study", "hierret.publish"])
def test_each_face_lists_its_public_names_and_they_load(face: str) -> None:
    module = importlib.import_module(face)
    assert module.__all__, f"{face} lists no public names"
    assert len(set(module.__all__)) == len(module.__all__), "a name listed twice"
    assert [n for n in module.__all__ if not hasattr(module, n)] == []


def test_importing_the_core_loads_no_model_library_nor_the_floors_above() -> None:
    """``import hierret`` is what the command line pays at every start."""
    import subprocess

    code = (
        "import sys, hierret; heavy = ('torch', 'matplotlib', 'sentence_transformers', "
        "'hierret.study', 'hierret.publish'); print([m for m in heavy if m in sys.modules])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def _notebook_imports(path: Path) -> Iterator[tuple[str, list[str]]]:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    for cell in cells:
        if cell["cell_type"] != "code":
            continue
        source = "\n".join(
            line
            for line in "".join(cell["source"]).splitlines()
            if not line.lstrip().startswith(("%", "!"))
        )
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.ImportFrom):
                yield node.module or "", [a.name for a in node.names]
            elif isinstance(node, ast.Import):
                yield from ((a.name, []) for a in node.names)


@pytest.mark.parametrize("path", sorted((ROOT / "notebooks").glob("*.ipynb")), ids=lambda p: p.stem)
def test_notebooks_import_the_three_faces_only(path: Path) -> None:
    """``from hierret import …``, ``hierret.study``, ``hierret.publish``: names in ``__all__``."""
    faces = {
        f: importlib.import_module(f).__all__
        for f in ("hierret", "hierret.study", "hierret.publish")
    }
    wrong = []
    for module, names in _notebook_imports(path):
        if module.split(".")[0] != "hierret":
            continue
        if module not in faces:
            wrong.append(module)
        wrong += [f"{module}.{n}" for n in names if n not in faces[module]]
    assert wrong == [], "import from hierret, hierret.study or hierret.publish, names in __all__"


def _identifiers(tree: ast.AST) -> Iterator[str]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            yield node.id
        elif isinstance(node, ast.Attribute):
            yield node.attr
        elif isinstance(node, ast.alias):
            yield node.name.rsplit(".", 1)[-1]
        elif isinstance(node, ast.keyword) and node.arg:
            yield node.arg


def _callers() -> Iterator[tuple[str, ast.AST]]:
    """Every place that may use the package, except the tests (benchmark scripts count)."""
    scripts = [*MODULES.values(), *(ROOT / "docs").glob("*.py"), ROOT / "noxfile.py"]
    scripts += sorted((ROOT / "tests" / "benchmarks").glob("*.py"))
    for path in scripts:
        yield str(path), ast.parse(path.read_text(encoding="utf-8"))
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] == "code":
                lines = "".join(cell["source"]).splitlines()
                code = "\n".join(x for x in lines if not x.lstrip().startswith(("%", "!")))
                yield str(path), ast.parse(code)


def _definitions() -> Iterator[tuple[str, str, ast.AST]]:
    """(module, name, node) of every public function, class and method of the package."""
    for module, path in MODULES.items():
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if not isinstance(node, ast.FunctionDef | ast.ClassDef) or node.name[0] == "_":
                continue
            yield module, node.name, node
            if isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, ast.FunctionDef) and item.name[0] != "_":
                        yield module, f"{node.name}.{item.name}", item


def test_every_public_definition_has_a_caller_outside_the_tests() -> None:
    """By name: a definition is used when its name is read anywhere but in its own body.

    Names are matched, not resolved, so two definitions sharing a name share
    their callers; a definition nothing names is certainly dead.
    """
    used: dict[str, int] = {}
    for _, tree in _callers():
        for name in _identifiers(tree):
            used[name] = used.get(name, 0) + 1
    dead = []
    for module, name, node in _definitions():
        own = sum(1 for n in _identifiers(node) if n == node.name)  # recursion is no caller
        if used.get(node.name, 0) - own <= 0:
            dead.append(f"{module}.{name}")
    assert dead == [], "delete what nothing calls, or call it"


def test_the_readme_python_example_runs_on_the_core_face(tmp_path: Path) -> None:
    """README's "Use it from Python" block, executed as written (BM25: nothing embedded)."""
    import re
    import subprocess

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks, "README has no Python example"
    script = tmp_path / "example.py"
    script.write_text(blocks[0], encoding="utf-8")
    out = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, check=True, cwd=tmp_path
    ).stdout
    assert "finally" in out
    assert "nDCG@10" in out
    faces = re.findall(r"^from (hierret\S*) import", blocks[0], flags=re.M)
    assert set(faces) == {"hierret"}, "the example imports the core face only"
