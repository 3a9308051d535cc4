"""The project's promises about itself: CI runs the README's command, conda and
pip environments agree, published numbers match the result records."""

from __future__ import annotations

import ast
import json
import os
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

from hierret.publish.report import check_markdown, load_results

ROOT = Path(__file__).resolve().parents[2]


def _commands(text: str) -> list[str]:
    return [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("#")]


def test_ci_runs_exactly_the_readme_test_command() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```bash\n(.*?)```", readme, flags=re.S)
    test_block = next(b for b in blocks if "run the tests" in b)
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    ci_commands = [c for c in _commands(ci) if not c.startswith(("set ", "cd "))]
    assert ci_commands == _commands(test_block)


def _requirements() -> list[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    reqs = list(project["dependencies"])
    for group in ("models", "notebooks", "docs", "test", "bench"):
        reqs += project["optional-dependencies"][group]
    return reqs


def test_environment_yml_in_step_with_pyproject() -> None:
    env = yaml.safe_load((ROOT / "environment.yml").read_text(encoding="utf-8"))
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    listed = {r for r in pip if not r.startswith(("-", "--"))}
    assert sorted(listed) == sorted(_requirements())
    assert "python=3.11" in env["dependencies"]


@pytest.mark.parametrize("page", ["DECISIONS.md", "README.md"])
def test_published_numbers_match_result_records(page: str) -> None:
    records = load_results(ROOT / "data" / "results")
    text = (ROOT / page).read_text(encoding="utf-8")
    assert "<!--@" in text, f"{page} quotes no checked number"
    assert check_markdown(text, records) == []


def test_every_claim_has_its_test() -> None:
    """Every record's claims table resolves and every comparative sentence cites a row."""
    from hierret.publish import claims

    text = (ROOT / "DECISIONS.md").read_text(encoding="utf-8")
    assert claims.claims(text), "DECISIONS.md has no claims table"
    assert claims.check(text, load_results(ROOT / "data" / "results")) == []


def test_the_results_table_quotes_each_records_key_claim() -> None:
    """The table atop DECISIONS.md: one row per record, its key claim's numbers as the
    records give them."""
    from hierret.publish import summary

    text = (ROOT / "DECISIONS.md").read_text(encoding="utf-8")
    assert [r.record for r in summary.rows(text)] == [f"DR-00{i}" for i in range(1, 6)]
    assert summary.check(text, load_results(ROOT / "data" / "results")) == []


def _tracked_files() -> list[str]:
    """The files git tracks in this checkout (paths relative to ROOT); skipped outside one."""
    import shutil
    import subprocess

    git = shutil.which("git")
    if git is None:
        pytest.skip("git is not installed: the tracked files are unknown")
    top = subprocess.run(
        [git, "-C", str(ROOT), "rev-parse", "--show-toplevel"],
        capture_output=True,
        text=True,
        check=False,
    )
    if top.returncode != 0 or Path(top.stdout.strip()).resolve() != ROOT:
        pytest.skip(f"{ROOT} is not a git checkout (e.g. an sdist): the tracked files are unknown")
    listed = subprocess.run(
        [git, "-C", str(ROOT), "ls-files", "-z"], capture_output=True, text=True, check=True
    )
    return [f for f in listed.stdout.split("\0") if f]


def test_top_level_layout() -> None:
    expected = {
        "notebooks",
        "src",
        "docs",
        "data",
        "tests",
        "environment.yml",
        "noxfile.py",
        "DECISIONS.md",
        "README.md",
        "pyproject.toml",
        ".ci",
        ".gitignore",
    }
    # tracked files, not the file system: build outputs, .nox and the like are not the layout
    assert {f.split("/", 1)[0] for f in _tracked_files()} == expected


def test_notebooks_are_committed_without_outputs() -> None:
    import nbformat

    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        assert nb.cells[0].cell_type == "markdown"
        assert nb.cells[0].source.startswith("# ")
        assert any("parameters" in c.metadata.get("tags", []) for c in nb.cells), path.name
        for cell in nb.cells:
            if cell.cell_type == "code":
                assert not cell.outputs, f"{path.name} has stored outputs: clear them"
                assert cell.execution_count is None, f"{path.name} has execution counts"


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT / "src").with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _hierret_imports() -> dict[str, set[str]]:
    """Each module of the package to the ``hierret`` modules it imports (any depth)."""
    import ast

    graph: dict[str, set[str]] = {}
    for path in sorted((ROOT / "src" / "hierret").rglob("*.py")):
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level:
                raise AssertionError(f"{path.name}: use absolute imports (from hierret...)")
            names = (
                [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else []
            )
            found |= {n for n in names if n == "hierret" or n.startswith("hierret.")}
        graph[_module_name(path)] = found
    return graph


def _is_evaluation(module: str) -> bool:
    return module == "hierret.evaluation" or module.startswith("hierret.evaluation.")


def test_run_types_sit_below_evaluation() -> None:
    """Within the core, runs and lifting are plain values every step hands on.

    The floors (core, publish, study) are held by ``tests/project/test_floors.py``.
    """
    graph = _hierret_imports()
    assert graph["hierret.search.runs"] <= {"hierret.structure.units"}, graph["hierret.search.runs"]
    assert graph["hierret.search.lifting"] <= {"hierret.search.runs", "hierret.structure.units"}


def test_indexes_and_rankers_load_without_the_evaluation_package() -> None:
    """What ``import hierret.search.vectors.index`` loads, in a fresh interpreter (package
    ``__init__``
    files included; the core's face loads its names on first use)."""
    import subprocess
    import sys

    for module in (
        "hierret.search.runs",
        "hierret.search.lifting",
        "hierret.search.vectors.index",
        "hierret.search.rankers",
    ):
        code = f"import sys, {module}; print(any('.evaluation' in m for m in sys.modules))"
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        )
        assert out.stdout.strip() == "False", module


