"""Every nox session installs what its commands import: checked without nox, statically.

`nox -s bench` on a fresh clone installed the ``test,models,bench`` extras and
then failed after every benchmark had run: ``run_all.py`` publishes its record
with :func:`hierret.publish.record.publish`, which glues through IPython, and no
extra it installed held IPython. The test here runs each session function of
``noxfile.py`` with a stand-in session that records what it installs and runs,
then follows every command to the modules it imports:

* ``python -m MODULE`` imports MODULE; a console script (``ruff``, ``pytest``,
  ``sphinx-build``) is its distribution's;
* ``python SCRIPT`` imports what the script imports, followed through the
  repository's own modules (``hierret``, a script beside it that it imports or
  runs by name) at any depth, functions' bodies included; an import guarded by
  ``except ImportError`` and one under ``if TYPE_CHECKING`` are left out;
* a script that executes the notebooks (``docs/execute.py``) adds the notebooks'
  imports; ``sphinx-build`` adds ``docs/conf.py`` and its ``extensions``;
  ``pytest PATHS`` adds the test modules and ``conftest.py`` files under PATHS.

Each third-party module must belong to a distribution the session installs: a
requirement of the package or of an extra it names, or one of theirs (the
dependency closure read from this environment's metadata).
"""

from __future__ import annotations

import ast
import functools
import importlib.metadata as metadata
import importlib.util
import json
import re
import sys
import tomllib
import types
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
SCRIPTS = (ROOT / "docs", ROOT / "tests", ROOT / "tests" / "benchmarks")
#: Modules imported only when their extra is installed and asked for, with the sessions
#: that must install them all the same: ``ray`` (the ``ray`` extra, ``hierret embed
#: --engine ray``; without it the command says which extra to install, and its tests
#: skip), which the tests session installs so that its tests run. The module is named
#: after its distribution, so the check holds where the extra is not installed.
OPTIONAL = {"ray": frozenset({"tests"})}
TESTS = ("test_", "conftest")  # the files pytest collects or loads
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


class _Refused(Exception):
    pass


class _Session:
    """A nox session that records what it is asked to install and run."""

    def __init__(self, name: str, posargs: list[str]) -> None:
        self.name = name
        self.posargs = posargs
        self.installed: list[str] = []
        self.ran: list[tuple[str, ...]] = []

    def install(self, *args: str) -> None:
        self.installed += args

    def run(self, *args: str, **_: object) -> None:
        self.ran.append(tuple(args))

    def log(self, *_: object) -> None:
        pass

    def error(self, message: str) -> None:
        raise _Refused(message)


