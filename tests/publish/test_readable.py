"""An executed notebook readable outside the site (hierret.publish.readable)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hierret.publish.readable import ROLE, glued_values, inline_glue, main
from hierret.publish.report import GLUE_PREFIX

ROOT = Path(__file__).resolve().parents[2]


def _glued(name: str, text: str) -> dict[str, object]:
    return {
        "output_type": "display_data",
        "data": {GLUE_PREFIX + "text/plain": text},
        "metadata": {"scrapbook": {"name": name, "mime_prefix": GLUE_PREFIX}},
    }


def _executed(*markdown: str) -> dict[str, object]:
    outputs = [_glued("exercise_1_time", "2 min at class size"), _glued("pool", "100")]
    cells = [{"cell_type": "code", "source": "x", "outputs": outputs, "metadata": {}}]
    cells += [{"cell_type": "markdown", "source": m, "metadata": {}} for m in markdown]
    return {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


def test_every_role_the_notebook_glued_reads_as_its_value() -> None:
    nb = inline_glue(_executed("run it ({glue}`exercise_1_time`)", "a pool of {glue}`pool`"))
    assert nb["cells"][1]["source"] == "run it (2 min at class size)"
    assert nb["cells"][2]["source"] == "a pool of 100"


def test_a_format_applies_to_numbers_and_an_unknown_key_stays_as_written() -> None:
    nb = inline_glue(_executed("{glue:text}`pool:.1f` and {glue}`other`"))
    assert nb["cells"][1]["source"] == "100.0 and {glue}`other`"


@pytest.mark.parametrize("path", sorted((ROOT / "notebooks").glob("*.ipynb")), ids=lambda p: p.stem)
def test_the_notebooks_use_only_roles_it_reads(path: Path) -> None:
    text = "".join(
        "".join(c["source"])
        for c in json.loads(path.read_text(encoding="utf-8"))["cells"]
        if c["cell_type"] == "markdown"
    )
    assert text.count("{glue") == len(ROLE.findall(text))


def test_the_command_rewrites_the_output_and_refuses_what_is_not_executed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "out.ipynb"
    src.write_text(json.dumps(_executed("({glue}`exercise_1_time`)")), encoding="utf-8")
    assert main([str(src), str(tmp_path / "read" / "r.ipynb")]) == 0
    written = json.loads((tmp_path / "read" / "r.ipynb").read_text(encoding="utf-8"))
    assert written["cells"][1]["source"] == "(2 min at class size)"
    assert glued_values(written) == {"exercise_1_time": "2 min at class size", "pool": "100"}
    assert main([str(src)]) == 0  # in place
    assert "{glue" not in src.read_text(encoding="utf-8")
    source = ROOT / "notebooks" / "01_structure.ipynb"  # not executed: no values
    assert main([str(source), str(tmp_path / "x.ipynb")]) == 2
    assert "execute it first" in capsys.readouterr().err
    (tmp_path / "bad.ipynb").write_text("{", encoding="utf-8")
    assert main([str(tmp_path / "bad.ipynb")]) == 2
    assert "is not a notebook" in capsys.readouterr().err