def test_no_module_imports_another_modules_private_names() -> None:
    """A helper two modules need is public in its home (``_validate``, ``_files``,
    ``_clock`` and ``_env`` are homes: private modules may be imported, their
    public names used; another module's ``_name`` may not)."""
    import ast

    package = ROOT / "src" / "hierret"
    shared = []
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("hierret"):
                home = package.parent.joinpath(*(node.module or "").split("."))
                shared += [
                    f"{path.name}: {node.module}.{a.name}"
                    for a in node.names
                    if a.name.startswith("_")
                    and not (home / f"{a.name}.py").is_file()  # a private module, a home
                ]
    assert shared == []


def _code_lines(path: Path) -> list[str]:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return [
        line
        for c in cells
        if c["cell_type"] == "code"
        for line in "".join(c["source"]).splitlines()
        if line.strip() and not line.strip().startswith("#")
    ]


@pytest.mark.parametrize("path", sorted((ROOT / "notebooks").glob("*.ipynb")), ids=lambda p: p.stem)
def test_notebooks_are_lessons(path: Path) -> None:
    """At most 120 code lines, none over 88 characters, no function over 5 lines."""
    lines = _code_lines(path)
    assert len(lines) <= 120, f"{path.name}: {len(lines)} code lines; move method into the package"
    wide = [line for line in lines if len(line) > 88]
    assert not wide, f"{path.name}: code lines over 88 characters clip on the site: {wide[:3]}"
    source = "\n".join(line for line in lines if not line.lstrip().startswith(("%", "!")))
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            length = (node.end_lineno or node.lineno) - node.lineno
            assert length <= 5, f"{path.name}: function {node.name} is {length} lines long"


def _noxfile(monkeypatch: pytest.MonkeyPatch) -> Any:
    """``noxfile.py`` as a module, loaded with a stand-in ``nox`` (tests run without nox)."""
    import importlib.util
    import sys
    import types

    stub = types.SimpleNamespace(
        options=types.SimpleNamespace(), Session=object, session=lambda **_: lambda f: f
    )
    monkeypatch.setitem(sys.modules, "nox", stub)
    spec = importlib.util.spec_from_file_location("_noxfile", ROOT / "noxfile.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _noxfile_env(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    env: dict[str, str] = _noxfile(monkeypatch)._env()
    return env


class _Refused(Exception):
    pass


class _Session:
    """Records what a nox session was asked to do; ``error`` stops it, as nox's does."""

    def __init__(self, name: str, posargs: list[str]) -> None:
        self.name = name
        self.posargs = posargs
        self.calls: list[str] = []

    def install(self, *args: str) -> None:
        self.calls.append("install " + " ".join(args))

    def run(self, *args: str, **_: object) -> None:
        self.calls.append("run " + " ".join(args))

    def error(self, message: str) -> None:
        raise _Refused(message)


def test_docs_says_reproduce_must_run_first_before_installing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    noxfile = _noxfile(monkeypatch)
    monkeypatch.setattr(noxfile, "BUILD", tmp_path / "build")  # no executed notebooks there
    session = _Session("docs", [])
    with pytest.raises(_Refused, match="run `nox -s reproduce` first"):
        noxfile.docs(session)
    assert session.calls == []  # refused before minutes of installing


@pytest.mark.parametrize(
    ("posargs", "size"), [(["--smoke"], "smoke"), (["--size", "class"], "class")]
)
def test_docs_builds_a_site_of_the_size_asked_for(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, posargs: list[str], size: str
) -> None:
    noxfile = _noxfile(monkeypatch)
    monkeypatch.setattr(noxfile, "BUILD", tmp_path / "build")
    built: list[Path] = []
    monkeypatch.setattr(noxfile, "_assemble", lambda site, **_: site / "src")
    monkeypatch.setattr(noxfile, "_sphinx", lambda session, site: built.append(site))
    session = _Session("docs", posargs)
    noxfile.docs(session)
    assert built == [tmp_path / "build" / f"{size}-site"]
    assert any(c.startswith("run python docs/execute.py") and f"--size {size}" in c
               for c in session.calls)  # fmt: skip
    with pytest.raises(ValueError, match="--size takes smoke, class or reference"):
        noxfile.docs(_Session("docs", ["--size", "huge"]))


def test_lint_checks_the_format_with_what_mypy_needs(monkeypatch: pytest.MonkeyPatch) -> None:
    session = _Session("lint", [])
    _noxfile(monkeypatch).lint(session)
    assert "run ruff format --check src tests noxfile.py docs notebooks" in session.calls
    assert "run mypy src/hierret" in session.calls
    lint = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"
    ]["lint"]
    assert any(r.lower().startswith("ipython") for r in lint)  # hierret.publish.report imports it


