"""The site's scripts (``docs/*.py``) stand on the faces, as a notebook does.

A script imports from ``hierret``, ``hierret.study``, ``hierret.publish`` or a
core subpackage's face (``hierret.datasets``, ``hierret.encoders``...), every
import counted, those inside functions too. :data:`BENEATH` names the few
imports beneath the faces a script needs, each with its reason.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "hierret"
SCRIPTS = sorted((ROOT / "docs").glob("*.py"))
#: The faces: the package, its two floors and every core subpackage.
FACES = (
    {"hierret", "hierret.study", "hierret.publish"}
    | {
        "hierret.study.site_build",  # what the site build uses, beside the notebooks' faces
        "hierret.publish.site_build",
    }
    | {  # hierret.search, and the faces inside it (hierret.search.vectors)
        "hierret." + ".".join(p.parent.relative_to(PACKAGE).parts)
        for p in PACKAGE.rglob("__init__.py")
        if p.parent != PACKAGE
        and p.parent.relative_to(PACKAGE).parts[0] not in {"study", "publish"}
        and not any(part.startswith("_") for part in p.parent.relative_to(PACKAGE).parts)
    }
)
#: (script, module) imported beneath the faces, and why.
BENEATH = {
    ("cost_model.py", "hierret.encoders.cache"): "the store's own keys: its write rate is measured",
}


def hierret_imports(path: Path) -> set[str]:
    """Every ``hierret`` module a script imports from, at any depth."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "hierret":
            found.add(node.module or "")
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == "hierret"}
    return found


def test_the_rule_sees_an_import_beneath_the_faces(tmp_path: Path) -> None:
    script = tmp_path / "x.py"
    script.write_text("def f():\n    from hierret.publish.report import glue\n")
    assert hierret_imports(script) - FACES == {"hierret.publish.report"}


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: p.name)
def test_a_site_script_imports_the_faces(path: Path) -> None:
    beneath = {m for m in hierret_imports(path) - FACES if (path.name, m) not in BENEATH}
    assert beneath == set(), "import from hierret, hierret.study, hierret.publish or a subpackage"


def test_every_exception_is_still_needed() -> None:
    stale = [(s, m) for s, m in BENEATH if m not in hierret_imports(ROOT / "docs" / s)]
    assert stale == []
