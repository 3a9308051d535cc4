"""A notebook's Markdown reads without MyST: no role, no directive (issue 45, item 4).

Papermill's output, JupyterLab and any notebook viewer render a Markdown cell as
CommonMark; only the site (myst-nb) reads MyST. A role (``{glue}`key```) or a
directive fence (```` ```{note} ````) would show there as written. A value that
depends on the run is a code cell's output instead (each exercise's time:
``lesson.exercises()``), or the prose names its parameter, whose value the
parameters cell shows. A role or a fence written *as code* (inside backticks or a
fenced code block) is text, not MyST, and passes.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
#: A role: ``{name}`` right before a backtick, not itself inside a code span's backtick.
ROLE = re.compile(r"(?<!`)\{[A-Za-z][\w:.+-]*\}`[^`\n]*`?")
#: A fence that opens a directive: ```` ```{name} ````, ``~~~{name}``, ``:::{name}``.
DIRECTIVE = re.compile(r"^\s*(`{3,}|~{3,}|:{3,})\s*\{[A-Za-z][\w:.+-]*\}.*$")
#: A fence that opens (or closes) a block of code.
FENCE = re.compile(r"^\s*(`{3,}|~{3,})")


def myst_in(markdown: str) -> list[str]:
    """Each MyST role or directive fence in ``markdown``, as written; code blocks aside.

    A directive's fence is reported and its body read on (its body is Markdown too).
    """
    found: list[str] = []
    fence: str | None = None  # the fence of the code block read, if any
    directives: list[str] = []  # the fences of the directives read, innermost last
    for line in markdown.splitlines():
        if fence is not None:
            if line.strip().startswith(fence):
                fence = None
            continue
        directive = DIRECTIVE.match(line)
        if directive:
            found.append(line.strip())
            directives.append(directive[1])
            continue
        if directives and line.strip() == directives[-1]:
            directives.pop()
            continue
        opened = FENCE.match(line)
        if opened:
            fence = opened[1]
            continue
        found += [m[0] for m in ROLE.finditer(line)]
    return found


def _problems(path: Path, root: Path = ROOT) -> list[str]:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    out = []
    for i, cell in enumerate(cells):
        if cell["cell_type"] != "markdown":
            continue
        source = cell["source"]
        text = "".join(source) if isinstance(source, list) else str(source)
        for said in myst_in(text):
            out.append(
                f"{path.relative_to(root).as_posix()}, cell {i} "
                f"(id {cell.get('id', '?')}): MyST {said!r}, which papermill's output and "
                "JupyterLab show as written; give the value from a code cell's output "
                "(e.g. lesson.exercises(), or display(Markdown(...))), or name the "
                "parameter the parameters cell shows; a note or admonition as plain "
                "Markdown (**Note.** ...)"
            )
    return out


def test_the_checker_finds_roles_and_directives_and_passes_code() -> None:
    text = (
        "Run it ({glue}`exercise_1_time`), a pool of {glue:text}`pool:d`.\n"
        "```{note}\nA note.\n```\n"
        "Roles written as code: `{glue}`, and in a block:\n"
        "```python\nx = '{glue}`pool`'\n```\n"
        'A set in a command: `-y "min_score: {maxsim: 0.7}"`.\n'
    )
    assert myst_in(text) == [
        "{glue}`exercise_1_time`",
        "{glue:text}`pool:d`",
        "```{note}",
    ]
    assert myst_in("Plain Markdown with `code` and **bold**.") == []


def test_the_message_names_the_notebook_the_cell_and_the_fix(tmp_path: Path) -> None:
    nb = {"cells": [{"cell_type": "code", "source": "{glue}`x`", "metadata": {}},
                    {"cell_type": "markdown", "id": "ex", "metadata": {},
                     "source": ["a time ({glue}`exercise_1_time`)\n"]}]}  # fmt: skip
    path = tmp_path / "notebooks" / "07_x.ipynb"
    path.parent.mkdir()
    path.write_text(json.dumps(nb), encoding="utf-8")
    (said,) = _problems(path, tmp_path)
    assert said.startswith("notebooks/07_x.ipynb, cell 1 (id ex): MyST ")
    assert "{glue}`exercise_1_time`" in said
    assert "code cell's output" in said


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_a_notebooks_markdown_needs_no_myst(path: Path) -> None:
    assert _problems(path) == []
