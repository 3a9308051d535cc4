"""``stats/`` and ``publish/`` keep no module-level mutable state: what they write is handed in.

A module-level name that a function changes (a ledger, a cache, a registry) is a data
path no import shows: what a record publishes would depend on what ran before in the
same process. Read from the source with :mod:`ast`: no ``global`` statement, no
module-level name changed in place (a method that mutates, an item or attribute
assigned or deleted, an augmented assignment), no function cached at module level
(``functools.cache``/``lru_cache``). Module-level constants (tuples, frozensets,
dicts and lists never changed) are allowed.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "hierret"
FOLDERS = ("stats", "publish")
MUTATORS = frozenset(
    {"append", "extend", "insert", "pop", "popitem", "remove", "clear", "update",
     "setdefault", "add", "discard", "sort", "reverse", "__setitem__", "__delitem__"}
)  # fmt: skip


def _root(node: ast.expr) -> str | None:
    """The name an attribute or item chain starts from (``a`` of ``a.b[c].d``)."""
    while isinstance(node, ast.Attribute | ast.Subscript):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _module_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AnnAssign):
            targets = [node.target]
        names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return names - {"__all__"}


def _locals(func: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """Names a function binds itself (its arguments and assignments): not the module's."""
    args = func.args
    bound = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
    bound |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
    for node in ast.walk(func):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound.add(node.id)
    return bound


def _own(scope: ast.AST) -> list[ast.AST]:
    """The nodes of ``scope`` outside the functions it defines (each is its own scope)."""
    out, todo = [], list(ast.iter_child_nodes(scope))
    while todo:
        node = todo.pop()
        out.append(node)
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            todo += ast.iter_child_nodes(node)
    return out


def problems(source: str) -> list[str]:
    """Every place ``source`` keeps or changes module-level state, as ``line N: what``."""
    tree = ast.parse(source)
    module = _module_names(tree)
    out: list[str] = []
    scopes: list[tuple[ast.AST, set[str]]] = [(tree, set())]
    scopes += [
        (f, _locals(f))
        for f in ast.walk(tree)
        if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)
    ]
    for f in tree.body:
        if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef):
            for d in f.decorator_list:
                if "cache" in ast.unparse(d):
                    out.append(f"line {d.lineno}: {f.name} is cached ({ast.unparse(d)})")
    seen: set[tuple[int, str]] = set()
    for scope, local in scopes:
        shared = module - local
        for node in _own(scope):
            found = None
            if isinstance(node, ast.Global):
                found = f"global {', '.join(node.names)}"
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                root = _root(node.func.value)
                if root in shared and node.func.attr in MUTATORS:
                    found = f"{ast.unparse(node.func)}() changes {root}"
            elif isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign | ast.Delete):
                targets = (
                    node.targets if isinstance(node, ast.Assign | ast.Delete) else [node.target]
                )
                for t in targets:
                    root = _root(t)
                    if root in shared and (
                        isinstance(t, ast.Attribute | ast.Subscript)
                        or (isinstance(node, ast.AugAssign) and scope is not tree)
                    ):
                        found = f"{ast.unparse(t)} changes {root}"
            if found and (node.lineno, found) not in seen:
                seen.add((node.lineno, found))
                out.append(f"line {node.lineno}: {found}")
    return sorted(out, key=lambda s: int(s.split(":")[0].split()[1]))


def test_the_rule_finds_a_ledger_a_cache_and_a_registry() -> None:
    """What ``stats/evidence.py`` held before issue 40, and the usual other forms."""
    source = """
import functools
_LEDGER = _Ledger()
_SEEN = {}
LIMIT = (1, 2)

def clear():
    global _LEDGER
    _LEDGER = _Ledger()

def keep(test):
    _LEDGER.tests.append(test)
    _LEDGER.family_of[1] = 0

def note(key, value):
    _SEEN[key] = value

@functools.lru_cache(maxsize=8)
def slow(x):
    return x

def fine(values):
    out = {}
    out["a"] = LIMIT[0]
    _SEEN = {}
    _SEEN["x"] = 1
    return out
"""
    assert problems(source) == [
        "line 8: global _LEDGER",
        "line 12: _LEDGER.tests.append() changes _LEDGER",
        "line 13: _LEDGER.family_of[1] changes _LEDGER",
        "line 16: _SEEN[key] changes _SEEN",
        "line 18: slow is cached (functools.lru_cache(maxsize=8))",
    ]


@pytest.mark.parametrize(
    "path",
    sorted(p for folder in FOLDERS for p in (PACKAGE / folder).glob("*.py")),
    ids=lambda p: f"{p.parent.name}/{p.name}",
)
def test_stats_and_publish_keep_no_module_state(path: Path) -> None:
    assert problems(path.read_text(encoding="utf-8")) == []
