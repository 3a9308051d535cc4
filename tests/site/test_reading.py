"""The site's reading aids (docs/reading.py): short test names, verdict classes, the home
page's results table and the figure gallery, read from files like the build's own."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from _scripts import load

ROOT = Path(__file__).resolve().parents[2]
reading = load(ROOT / "docs" / "reading.py", "reading")

PNG = base64.b64decode(  # a 1x1 transparent PNG
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)


def test_short_keys_drop_the_record_and_break_only_at_underscores() -> None:
    key = "dr004.test_pyref_900_rawspan_section_section_centroid_section_section"
    short = reading.short_key(key)
    assert short.replace("\u200b", "") == "pyref_900_rawspan_section_centroid_section"
    assert all(part.endswith("_") for part in short.split("\u200b")[:-1])
    assert reading.short_key("dr001.hit1_sec") == "hit1_\u200bsec"


@pytest.mark.parametrize(
    ("verdict", "css"),
    [
        ("holds", "hr-verdict-holds"),
        ("holds (robust: Wilcoxon 0.0021; one corpus)", "hr-verdict-holds"),
        ("holds (fragile: Wilcoxon 0.066; across 3 corpora 0.12)", "hr-verdict-holds-fragile"),
        ("not established (could detect ≥ 0.08)", "hr-verdict-not-established"),
        ("non-inferior (margin 0.02)", "hr-verdict-non-inferior"),
        ("inconclusive (margin 0.02)", "hr-verdict-inconclusive"),
        ("contradicted", "hr-verdict-contradicted"),
    ],
)
def test_every_verdict_has_its_class_and_colour(verdict: str, css: str) -> None:
    assert reading.verdict_class(verdict) == css
    assert f"td.{css} p" in (ROOT / "docs" / "_static" / "hierret.css").read_text("utf-8")


def test_the_home_page_table_links_into_the_records_page() -> None:
    text = (ROOT / "DECISIONS.md").read_text(encoding="utf-8")
    page = reading.results_page(text)
    assert page.count("\n| [DR-00") == 5
    assert "](decisions.md#dr-001--" in page
    assert "](#" not in page
    assert "<!-- results table -->" not in page


def _notebook(folder: Path, cells: list[dict[str, object]]) -> Path:
    path = folder / "notebooks" / "09_toy.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4}), "utf-8")
    return path


def _figure_cell(meta: dict[str, object]) -> dict[str, object]:
    png = base64.b64encode(PNG).decode()
    return {"cell_type": "code", "source": ["save(fig)"], "metadata": meta,
            "outputs": [{"output_type": "display_data", "data": {"image/png": png}}]}  # fmt: skip


def test_the_gallery_captions_each_figure_and_links_its_section(tmp_path: Path) -> None:
    meta = {"mystnb": {"image": {"alt": "Bars of hit@1."}, "figure": {"caption": "Hit@1."}}}
    _notebook(
        tmp_path,
        [
            {"cell_type": "markdown", "source": ["# A toy notebook\n\n## 1 · The `first` part"]},
            _figure_cell(meta),
            {"cell_type": "markdown", "source": ["## 1 · The `first` part"]},
            _figure_cell({}),
        ],
    )
    (tmp_path / "notebooks" / "figures").mkdir()
    (tmp_path / "notebooks" / "figures" / "toy.png").write_bytes(PNG)
    page = reading.gallery_page(tmp_path)
    assert "## A toy notebook" in page
    assert "```{figure} notebooks/figures/toy.png\n:alt: Bars of hit@1.\n" in page
    assert "Hit@1. Drawn in [1 · The first part](notebooks/09_toy.ipynb#1--the-first-part)." in page
    # a figure with no metadata still gets words, never a file name or a digest,
    # and a repeated heading's anchor is numbered as MyST numbers it
    assert ":alt: A figure of the section 1 · The first part." in page
    assert "(notebooks/09_toy.ipynb#1--the-first-part-1)" in page


def test_heading_anchors_are_myst_s() -> None:
    slugs = pytest.importorskip("myst_parser.slugs")
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        for _, text, slug in reading._heading_slugs(cells):
            assert slug.startswith(slugs.github_slugify(text)), (path.name, text)


def test_a_citation_of_another_records_row_links_to_that_row() -> None:
    from docutils import nodes

    doc = nodes.document(None, None)  # type: ignore[arg-type]
    section = nodes.section()
    section += nodes.title(text="DR-003 · No reranker by default")
    para = nodes.paragraph()
    para += nodes.Text("MaxSim holds [C1]; the hybrid's lead is not established [DR-001 C4].")
    section += para
    doc += section
    reading._citations(doc)
    links = {r.astext(): r["refuri"] for r in doc.findall(nodes.reference)}
    assert links == {"C1": "#dr003-c1", "DR-001 C4": "#dr001-c4"}
