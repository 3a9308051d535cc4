"""The document hierarchy: heading detection, nesting, assignment, invariants."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hierret.datasets import load_python_reference
from hierret.structure.chunking import chunk_text
from hierret.structure.hierarchy import build_hierarchy, detect_headings
from hierret.structure.units import Corpus, Document


def one(text: str, **kw: object) -> Corpus:
    return Corpus("t", [Document("d", "Doc", text)])


def test_rst_levels_follow_first_appearance() -> None:
    text = "Top\n***\n\nIntro.\n\nA\n===\n\ntext a.\n\nA1\n---\n\ndeep.\n\nB\n===\n\ntext b.\n"
    h = build_hierarchy(one(text), max_chars=60, overlap_chars=10)
    got = [(s.id, s.depth, s.title, s.parent) for s in h.sections["d"]]
    assert got == [
        ("d#s1", 1, "Top", None),
        ("d#s1.1", 2, "A", "d#s1"),
        ("d#s1.1.1", 3, "A1", "d#s1.1"),
        ("d#s1.2", 2, "B", "d#s1"),
    ]
    a = h.sections["d"][1]
    assert text[a.start : a.end].startswith("A\n=")
    assert text[a.end :].startswith("B\n=")
    assert text[a.start : a.own_end].rstrip().endswith("text a.")


def test_markdown_and_numbered_headings() -> None:
    md = "# Title\n\nx.\n\n## Sub\n\ny.\n\n### Deeper\n\nz.\n\n## Sub2\n\nw.\n"
    assert [(h.level, h.title) for h in detect_headings(md)] == [
        (1, "Title"),
        (2, "Sub"),
        (3, "Deeper"),
        (2, "Sub2"),
    ]
    num = "Paper\n\n1 Introduction\n\nText.\n\n3.2 Results\n\nMore.\n\n2. The suite is run.\n"
    assert [(h.level, h.title) for h in detect_headings(num)] == [
        (1, "1 Introduction"),
        (2, "3.2 Results"),
    ]


def test_no_headings_gives_one_section() -> None:
    h = build_hierarchy(one("Just text. No headings at all."))
    assert [(s.id, s.start, s.own_end, s.title) for s in h.sections["d"]] == [
        ("d#s1", 0, 30, "Doc")
    ]


def test_preamble_before_first_heading() -> None:
    h = build_hierarchy(one("Loose words first.\n\nHead\n====\n\nBody text.\n"))
    assert [s.id for s in h.sections["d"]] == ["d#s0", "d#s1"]


def test_empty_and_whitespace_documents() -> None:
    c = Corpus(
        "t", [Document("e", "", ""), Document("w", "", " \r\n\t "), Document("x", "X", "Text.")]
    )
    h = build_hierarchy(c)
    assert [p.doc_id for p in h.passages] == ["x"]
    assert {d: len(s) for d, s in h.sections.items()} == {"e": 1, "w": 1, "x": 1}


def test_non_str_text_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="text must be str"):
        Document("d", "t", None)  # type: ignore[arg-type]


def test_passages_identical_with_or_without_sections() -> None:
    text = "Top\n***\n\n" + "Alpha beta gamma. " * 30 + "\n\nSub\n===\n\n" + "Delta epsilon. " * 30
    h = build_hierarchy(one(text), max_chars=200, overlap_chars=40)
    assert [(p.start, p.end) for p in h.passages] == chunk_text(text, 200, 40)
    straddling = [p for p in h.passages if p.start < h.sections["d"][1].start < p.end]
    assert straddling, "this text is built so that one passage straddles the heading"
    inside = build_hierarchy(one(text), max_chars=200, overlap_chars=40, pack_within_sections=True)
    for p in inside.passages:
        sec = next(s for s in inside.sections["d"] if s.id == p.parent)
        assert sec.start <= p.start
        assert p.end <= sec.own_end


def test_python_reference_structure() -> None:
    corpus = load_python_reference()
    assert len(corpus) == 79
    assert 400_000 < corpus.n_chars < 550_000
    h = build_hierarchy(corpus)
    depths = {s.depth for secs in h.sections.values() for s in secs}
    assert depths == {1, 2, 3, 4}
    compound = [s.title for s in h.sections["compound"]]
    assert 'The "try" statement' in compound
    assert 'The "with" statement' in compound
    ids = [u.id for lvl in ("documents", "sections", "passages") for u in h.units(lvl)]
    assert len(ids) == len(set(ids)), "unit ids must be unique"
    assert h.parents("passages", "sections")["try#p0"] == "try#s1"
    assert build_hierarchy(corpus).passages == h.passages  # stable ids and spans


_blocks = st.sampled_from(
    [
        "Head\n====\n\n",
        "Sub\n---\n\n",
        "Top\n***\n\n",
        "# MD\n\n",
        "## MD2\n\n",
        "2.1 Results\n\n",
        "Plain sentence here. ",
        "Another one, e.g. this. ",
        "Σ and 文本 text. ",
        "\r\n\r\n",
        "word " * 30,
    ]
)


@settings(max_examples=100, deadline=None)
@given(parts=st.lists(_blocks, max_size=25), max_chars=st.integers(30, 200), within=st.booleans())
def test_hierarchy_invariants(parts: list[str], max_chars: int, within: bool) -> None:
    text = "".join(parts)
    overlap = max_chars // 5
    h = build_hierarchy(one(text), max_chars, overlap, pack_within_sections=within)
    secs = h.sections["d"]
    # own spans partition the text from the first section on, in order
    assert secs[0].start == 0 or not text[: secs[0].start].strip()
    for a, b in itertools.pairwise(secs):
        assert a.own_end == b.start
    assert secs[-1].own_end == len(text)
    for s in secs:
        assert s.start <= s.own_end <= s.end
    by_id = {s.id: s for s in secs}
    for p in h.passages:
        sec = by_id[p.parent or ""]
        assert min(p.end, sec.own_end) > max(p.start, sec.start), "assigned section overlaps"
        if not within:
            best = max(min(p.end, s.own_end) - max(p.start, s.start) for s in secs)
            assert min(p.end, sec.own_end) - max(p.start, sec.start) == best
    covered = set()
    for p in h.passages:
        covered.update(range(p.start, p.end))
    assert all(i in covered or c.isspace() for i, c in enumerate(text))


def test_heading_styles_can_be_restricted() -> None:
    text = "# Paper\n\n## Intro\n\nText.\n\n5 Public House Las Vegas\n\nMore.\n"
    titles = [h.title for h in detect_headings(text)]
    assert titles == ["Paper", "Intro", "5 Public House Las Vegas"]
    assert [h.title for h in detect_headings(text, ("markdown",))] == ["Paper", "Intro"]
    with pytest.raises(ValueError, match="unknown heading styles"):
        detect_headings(text, ("latex",))


def _brute_ends(headings: list, length: int) -> list[int]:
    return [
        next((g.start for g in headings[n + 1 :] if g.level <= h.level), length)
        for n, h in enumerate(headings)
    ]


@pytest.mark.parametrize("seed", range(20))
def test_section_ends_and_passage_owners_equal_the_quadratic_rule(seed: int) -> None:
    """The linear steps give what the old all-pairs ones gave, on random outlines."""
    import random

    import hierret.structure.hierarchy as hmod

    rng = random.Random(seed)
    parts = ["Preamble text here.\n\n"] if rng.random() < 0.5 else []
    for i in range(rng.randint(1, 40)):
        parts.append("#" * rng.randint(1, 4) + f" H{i}\n\n")
        parts.append(("word " * rng.randint(0, 120)).strip() + "\n\n")
    text = "".join(parts)
    heads = hmod.detect_headings(text, ("markdown",))
    assert hmod._section_ends(heads, len(text)) == _brute_ends(heads, len(text))
    doc = Document("d", "D", text)
    secs = hmod._sections_of(doc, ("markdown",))
    assign = hmod._Assigner(secs)
    for max_chars, overlap in ((60, 0), (200, 50), (900, 150)):
        for span in hmod.chunk_text(text, max_chars, overlap):
            assert assign(span) is hmod._assign(span, secs)


def test_building_the_hierarchy_examines_sections_linearly(monkeypatch: pytest.MonkeyPatch) -> None:
    """Sections examined per passage stay bounded as the document grows (no wall clock):
    a document 4x as long is examined about 4x as much, not 16x."""
    import hierret.structure.hierarchy as hmod

    real, seen = hmod._assign, [0]

    def counting(span: tuple[int, int], sections: list) -> object:
        seen[0] += len(sections)
        return real(span, sections)

    monkeypatch.setattr(hmod, "_assign", counting)

    def examined(n_sections: int) -> int:
        seen[0] = 0
        text = "".join(
            f"## Part {i}\n\n" + "Some words of text. " * 40 + "\n\n" for i in range(n_sections)
        )
        build_hierarchy(Corpus("c", [Document("d", "D", text)]), 300, 0)
        return seen[0]

    small, large = examined(50), examined(200)
    assert large / small < 5  # quadratic would be ~16
