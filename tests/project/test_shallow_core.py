"""A shallow core: what importing one core module costs, read from the code and measured.

Two measures, both of what runs when a module is imported (imports inside
functions run later, on first use; ``TYPE_CHECKING`` imports never run):

* **the longest import chain** among the core's modules, read from the source
  with :mod:`ast` (a module runs its package's ``__init__`` first, so that counts
  as an import too); issue 40 found 12 modules, the faces of the subpackages
  (``hierret.encoders`` …) loading every member and every encoder backend;
* **the modules an import loads**, counted in a fresh interpreter's ``sys.modules``.

The subpackage faces (``hierret.encoders``, ``datasets``, ``evaluation``,
``rankers``, ``rerank``, ``stats``) load their names on first use (PEP 562), as
``hierret`` itself does, and the core's modules import the module that defines
a name (``hierret.encoders.base``), never a face: a face is for users.
"""

from __future__ import annotations

import ast
import importlib
import json
import subprocess
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"

#: The lazy faces: a subpackage's ``__init__`` that loads its members on first use.
FACES = (
    "hierret.structure",
    "hierret.search.vectors",
    "hierret.encoders.embed",
    "hierret.search",
    "hierret.datasets",
    "hierret.encoders",
    "hierret.evaluation",
    "hierret.search.rankers",
    "hierret.search.rerank",
    "hierret.evaluation.stats",
)
#: The encoder backends, and the libraries they wrap, that no value type may load.
BACKENDS = tuple(
    f"hierret.encoders.{b}" for b in ("e5", "e5_torch", "onnx", "sentence_transformers", "static")
)
MODEL_LIBRARIES = ("torch", "onnxruntime", "sentence_transformers", "transformers", "wordllama")


def _module_name(path: Path, src: Path) -> str:
    parts = path.relative_to(src).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _import_time_nodes(body: list[ast.stmt]) -> Iterator[ast.Import | ast.ImportFrom]:
    """The import statements that run when a module body runs: not those in functions,
    nor under ``if TYPE_CHECKING:`` (its ``else`` runs)."""
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        elif isinstance(node, ast.If) and _is_type_checking(node.test):
            yield from _import_time_nodes(node.orelse)
        else:
            for field in ("body", "orelse", "finalbody", "handlers"):
                inner = getattr(node, field, None)
                if isinstance(inner, list):
                    yield from _import_time_nodes(
                        [s for s in inner if isinstance(s, ast.stmt)]
                        + [s for h in inner if isinstance(h, ast.ExceptHandler) for s in h.body]
                    )


def import_graph(src: Path = SRC) -> dict[str, set[str]]:
    """``{module: the hierret modules importing it runs}`` for every module under ``src``.

    ``import a.b`` and ``from a.b import c`` run ``a``'s ``__init__``, then ``a.b`` (and
    ``a.b.c`` when that is a module): an import names each package on the way, except
    those the importing module sits in, which run before it. Only what runs at import
    time counts (see :func:`_import_time_nodes`).
    """
    paths = {_module_name(p, src): p for p in sorted((src / "hierret").rglob("*.py"))}
    graph: dict[str, set[str]] = {}
    for module, path in paths.items():
        running = {".".join(module.split(".")[:i]) for i in range(1, module.count(".") + 2)}
        found: set[str] = set()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in _import_time_nodes(tree.body):
            if isinstance(node, ast.Import):
                named = [a.name for a in node.names]
            else:
                base = node.module or ""
                named = [base, *(f"{base}.{a.name}" for a in node.names)]
            for target in named:
                parts = target.split(".")
                found |= {".".join(parts[:i]) for i in range(1, len(parts) + 1)}
        graph[module] = {m for m in found if m in paths} - running
    return graph


def core(module: str) -> bool:
    """Whether a module is the core's: not under ``hierret.study`` nor ``hierret.publish``."""
    return module.split(".")[1:2] not in (["study"], ["publish"])


def longest_chain(graph: dict[str, set[str]]) -> list[str]:
    """The longest chain of imports ``[a, b, c, ...]`` (``a`` imports ``b``, which imports
    ``c``...) in an acyclic graph; ties go to the first in sorted order."""

    @cache
    def chain(module: str) -> tuple[str, ...]:
        best: tuple[str, ...] = ()
        for target in sorted(graph.get(module, ())):
            below = chain(target)
            if len(below) > len(best):
                best = below
        return (module, *best)

    return max((list(chain(m)) for m in sorted(graph)), key=len, default=[])


def core_graph(src: Path = SRC) -> dict[str, set[str]]:
    """:func:`import_graph` restricted to the core."""
    return {m: {t for t in ts if core(t)} for m, ts in import_graph(src).items() if core(m)}


