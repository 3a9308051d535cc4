"""``docs/design.md`` says what the code is: every module it names exists, and every
module of the package is named there (in *Where each concept lives*), so a module
added, moved or removed without the note following fails here."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NOTE = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
PACKAGE = ROOT / "src" / "hierret"
TICKED = re.compile(r"`([^`\n]+)`")


def _stems() -> dict[str, list[Path]]:
    """Each module's and subpackage's short name (``units``, ``cache``), public ones."""
    found: dict[str, list[Path]] = {}
    for path in PACKAGE.rglob("*.py"):
        name = path.parent.name if path.name == "__init__.py" else path.stem
        if path.parent == PACKAGE and path.name == "__init__.py":
            continue  # the package itself
        if name.startswith("_") and name != "__main__":
            continue  # private helpers need no entry
        found.setdefault(name, []).append(path)
    return found


def _section(title: str) -> str:
    start = NOTE.index(f"## {title}")
    end = NOTE.find("\n## ", start + 1)
    return NOTE[start : end if end > 0 else len(NOTE)]


def test_every_module_of_the_package_is_named_where_concepts_live() -> None:
    ticked = TICKED.findall(_section("Where each concept lives"))
    named = {t.rstrip("/").rsplit("/", 1)[-1] for t in ticked}  # `search/vectors/` names vectors
    missing = sorted(stem for stem in _stems() if stem not in named)
    assert missing == [], f"modules docs/design.md does not place: {missing}"


def test_every_module_the_note_names_exists() -> None:
    stems = _stems()
    wrong = []
    for token in TICKED.findall(_section("Where each concept lives")):
        word = token.rstrip("/")
        if re.fullmatch(r"[a-z_0-9]+", word) and word not in stems:
            wrong.append(token)
    for token in TICKED.findall(NOTE):
        if token.startswith("hierret.") and re.fullmatch(r"[\w.]+", token):
            parts = token.split(".")
            while parts and not (
                PACKAGE.parent.joinpath(*parts).with_suffix(".py").is_file()
                or PACKAGE.parent.joinpath(*parts, "__init__.py").is_file()
            ):
                parts.pop()  # hierret.x.Name: the module is x
            if len(parts) < 2:
                wrong.append(token)
        elif re.fullmatch(r"(tests|docs|src|notebooks)/[\w/.]+\.(py|md)", token):
            wrong += [] if (ROOT / token).is_file() else [token]
        elif re.fullmatch(r"[a-z_]+/[a-z_]+\.py", token):  # encoders/registry.py
            wrong += [] if (PACKAGE / token).is_file() else [token]
    assert wrong == [], f"docs/design.md names what does not exist: {wrong}"
