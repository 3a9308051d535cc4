"""The views of a hierarchy the structure notebook shows: sizes, tree, straddling, overlap."""

from __future__ import annotations

import matplotlib
import pytest

from hierret.datasets import load_python_reference
from hierret.publish import charts
from hierret.structure.hierarchy import Hierarchy, build_hierarchy
from hierret.structure.units import Corpus, Document
from hierret.study.structure import (
    document_sizes,
    overlapping_pair,
    section_tree,
    side_by_side,
    straddling,
    summary,
)

matplotlib.use("Agg")

PETS = "Cats\n====\n\nCats purr. Cats nap.\n\nDogs\n====\n\nDogs bark.\n"


@pytest.fixture(scope="module")
def reference() -> Hierarchy:
    return build_hierarchy(load_python_reference(), max_chars=900, overlap_chars=180)


def _pets(**kw: object) -> Hierarchy:
    return build_hierarchy(
        Corpus("pets", [Document("d", "Pets", PETS)]), max_chars=30, overlap_chars=10, **kw
    )  # type: ignore[arg-type]


def _straddles_by_definition(h: Hierarchy) -> int:
    """The structure notebook's count before it moved into the package."""
    out = 0
    for p in h.passages:
        touched = [
            s
            for s in h.sections[p.doc_id]
            if min(p.end, s.own_end) - max(p.start, s.start) > 0
            and h.corpus[p.doc_id].text[max(p.start, s.start) : min(p.end, s.own_end)].strip()
        ]
        out += len(touched) > 1
    return out


def test_straddling_counts_what_the_notebook_counted(reference: Hierarchy) -> None:
    assert len(straddling(reference)) == _straddles_by_definition(reference) > 0


def test_packing_within_sections_leaves_no_straddling_passage(reference: Hierarchy) -> None:
    within = build_hierarchy(
        reference.corpus, max_chars=900, overlap_chars=180, pack_within_sections=True
    )
    assert straddling(within) == []
    assert straddling(_pets(pack_within_sections=True)) == []


def test_summary_counts_the_hierarchy(reference: Hierarchy) -> None:
    got = summary(reference)
    sections = [s for secs in reference.sections.values() for s in secs]
    assert got["n_documents"] == len(reference.corpus)
    assert got["n_chars"] == sum(len(d.text) for d in reference.corpus)
    assert got["n_sections"] == len(sections) == len(reference.units("sections"))
    assert got["max_depth"] == max(s.depth for s in sections)
    assert got["n_passages"] == len(reference.passages)
    lengths = [p.end - p.start for p in reference.passages]
    assert got["mean_passage_chars"] == pytest.approx(sum(lengths) / len(lengths), abs=1e-12)


def test_summary_of_an_empty_hierarchy() -> None:
    h = build_hierarchy(Corpus("none", []))
    assert summary(h) == {
        "n_documents": 0,
        "n_chars": 0,
        "n_sections": 0,
        "max_depth": 0,
        "n_passages": 0,
        "mean_passage_chars": 0.0,
    }


def test_document_sizes_add_up_and_run_longest_first(reference: Hierarchy) -> None:
    table = document_sizes(reference)
    assert list(table.columns) == ["characters", "sections", "passages"]
    assert table.index.name == "document"
    assert table["characters"].is_monotonic_decreasing
    assert sorted(table.index) == sorted(d.id for d in reference.corpus)
    assert table["passages"].sum() == len(reference.passages)
    assert table["sections"].sum() == len(reference.units("sections"))


def test_section_tree_has_one_line_per_section_indented_by_depth(reference: Hierarchy) -> None:
    lines = section_tree(reference, "try").splitlines()
    sections = reference.sections["try"]
    assert len(lines) == len(sections)
    for line, s in zip(lines, sections, strict=True):
        assert line.startswith("    " * (s.depth - 1) + s.title)
        assert f"[{s.id}, chars {s.start}–{s.own_end}, " in line
    counted = sum(int(line.rsplit(", ", 1)[1].split()[0]) for line in lines)
    assert counted == sum(p.doc_id == "try" for p in reference.passages)


def test_unknown_document_is_named() -> None:
    with pytest.raises(KeyError, match="no document 'cats'"):
        section_tree(_pets(), "cats")
    with pytest.raises(ValueError, match="no passages"):
        overlapping_pair(build_hierarchy(Corpus("t", [Document("e", "E", "")])), "e")


def test_overlapping_pair_is_consecutive_and_overlaps(reference: Hierarchy) -> None:
    a, b = overlapping_pair(reference, "try")
    ids = [p.id for p in reference.passages]
    assert ids.index(b.id) == ids.index(a.id) + 1
    assert b.start < a.end


def test_overlapping_pair_falls_back_to_the_first_passages() -> None:
    h = build_hierarchy(Corpus("t", [Document("d", "D", "One. Two. Three.")]), 10, 0)
    a, b = overlapping_pair(h, "d")
    assert (a.id, b.id) == ("d#p0", "d#p1")
    one = build_hierarchy(Corpus("t", [Document("d", "D", "One.")]), 10, 0)
    assert overlapping_pair(one, "d") == (one.passages[0], one.passages[0])


def test_side_by_side_marks_the_shared_text_and_escapes_html() -> None:
    text = "Use <b> tags. Then <i> tags. And more."
    h = build_hierarchy(Corpus("t", [Document("d", "D", text)]), 28, 15)
    a, b = overlapping_pair(h, "d")
    page = side_by_side(h, a, b)
    shared = text[b.start : a.end]
    assert page.count(f"<mark>{shared.replace('<', '&lt;').replace('>', '&gt;')}</mark>") == 2
    assert "<b> tags" not in page
    assert f"{a.end - b.start} characters" in page


def test_length_histogram_labels_its_axes_and_limit() -> None:
    ax = charts.length_histogram(
        [100, 200, 950], 900, unit="characters", limit_name="max_chars", title="three passages"
    )
    assert ax.get_xlabel() == "passage length (characters)"
    assert ax.get_ylabel() == "passages"
    assert ax.get_title() == "three passages"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["max_chars = 900 characters"]


def test_the_structure_object_is_the_views_of_its_hierarchy(reference: Hierarchy) -> None:
    from hierret.study import Structure

    s = Structure(reference)
    assert s.values() == summary(reference)
    assert s.table().equals(document_sizes(reference))
    assert s.table(3).equals(document_sizes(reference).head(3))
    assert s.longest == document_sizes(reference).index[0]
    assert s.tree(s.longest) == section_tree(reference, s.longest)
    assert [p.id for p in s.straddling()] == [p.id for p in straddling(reference)]
    assert s.overlap(s.longest) == side_by_side(reference, *overlapping_pair(reference, s.longest))
    fig = s.plot([1, 2, 3], 2, unit="characters", limit_name="max_chars")
    assert fig.axes[0].get_xlabel() == "passage length (characters)"