def loaded_by(statement: str) -> dict[str, list[str]]:
    """What ``statement`` loads in a fresh interpreter: hierret modules and model libraries
    (read from the last line it prints)."""
    code = (
        f"import sys, json; {statement}; m = sorted(sys.modules); print(json.dumps({{"
        "'hierret': [n for n in m if n == 'hierret' or n.startswith('hierret.')], "
        f"'libraries': [n for n in {MODEL_LIBRARIES!r} if n in sys.modules]}}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    loaded: dict[str, list[str]] = json.loads(out.splitlines()[-1])
    return loaded


# --------------------------------------------------------------------------- the measures


def test_the_chain_finder_finds_the_longest_chain() -> None:
    graph = {"a": {"b", "d"}, "b": {"c"}, "c": set(), "d": set(), "e": {"a"}}
    assert longest_chain(graph) == ["e", "a", "b", "c"]
    assert longest_chain({}) == []


def test_the_graph_reads_what_runs_at_import_time(tmp_path: Path) -> None:
    package = tmp_path / "hierret"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("")
    (package / "sub" / "leaf.py").write_text("import json\n")
    (package / "sub" / "other.py").write_text("")
    (package / "top.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "from hierret.sub import leaf\n"
        "if TYPE_CHECKING:\n    import hierret.sub.other\n"
        "def f():\n    import hierret.sub.other\n"
        "try:\n    import hierret.sub.other as o\nexcept ImportError:\n    pass\n"
    )
    graph = import_graph(tmp_path)
    assert graph["hierret.top"] == {"hierret.sub", "hierret.sub.leaf", "hierret.sub.other"}
    assert graph["hierret.sub.leaf"] == set()
    assert longest_chain(graph) == ["hierret.top", "hierret.sub"]


def _face_imports(path: Path) -> Iterator[str]:
    """Each import in ``path``, at any depth, that takes a name from a subpackage's face
    (``from hierret.encoders import Encoder``; ``from hierret.evaluation.stats import evidence``, a
    module, and ``from hierret.encoders.base import Encoder`` do not)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module in FACES:
            folder = SRC.joinpath(*node.module.split("."))
            names = [a.name for a in node.names if not (folder / f"{a.name}.py").exists()]
            if names:
                yield f"line {node.lineno}: from {node.module} import {', '.join(names)}"
        elif isinstance(node, ast.Import):
            yield from (
                f"line {node.lineno}: import {a.name}" for a in node.names if a.name in FACES
            )


def _type_checking_names(path: Path) -> set[str]:
    """The names a module imports under ``if TYPE_CHECKING:`` (what mypy sees of a face)."""
    names = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for inner in node.body:
                if isinstance(inner, ast.ImportFrom):
                    names |= {a.asname or a.name for a in inner.names}
    return names


# --------------------------------------------------------------------------- the properties


def test_the_longest_core_import_chain_is_short() -> None:
    """Issue 40 found 12 modules by the floors' reading (every import, those in functions
    too) and this reading gives 14 for that code: ``hierret.__main__``, ``cli``, ``search``,
    ``profile``, ``rerank``, ``rerank.maxsim``, ``cache``, ``encoders``, ``registry``,
    ``lazy``, ``onnx``, ``sentence_transformers``, ``base``, ``_clock``. 7 once the faces
    loaded lazily; 10 since the vector cache became a package of layers (``__main__``,
    ``cli``, ``embed``, ``cache``, its ``_encoder``, ``_store``, ``_shelf``, ``_keys``, then
    ``encoders.base``, ``_clock``): each a layer of one concept, none a face that loads
    what it does not use."""
    chain = longest_chain(core_graph())
    assert len(chain) <= 10, " -> ".join(chain)


def test_the_core_imports_what_defines_a_name_not_a_face() -> None:
    """A face (``hierret.encoders``) is for users; inside the package a module imports the
    module that defines the name (``hierret.encoders.base``, ``hierret.encoders.registry``).
    """
    wrong = [
        f"{name}: {line}"
        for path in sorted((SRC / "hierret").rglob("*.py"))
        if core(name := _module_name(path, SRC)) and name not in ("hierret", *FACES)
        for line in _face_imports(path)
    ]
    assert wrong == []


#: What ``import hierret`` loads beside the package itself: ``hierret._face``, the one
#: helper every face builds its ``__getattr__``/``__dir__`` with (standard library only),
#: rather than each face writing the same dozen lines (nor a cycle through the root's
#: ``TYPE_CHECKING`` imports, which users' type checkers need); and ``hierret._moved``, the
#: finder that keeps the module paths issue 40 moved importable, with a warning, for one
#: release (standard library only; a module of its own, so that it goes in one piece).
SHARED = ["hierret", "hierret._face", "hierret._moved"]


@pytest.mark.parametrize("face", FACES)
def test_a_face_loads_nothing_until_a_name_is_used(face: str) -> None:
    """A face loads itself, the faces it sits in (``hierret.search`` for
    ``hierret.search.vectors``: lazy faces too) and :data:`SHARED`, nothing else."""
    parts = face.split(".")
    chain = [".".join(parts[:i]) for i in range(2, len(parts) + 1)]
    assert loaded_by(f"import {face}")["hierret"] == sorted({*SHARED, *chain})


@pytest.mark.parametrize("face", FACES)
def test_a_lazy_face_lists_its_names_and_mypy_sees_them(face: str) -> None:
    """``__all__`` lists what the face maps; each name loads (the defining module's own
    object) and is listed by ``dir()``; mypy sees each through a ``TYPE_CHECKING`` import."""
    module = importlib.import_module(face)
    assert sorted(module.__all__) == sorted(module._FACE), "__all__ and _FACE differ"
    assert set(module.__all__) <= set(dir(module))
    for name in module.__all__:
        value = getattr(module, name)
        defining = importlib.import_module(module._FACE[name])
        assert value is (
            defining if defining.__name__ == f"{face}.{name}" else getattr(defining, name)
        )
    path = SRC.joinpath(*face.split(".")) / "__init__.py"
    assert _type_checking_names(path) == set(module.__all__)
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        module.no_such_name  # noqa: B018


#: What importing a value type may load: the face's ``hierret`` and a handful of modules
#: (:data:`SHARED`'s helpers not counted: every import of the package loads them). Issue 40
#: put the flat modules in concept packages, each with a lazy face whose ``__init__`` loads
#: nothing but ``hierret._face``: a bound went up by the new faces an import runs through
#: (``structure``, ``vectors``, ``search``), each named, and by nothing else.
VALUE_TYPES = {
    "import hierret.search.profile": 9,  # was 33 (every encoder backend among them); +search
    "from hierret.structure.units import Corpus, Document, Query": 4,  # +structure
    "from hierret.search.hits import Hit": 10,  # +search, +structure
    "from hierret.search.rerank import Selection": 5,  # was 24; +search (its runs)
    "from hierret.evaluation.stats import StatsSettings": 5,  # was 12; +evaluation
    "from hierret.encoders.base import EncoderIdentity": 6,  # was 15
}


@pytest.mark.parametrize("statement", VALUE_TYPES)
def test_a_value_type_loads_a_handful_of_modules_and_no_encoder(statement: str) -> None:
    loaded = loaded_by(statement)
    own = [m for m in loaded["hierret"] if m == "hierret" or m not in SHARED]
    assert len(own) <= VALUE_TYPES[statement], own
    assert [m for m in loaded["hierret"] if m in BACKENDS] == []
    assert loaded["libraries"] == []


#: The core's larger modules, counted the same way (before: 15, 18, 37 with every backend);
#: since issue 40, with the new faces each runs through: ``vectors`` and ``search`` for the
#: index, ``structure``, ``vectors`` and ``search`` for the searcher.
LOADS = {
    "import hierret.encoders": 2,
    "import hierret.search.vectors.index": 13,
    "import hierret.search.searcher": 30,
}


@pytest.mark.parametrize("statement", LOADS)
def test_the_core_modules_load_no_encoder_backend(statement: str) -> None:
    """Measured 2, 9 and 25 (2, 12 and 29 since the faces of issue 40); a little room for a
    module split in two."""
    loaded = loaded_by(statement)
    own = [m for m in loaded["hierret"] if m == "hierret" or m not in SHARED]
    assert len(own) <= LOADS[statement], own
    assert [m for m in loaded["hierret"] if m in BACKENDS] == []
    assert loaded["libraries"] == []


def test_the_command_line_starts_without_a_model_backend() -> None:
    """``python -m hierret --help`` works and loads only the sentence-transformers module
    (it names the MiniLM's aliases; it imports no model library), no other backend."""
    code = (
        "import runpy, sys; sys.argv = ['hierret', '--help']\n"
        "try:\n    runpy.run_module('hierret', run_name='__main__')\n"
        "except SystemExit as stop:\n    assert stop.code == 0, stop.code\n"
    )
    loaded = loaded_by(f"exec({code!r})")
    assert [m for m in loaded["hierret"] if m in BACKENDS] == [
        "hierret.encoders.sentence_transformers"
    ]
    assert loaded["libraries"] == []
