"""The teacher's page (docs/teaching.md): linked from home, every exercise answered."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hierret.publish.report import quoted
from hierret.publish.timing import exercises_of

ROOT = Path(__file__).resolve().parents[1]
PAGE = (ROOT / "docs" / "teaching.md").read_text(encoding="utf-8")
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def test_the_home_page_links_it_and_its_toctree_holds_it() -> None:
    index = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    assert "(teaching.md)" in index
    toctrees = re.findall(r"```\{toctree\}(.*?)```", index, re.DOTALL)
    assert any(re.search(r"^teaching$", t, re.MULTILINE) for t in toctrees)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_exercise_has_a_hint_and_a_folded_answer(path: Path) -> None:
    listed = exercises_of(path)
    assert listed, f"{path.name} lists no exercises"
    section = PAGE.split(f"({path.stem[:2]})\n", 1)[1].split("\n### ", 1)[0]
    for n in range(1, len(listed) + 1):
        assert re.search(rf"\*\*{n}\. .+?\*\* \*Hint:\*", section, re.DOTALL), (path.stem, n)
    assert section.count("<details>") == section.count("</details>") == len(listed)


def test_every_time_is_quoted_from_the_timing_records() -> None:
    """A duration on the page is a marked number, so the check fails when the records move."""
    marked = quoted(PAGE)
    assert marked
    assert all(k.split(".")[0].startswith("timing_") for k in marked)
    bare = re.findall(r"\b\d+(?:\.\d+)? ?(?:s|min|minutes|hours?)\b(?!<!--)", PAGE)
    assert bare == [], f"times typed without a marker: {bare}"
    for nb in NOTEBOOKS:  # each notebook's row: first run, warm rerun, every exercise
        assert f"timing_class_cold.{nb.stem}_wall_s" in marked
        assert f"timing_class.{nb.stem}_wall_s" in marked
        for n in range(1, len(exercises_of(nb)) + 1):
            assert f"timing_exercises.{nb.stem}_exercise_{n}_wall_s" in marked


def test_the_checked_pages_include_it() -> None:
    text = (ROOT / "docs" / "check_decisions.py").read_text(encoding="utf-8")
    assert '"docs" / "teaching.md"' in text