def _sessions(monkeypatch: pytest.MonkeyPatch) -> tuple[Any, dict[str, Callable[..., None]]]:
    """noxfile.py loaded with a stand-in ``nox``, and its sessions by name."""
    found: dict[str, Callable[..., None]] = {}

    def session(*_: object, **__: object) -> Callable[[Callable[..., None]], Callable[..., None]]:
        def register(function: Callable[..., None]) -> Callable[..., None]:
            found[function.__name__] = function
            return function

        return register

    stub = types.SimpleNamespace(options=types.SimpleNamespace(), Session=object, session=session)
    monkeypatch.setitem(sys.modules, "nox", stub)
    spec = importlib.util.spec_from_file_location("_noxfile_installs", ROOT / "noxfile.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, found


# -- what a session installs ------------------------------------------------------------


def _closure(requirements: list[str]) -> set[str]:
    """The distributions ``requirements`` install, with their dependencies (this
    environment's metadata; a distribution not installed here counts without its own)."""
    seen: set[tuple[str, tuple[str, ...]]] = set()
    todo = [Requirement(r) for r in requirements]
    while todo:
        req = todo.pop()
        extras = tuple(sorted(req.extras))
        if (canonicalize_name(req.name), extras) in seen:
            continue
        seen.add((canonicalize_name(req.name), extras))
        try:
            dist = metadata.distribution(req.name)
        except metadata.PackageNotFoundError:
            continue
        envs = [{"extra": e} for e in extras] or [{"extra": ""}]
        for line in dist.requires or []:
            dep = Requirement(line)
            if dep.marker is None or any(dep.marker.evaluate(env) for env in envs):
                todo.append(dep)
    return {name for name, _ in seen}


def _installed(session: _Session) -> set[str]:
    requirements: list[str] = []
    for arg in session.installed:
        if arg == "-e":
            continue
        local = re.fullmatch(r"\.(?:\[([\w,-]+)\])?", arg)
        if local:
            requirements += PROJECT["dependencies"]
            for extra in (local.group(1) or "").split(","):
                requirements += PROJECT["optional-dependencies"][extra] if extra else []
        else:
            requirements.append(arg)
    return _closure(requirements)


# -- what a command imports -------------------------------------------------------------


def _guarded(tree: ast.AST) -> set[int]:
    """ids of the import nodes under ``except ImportError`` or ``if TYPE_CHECKING``."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        body: list[ast.stmt] = []
        if isinstance(node, ast.Try):
            caught = {ast.unparse(h.type) for h in node.handlers if h.type is not None}
            if caught & {"ImportError", "ModuleNotFoundError", "(ImportError, OSError)"}:
                body = node.body
        elif isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            body = node.body
        skip |= {id(n) for stmt in body for n in ast.walk(stmt)}
    return skip


def _imports(tree: ast.AST) -> Iterator[str]:
    skip = _guarded(tree)
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            yield node.module
            yield from (f"{node.module}.{alias.name}" for alias in node.names)


def _named_siblings(path: Path, tree: ast.AST) -> Iterator[Path]:
    """Scripts beside ``path`` its text names (``"execute.py"``, ``f"bench_{name}.py"``)."""
    patterns = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            parts = [
                re.escape(v.value) if isinstance(v, ast.Constant) else ".+" for v in node.values
            ]
            patterns.append("".join(parts))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            patterns.append(re.escape(node.value))
    patterns = [p for p in patterns if p.endswith(r"\.py")]
    for sibling in sorted(path.parent.glob("*.py")):
        if sibling != path and any(re.fullmatch(p, sibling.name) for p in patterns):
            yield sibling


def _local(name: str, beside: Path) -> Path | None:
    """The repository file of module ``name`` (hierret's, a script's neighbour, or a module
    of the scripts' folders, which tests put on ``sys.path``)."""
    for base in (SRC, beside, *SCRIPTS):
        parts = base.joinpath(*name.split("."))
        for candidate in (parts.with_suffix(".py"), parts / "__init__.py"):
            if candidate.is_file():
                return candidate
    return None


def _source(path: Path) -> str:
    if path.suffix != ".ipynb":
        return path.read_text(encoding="utf-8")
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    code = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    lines = "\n".join(code).splitlines()
    return "\n".join(ln for ln in lines if not ln.lstrip().startswith(("%", "!")))


@functools.cache
def _file(path: Path) -> tuple[tuple[Path, ...], tuple[str, ...]]:
    """(local files ``path`` imports or runs, third-party top-level modules it imports)."""
    tree = ast.parse(_source(path))
    follow = [] if SRC in path.parents else list(_named_siblings(path, tree))
    outside: list[str] = []
    for name in _imports(tree):
        here = _local(name, path.parent)
        top = name.split(".")[0]
        if here is not None:
            follow.append(here)
            follow += [d / "__init__.py" for d in here.parents if (d / "__init__.py").is_file()]
        elif _local(top, path.parent) is None and top not in sys.stdlib_module_names:
            outside.append(top)
    return tuple(follow), tuple(dict.fromkeys(outside))


def _third_party(files: list[Path]) -> dict[str, Path]:
    """Top-level third-party modules the files import, followed through local modules;
    each with a file that imports it."""
    seen: set[Path] = set()
    out: dict[str, Path] = {}
    todo = list(files)
    while todo:
        path = todo.pop()
        if path not in seen:
            seen.add(path)
            follow, outside = _file(path)
            todo += follow
            for top in outside:
                out.setdefault(top, path)
    return out


@functools.cache
def _console_scripts() -> dict[str, str]:
    return {
        ep.name: canonicalize_name(ep.dist.name)
        for ep in metadata.entry_points(group="console_scripts")
        if ep.dist is not None
    }


def _needs(command: tuple[str, ...]) -> tuple[set[str], dict[str, Path]]:
    """(distributions by console script, third-party modules) that ``command`` uses."""
    if command[0] == "python" and command[1] == "-m":
        return set(), {command[2].split(".")[0]: ROOT / "noxfile.py"}
    if command[0] == "python":
        files = [ROOT / command[1]]
        if command[1] == "docs/execute.py" or command[1] in ("docs/sizes.py", "docs/variations.py"):
            files += sorted((ROOT / "notebooks").glob("*.ipynb"))
        return set(), _third_party(files)
    # a tool not installed here (ruff, in a venv without the lint extra): its own name
    tool = _console_scripts().get(command[0], canonicalize_name(command[0]))
    modules: dict[str, Path] = {}
    if command[0] == "sphinx-build":
        conf = ROOT / "docs" / "conf.py"
        modules = _third_party([conf])
        extensions = re.search(r"extensions = \[(.*?)\]", conf.read_text(), re.S)
        assert extensions is not None
        for name in re.findall(r'"([\w.]+)"', extensions.group(1)):
            here = _local(name, conf.parent)  # the site's own extensions (docs/terms.py)
            for top, where in (_third_party([here]) if here else {name: conf}).items():
                modules.setdefault(top.split(".")[0], where)
    if command[0] == "pytest":
        files = []
        for path in (ROOT / a for a in command[1:] if (ROOT / a).is_dir()):
            package = (path / "__init__.py").is_file()  # doctests import all of it
            files += [f for f in path.rglob("*.py") if package or f.name.startswith(TESTS)]
        modules = _third_party(files)
    return {tool}, modules


@functools.cache
def _distributions() -> Mapping[str, list[str]]:
    return metadata.packages_distributions()


def _distribution(module: str) -> set[str]:
    names = _distributions().get(module)
    assert names, (
        f"module {module!r} is in no distribution installed here: install the project's "
        "extras (pip install -e '.[test,notebooks,docs,models,lint,bench,ray]') to run this test"
    )
    return {canonicalize_name(n) for n in names}


def _run(module: Any, function: Callable[..., None], name: str, posargs: list[str]) -> _Session:
    session = _Session(name, posargs)
    function(session)
    return session


@pytest.fixture
def nox_sessions(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> tuple[Any, dict[str, Callable[..., None]]]:
    module, found = _sessions(monkeypatch)
    monkeypatch.setattr(module, "BUILD", tmp_path / "build")
    executed = tmp_path / "build" / "site" / "src" / "notebooks"
    executed.mkdir(parents=True)
    (executed / "01_structure.ipynb").write_text("{}", encoding="utf-8")  # `docs` needs one
    return module, found


def test_every_session_is_checked(nox_sessions: Any) -> None:
    _, found = nox_sessions
    assert {"tests", "reproduce", "docs", "site_check", "lint", "bench"} <= set(found)


@pytest.mark.parametrize(
    "name", ["tests", "reproduce", "docs", "site_check", "lint", "variations", "sizes", "bench"]
)
def test_each_session_installs_what_its_commands_import(nox_sessions: Any, name: str) -> None:
    module, found = nox_sessions
    if name not in found:
        pytest.skip(f"noxfile.py has no session {name!r}")
    for posargs in ([], ["--smoke", "--record"]):
        session = _run(module, found[name], name, posargs)
        assert session.installed, f"nox -s {name} installs nothing"
        held = _installed(session)
        for command in session.ran:
            tools, modules = _needs(command)
            for tool in tools:
                assert tool in held, f"nox -s {name} runs {command[0]}; it installs no {tool}"
            for top, where in sorted(modules.items()):
                if top in OPTIONAL and name not in OPTIONAL[top]:
                    continue
                absent = top in OPTIONAL and top not in _distributions()  # its extra's name
                missing = ({top} if absent else _distribution(top)) - held
                assert not missing, (
                    f"nox -s {name} runs `{' '.join(command[:3])}`, which imports {top} "
                    f"({where.relative_to(ROOT)}): {sorted(missing)} is in none of what the "
                    "session installs (its extras in pyproject.toml)"
                )


def test_the_check_catches_a_missing_module(nox_sessions: Any) -> None:
    """The bench session's record is published through IPython: without the dependency
    the check fails (an independent, hand-made session)."""
    session = _Session("bench", [])
    session.install("torch==2.13.0")
    session.install("-e", ".[test,models]")
    held = _installed(session)
    _, modules = _needs(("python", "tests/benchmarks/run_all.py"))
    assert "IPython" in modules  # run_all -> hierret.publish.record -> report.glue
    assert "rank_bm25" in modules  # run_all runs bench_bm25.py by name
    assert not _distribution("IPython") <= held
    assert "torch" in held
    assert "numpy" in held  # the package's own dependencies