@pytest.mark.parametrize("given", [None, "", "/somewhere/else"])
def test_tests_find_the_data_by_the_noxfile_rule(
    monkeypatch: pytest.MonkeyPatch, given: str | None
) -> None:
    from conftest import data_home

    if given is None:
        monkeypatch.delenv("HIERRET_DATA", raising=False)
    else:
        monkeypatch.setenv("HIERRET_DATA", given)
    nox_home = _noxfile_env(monkeypatch).get("HIERRET_DATA", os.environ.get("HIERRET_DATA"))
    assert data_home() == (Path(nox_home) if nox_home else None)
    shared = ROOT.parent / "shared" / "datasets"
    if given is None:
        assert data_home() == (shared if shared.is_dir() else None)


def test_notebooks_open_anywhere_and_nox_runs_them_on_its_own_kernel() -> None:
    """A notebook names ``python3``, which every Jupyter has (the Python it runs in: a
    user's own environment needs no kernel registered); nox executes them on ``hierret``,
    registered in its environment, which no kernel of the user's can stand in for."""
    import re

    noxfile = (ROOT / "noxfile.py").read_text()
    kernel = re.search(r'^KERNEL = "([^"]+)"', noxfile, re.M)
    assert kernel is not None
    assert kernel.group(1) != "python3"
    assert '"--kernel",\n        KERNEL,' in noxfile  # the site's executions (docs/execute.py)
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        spec = json.loads(path.read_text(encoding="utf-8"))["metadata"]["kernelspec"]
        assert spec["name"] == "python3", f"{path.name} opens on {spec['name']}"


@pytest.mark.parametrize(
    ("identity", "banner"),
    [
        ({"size": "smoke", "parameters": {}}, "Smoke run"),
        ({"size": "class", "parameters": {}}, "Class-size run"),
        (
            {"size": "smoke", "parameters": {}, "started": "2026-12-03 17:05 UTC", "commit": "4e+"},
            "2026-12-03 17:05 UTC, commit 4e with local changes)",
        ),
        ({"size": "reference", "parameters": {}, "commit": "4ebcdf6"}, "0, commit 4ebcdf6)"),
        ({"size": "reference", "parameters": {"max_chars": 600}}, "(max_chars=600; hierret"),
        ({"size": "reference", "parameters": {}}, "Reference run"),
        ({"smoke": True, "parameters": {}}, "Smoke run"),  # a record from before `size`
        (None, "No notebook run"),
    ],
)
def test_every_page_says_which_run_built_it(
    identity: dict[str, Any] | None, banner: str, tmp_path: Path
) -> None:
    """The smoke site's home page said passages lose, DR-001 on the same site that they win."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("site_conf", ROOT / "docs" / "conf.py")
    assert spec is not None
    assert spec.loader is not None
    conf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conf)
    record = tmp_path / "timing.json"
    if identity is not None:
        record.write_text(json.dumps({"identity": identity}), encoding="utf-8")
    assert banner in conf._run_banner(record)


@pytest.mark.parametrize("path", sorted((ROOT / "notebooks").glob("*.ipynb")), ids=lambda p: p.stem)
def test_no_loop_of_a_notebook_rebinds_a_parameter(path: Path) -> None:
    """The record reads the run's parameters from the namespace when written: DR-004's
    ``for size in chunk_chars`` recorded a class-size run as ``size: 1800``."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    at = next(i for i, c in enumerate(cells) if "parameters" in c["metadata"].get("tags", []))
    declared = {t.id for n in ast.parse("".join(cells[at]["source"])).body for t in n.targets}
    source = "\n".join(line for line in _code_lines(path) if not line.lstrip().startswith("%"))
    loops = [n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.For)]
    bound = {n.id for loop in loops for n in ast.walk(loop.target) if isinstance(n, ast.Name)}
    assert not bound & declared, f"{path.stem}: a loop rebinds {sorted(bound & declared)}"


@pytest.mark.parametrize("path", sorted((ROOT / "notebooks").glob("*.ipynb")), ids=lambda p: p.stem)
def test_the_table_of_sizes_shows_on_the_site_and_its_code_does_not(path: Path) -> None:
    """The check cell draws each size's run time and glues the exercises' times: its
    output must reach the page (a removed cell's would not), its code need not."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    checks = ("check_notebook(", "Lesson.begin(")  # a Lesson checks them the same way
    check = next(c for c in cells if any(x in "".join(c["source"]) for x in checks))
    assert "run_times(" in "".join(check["source"]) or ".times()" in "".join(check["source"])
    assert check["metadata"].get("tags") == ["remove-input"]
