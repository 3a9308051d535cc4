"""The teacher's page (docs/teaching.md): linked from home, every exercise answered."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hierret.publish.report import quoted
from hierret.publish.timing import exercises_of

ROOT = Path(__file__).resolve().parents[2]
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


def test_the_live_reruns_the_path_promises_are_what_the_record_holds() -> None:
    """ "Every notebook reruns in well under a minute" (the 90-minute path) is a claim on
    the warm ``timing_class`` record: held here, so a slower record fails the sentence."""
    import json

    assert "every notebook reruns in well under a\nminute on the reference machine" in PAGE
    record = json.loads((ROOT / "data" / "results" / "timing-class.json").read_text())
    assert record["identity"]["cache_bytes_before"] > 0, "timing_class must be a warm rerun"
    walls = {nb.stem: record["values"][f"{nb.stem}_wall_s"] for nb in NOTEBOOKS}
    assert max(walls.values()) <= 40, walls  # "well under" a minute: two-thirds of one


def test_the_checked_pages_include_it() -> None:
    text = (ROOT / "docs" / "check_decisions.py").read_text(encoding="utf-8")
    assert '"docs" / "teaching.md"' in text


def _titles(path: Path) -> list[str]:
    """The bold titles of a notebook's numbered exercises, in order."""
    import json

    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    text = next("".join(c["source"]) for c in cells if "exercises" in c["metadata"])
    return re.findall(r"^\d+\. \*\*(.+?)\*\*", text, re.MULTILINE)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_each_answer_is_titled_as_the_notebook_titles_its_exercise(path: Path) -> None:
    section = PAGE.split(f"({path.stem[:2]})\n", 1)[1].split("\n### ", 1)[0]
    titles = _titles(path)
    assert len(titles) == len(exercises_of(path))
    assert re.findall(r"^\*\*\d+\. (.+?)\*\* \*Hint:\*", section, re.MULTILINE) == titles


LEVELS = ("introductory", "intermediate", "advanced")


def test_every_notebook_has_a_level_prerequisites_and_topics() -> None:
    glance = PAGE.split("## The notebooks at a glance", 1)[1].split("\n## ", 1)[0]
    rows = [r.split(" | ") for r in re.findall(r"^\| \[(.+?) \|$", glance, re.MULTILINE)]
    stems = [re.search(r"notebooks/(\w+)\.ipynb", r[0])[1] for r in rows]  # type: ignore[index]
    assert stems == [p.stem for p in NOTEBOOKS]
    for stem, (_, level, needs, topics) in zip(stems, rows, strict=True):
        assert level in LEVELS, stem
        assert topics.strip(), stem
        earlier = re.findall(r"\b(0\d)\b", needs)  # a prerequisite comes before the notebook
        assert all(n < stem[:2] for n in earlier), (stem, needs)


def test_the_questions_file_keys_are_documented_where_the_folder_format_is(
    tmp_path: Path,
) -> None:
    """The keys the loader accepts, read from its refusal, are those README and the page list."""
    from hierret import load
    from hierret.datasets import FolderFormatError

    (tmp_path / "a.md").write_text("# A\n\nSome text that a question can quote from.\n")
    line = '{"question": "q?", "relevant": ["a"], "topic": "x"}\n'
    (tmp_path / "questions.jsonl").write_text(line, encoding="utf-8")
    with pytest.raises(FolderFormatError, match="the keys are ") as err:
        load(tmp_path)
    accepted = set(re.findall(r"\w+", str(err.value).split("the keys are ", 1)[1].split(" (")[0]))
    page = (ROOT / "docs" / "own_documents.md").read_text(encoding="utf-8")
    table = {k for row in re.findall(r"^\| (`.+?`) \|", page, re.MULTILINE)
             for k in re.findall(r"`(\w+)`", row)}  # fmt: skip
    assert table == accepted
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    said = readme.split("The keys of a\nline are ", 1)[1].split("Any other key", 1)[0]
    assert set(re.findall(r"`(\w+)`", said)) >= accepted
