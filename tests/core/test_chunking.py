"""The chunker: sentence splitting, packing, invariants and bad input."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hierret.structure.chunking import (
    DEFAULT_ABBREVIATIONS,
    chunk_text,
    pack_sentences,
    split_sentences,
)


def sentences_of(text: str) -> list[str]:
    return [text[a:b] for a, b in split_sentences(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("See e.g. this. And i.e. that.", ["See e.g. this.", "And i.e. that."]),
        ("Dr. Who met Mr. Bean. Fine.", ["Dr. Who met Mr. Bean.", "Fine."]),
        ("As Fig. 3 shows, x grows. Next.", ["As Fig. 3 shows, x grows.", "Next."]),
        ("Apples, pears, etc. are fruit. Yes.", ["Apples, pears, etc. are fruit.", "Yes."]),
        ("Cats vs. dogs is old. Sure.", ["Cats vs. dogs is old.", "Sure."]),
        ("J. R. R. Tolkien wrote it. Then more.", ["J. R. R. Tolkien wrote it.", "Then more."]),
        ("Pi is 3.14159 roughly. Ok.", ["Pi is 3.14159 roughly.", "Ok."]),
        ("Wait... it moved. Then it stopped.", ["Wait... it moved.", "Then it stopped."]),
        ("See Section 3.2. for details. Done.", ["See Section 3.2. for details.", "Done."]),
        (
            "1. Introduction of things\nand more. End.",
            ["1. Introduction of things\nand more.", "End."],
        ),
        ('He said "stop." Then left!', ['He said "stop."', "Then left!"]),
        ("Really? Yes! No.", ["Really?", "Yes!", "No."]),
        (
            "a heading\n\nparagraph without stop\n\nlast",
            ["a heading", "paragraph without stop", "last"],
        ),
    ],
)
def test_sentence_splitter(text: str, expected: list[str]) -> None:
    assert sentences_of(text) == expected


def test_abbreviations_are_extendable() -> None:
    text = "Das ist z.B. gut. Ende."
    assert len(split_sentences(text)) == 3
    assert sentences_of(text) != ["Das ist z.B. gut.", "Ende."]
    assert split_sentences(text, DEFAULT_ABBREVIATIONS | {"z.b."}) == [(0, 17), (18, 23)]


def test_crlf_tabs_and_unicode() -> None:
    text = "Σίσυφος rolled it.\r\n\r\nThe e\u0301tude ends.\tCJK 文本。 Done. 日本語のテキスト."
    spans = split_sentences(text)
    assert sentences_of(text)[0] == "Σίσυφος rolled it."
    assert all(not text[a].isspace() and not text[b - 1].isspace() for a, b in spans)
    passages = chunk_text(text, max_chars=30, overlap_chars=10)
    _check_invariants(text, passages, 30, 10)


def test_empty_and_whitespace() -> None:
    assert chunk_text("") == []
    assert chunk_text(" \n\t\r\n ") == []
    assert split_sentences("   ") == []


def test_no_punctuation_and_long_sentence_split_at_whitespace() -> None:
    text = " ".join(["word"] * 500)  # 2,499 chars, no sentence ends
    passages = chunk_text(text, max_chars=100, overlap_chars=20)
    assert all(b - a <= 100 for a, b in passages)
    _check_invariants(text, passages, 100, 20)


def test_long_token_is_cut_at_max_chars() -> None:
    token = "x" * 250
    text = f"Short start. {token} tail words here."
    passages = chunk_text(text, max_chars=100, overlap_chars=20)
    assert [text[a:b] for a, b in passages][1:4] == [
        "x" * 100,
        "x" * 100,
        "x" * 50 + " tail words here.",
    ]
    _check_invariants(text, passages, 100, 20)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("第一句。第二句！第三句？", ["第一句。", "第二句！", "第三句？"]),
        ("「引用。」次の文。", ["「引用。」", "次の文。"]),
        ("円周率は３．１４です．次．", ["円周率は３．１４です．", "次．"]),
        ("यह वाक्य है। दूसरा॥ तीसरा", ["यह वाक्य है।", "दूसरा॥", "तीसरा"]),
        ("هل هذا سؤال؟ نعم۔ ok", ["هل هذا سؤال؟", "نعم۔", "ok"]),
        ("one\r\ntwo\r\n\r\nthree", ["one\r\ntwo", "three"]),
        ("one\rtwo\r\rthree", ["one\rtwo", "three"]),
        ("one\u2028two\u2028\u2028three\x85\x85four", ["one\u2028two", "three", "four"]),
        ("a paragraph\u2029another", ["a paragraph", "another"]),
        ("See\r1. Intro. End.", ["See\r1. Intro.", "End."]),
    ],
)
def test_other_scripts_and_line_breaks(text: str, expected: list[str]) -> None:
    assert sentences_of(text) == expected


@pytest.mark.parametrize("stop", ["", "。"])
def test_cjk_without_spaces(stop: str) -> None:
    sentence = "检索长文档中的结构化信息需要可靠的分块方法" * 3 + stop  # 60 or 61 characters
    text = (sentence * (105_000 // len(sentence) + 1))[:105_000]
    passages = chunk_text(text)
    assert max(b - a for a, b in passages) <= 900
    assert len(passages) >= 105_000 // 900
    _check_invariants(text, passages, 900, 180)


@pytest.mark.parametrize("line", ["word " * 40_000, "x" * 200_000, "e.g. " * 40_000])
def test_long_line_without_stops(line: str) -> None:
    passages = chunk_text(line, max_chars=500, overlap_chars=100)
    assert max(b - a for a, b in passages) <= 500
    assert passages[0][0] == 0
    assert passages[-1][1] == len(line.rstrip())


def test_hard_cut_keeps_combining_marks_with_their_base() -> None:
    text = "e\u0301" * 30  # é as e + COMBINING ACUTE ACCENT, no spaces
    passages = chunk_text(text, max_chars=25, overlap_chars=5)
    assert all(b - a <= 25 and text[a] == "e" for a, b in passages)
    _check_invariants(text, passages, 25, 5)


def test_overlap_is_trailing_whole_sentences() -> None:
    text = "Aaaa aaaa. Bbbb bbbb. Cccc cccc. Dddd dddd. Eeee eeee."
    passages = chunk_text(text, max_chars=32, overlap_chars=11)
    assert passages == [(0, 32), (22, 54)]
    assert text[22:32] == "Cccc cccc."


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"max_chars": 150, "overlap_chars": 200},
            r"overlap_chars \(200\) must be smaller than max_chars \(150\)",
        ),
        ({"max_chars": 100, "overlap_chars": 100}, r"overlap_chars \(100\) must be smaller"),
        ({"max_chars": 0, "overlap_chars": 0}, r"max_chars \(0\) must be positive"),
        ({"max_chars": 10, "overlap_chars": -1}, r"overlap_chars \(-1\)"),
    ],
)
def test_bad_sizes(kwargs: dict[str, int], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        chunk_text("Some text.", **kwargs)


def test_bad_types() -> None:
    with pytest.raises(TypeError, match="text must be str, got bytes"):
        chunk_text(b"bytes")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="max_chars must be int"):
        chunk_text("x", max_chars=9.5)  # type: ignore[arg-type]


def _check_invariants(
    text: str, passages: list[tuple[int, int]], max_chars: int, overlap_chars: int
) -> None:
    covered = [False] * len(text)
    for a, b in passages:
        assert 0 <= a < b <= len(text)
        assert not text[a].isspace()
        assert not text[b - 1].isspace()
        assert b - a <= max_chars
        for i in range(a, b):
            covered[i] = True
    assert all(covered[i] or c.isspace() for i, c in enumerate(text)), "lost characters"
    sentence_starts = {a for a, _ in split_sentences(text)}
    sentence_ends = {b for _, b in split_sentences(text)}
    for (a1, b1), (a2, b2) in itertools.pairwise(passages):
        assert a1 < a2, "passages must move forward"
        assert b1 < b2, "passages must move forward"
        if a2 < b1:  # overlapping: at most overlap_chars, made of whole sentences
            assert b1 - a2 <= overlap_chars
            assert a2 in sentence_starts
            assert b1 in sentence_ends


_words = st.sampled_from(
    [
        "alpha",
        "beta",
        "e.g.",
        "Dr.",
        "3.14",
        "x",
        "Σ",
        "日本",
        "end.",
        "stop!",
        "why?",
        "...",
        "J.",
        "e\u0301",
        "Fig.",
        "vs.",
        "etc.",
        "§2.",
        "a" * 40,
    ]
)
_seps = st.sampled_from([" ", " ", " ", "\n", "\n\n", "\t", "\r\n", "  "])


@st.composite
def texts(draw: st.DrawFn) -> str:
    words = draw(st.lists(st.tuples(_words, _seps), max_size=120))
    return "".join(w + s for w, s in words)


@settings(max_examples=150, deadline=None)
@given(text=texts(), max_chars=st.integers(20, 300), frac=st.floats(0, 0.9))
def test_chunk_invariants(text: str, max_chars: int, frac: float) -> None:
    overlap = int(max_chars * frac)
    passages = chunk_text(text, max_chars, overlap)
    _check_invariants(text, passages, max_chars, overlap)
    assert chunk_text(text, max_chars, overlap) == passages  # deterministic
    for a, b in passages:  # re-chunking a passage's text gives that passage back
        assert chunk_text(text[a:b], max_chars, overlap) == [(0, b - a)]


@settings(max_examples=50, deadline=None)
@given(text=st.text(max_size=400), max_chars=st.integers(5, 80))
def test_arbitrary_unicode_never_loses_text(text: str, max_chars: int) -> None:
    overlap = max_chars // 5
    passages = pack_sentences(text, split_sentences(text), max_chars, overlap)
    _check_invariants(text, passages, max_chars, overlap)


_LINE_BREAKS = ["\n", "\r\n", "\r", "\u2028", "\u2029", "\x85"]
_STOPS = [
    "",
    "",
    "",
    ".",
    "!",
    "?",
    "...",
    "。",
    "！",
    "？",
    "．",
    "।",
    "॥",
    "؟",
    "۔",
    ".»",
    "。」",
]
_any_script_word = st.text(
    st.characters(categories=["L", "M", "N", "P", "S"]), min_size=1, max_size=12
)
_cjk_run = st.text(
    st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF), min_size=1, max_size=300
)


@st.composite
def any_script_texts(draw: st.DrawFn) -> str:
    """Words of any script or CJK runs, mixed stops, one line-break convention."""
    brk = draw(st.sampled_from(_LINE_BREAKS))
    seps = st.sampled_from([" ", " ", "", "\t", "\u3000", brk, brk + brk, " " + brk + " "])
    parts = []
    for _ in range(draw(st.integers(0, 60))):
        word = draw(st.one_of(_any_script_word, _cjk_run))
        parts.append(word + draw(st.sampled_from(_STOPS)) + draw(seps))
    return "".join(parts)


@settings(max_examples=150, deadline=None)
@given(text=any_script_texts(), max_chars=st.integers(5, 300), frac=st.floats(0, 0.9))
def test_any_script_any_line_breaks(text: str, max_chars: int, frac: float) -> None:
    overlap = int(max_chars * frac)
    passages = chunk_text(text, max_chars, overlap)
    _check_invariants(text, passages, max_chars, overlap)


@settings(max_examples=100, deadline=None)
@given(
    text=texts(),
    max_chars=st.integers(20, 300),
    brk=st.sampled_from(["\r", "\u2028", "\x85", "\v", "\f"]),
)
def test_every_line_break_splits_like_newline(text: str, max_chars: int, brk: str) -> None:
    text = text.replace("\r\n", "\n")  # one character per break, so spans can match
    assert chunk_text(text.replace("\n", brk), max_chars, max_chars // 5) == chunk_text(
        text, max_chars, max_chars // 5
    )


def test_cr_only_text_splits_like_newline_text() -> None:
    text = "Title\n\n1. First point. More.\nSecond line e.g. here\n\n\nLast paragraph."
    cr = text.replace("\n", "\r")
    assert split_sentences(cr) == split_sentences(text)
    assert len(split_sentences(text)) == 5
    assert chunk_text(cr, 30, 10) == chunk_text(text, 30, 10)
