"""Text that cannot be encoded (a lone surrogate) is refused where it enters the package.

A lone surrogate (U+D800 to U+DFFF) loads from JSON (``"\\ud800"``) or from a
file name that is not UTF-8, and then makes every encoder fail, naming no
document. Each loader refuses it with the file, line or field and position;
:class:`~hierret.structure.units.Document`, :class:`~hierret.structure.units.Query` and the
encoders' input check refuse it too, for text built in Python. The reference
for what cannot be encoded is Python's own UTF-8 codec.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hierret._validate import check_query_texts, check_texts, find_lone_surrogate
from hierret.cli import main
from hierret.datasets import (
    BeirFormatError,
    FolderFormatError,
    QasperFormatError,
    load,
    load_beir,
    load_folder,
    load_qasper,
)
from hierret.encoders import HashEncoder
from hierret.structure.units import Document, Query

SURROGATES = ["\ud800", "\udbff", "\udc00", "\udfff", "\udce9"]


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _first_surrogate(text: str) -> int:
    return next(i for i, c in enumerate(text) if 0xD800 <= ord(c) <= 0xDFFF)


# -- the units every loader passes through ---------------------------------------------


@settings(max_examples=200, deadline=None)
@given(
    st.text(max_size=40),
    st.lists(st.tuples(st.integers(0, 40), st.sampled_from(SURROGATES)), max_size=2),
)
def test_document_refuses_exactly_what_utf8_cannot_encode(
    text: str, inserts: list[tuple[int, str]]
) -> None:
    for pos, s in inserts:
        text = text[:pos] + s + text[pos:]
    if _encodes(text):
        assert Document("d", "t", text).text == text
        assert Query("q", text or "?", ()).text == (text or "?")
        return
    with pytest.raises(ValueError, match="not valid Unicode") as info:
        Document("d", "t", text)
    assert f"at character {_first_surrogate(text)} " in str(info.value)
    assert "document 'd': text" in str(info.value)


@pytest.mark.parametrize(
    ("make", "where"),
    [
        (lambda: Document("d\udc80", "T", "ok"), "document 'd\\udc80': id"),
        (lambda: Document("d", "T \ud83d", "ok"), "document 'd': title"),
        (lambda: Document("d", "T", "a \ude00 b"), "document 'd': text"),
        (lambda: Query("q1", "why \ud800?", ()), "question 'q1': text"),
        (lambda: Query("q\udfff", "why?", ()), "question 'q\\udfff': id"),
    ],
)
def test_units_name_the_owner_and_the_field(make: object, where: str) -> None:
    with pytest.raises(ValueError, match="lone surrogate") as info:
        make()  # type: ignore[operator]
    assert str(info.value).startswith(where)


def test_a_complete_pair_and_other_unicode_are_kept() -> None:
    text = "Café — naïve 猫 😀 \U0001f600 \u200d \ufeff"
    assert Document("d", text, text).text == text
    assert check_texts([text]) == [text]


def test_encoders_refuse_it_naming_the_text() -> None:
    with pytest.raises(ValueError, match=r"texts\[1\] \(of 2\) is not valid Unicode"):
        HashEncoder().encode_passages(["fine", "bad \ud800"])
    with pytest.raises(ValueError, match="query 'q2' is not valid Unicode"):
        check_query_texts(["fine", "bad \ud800"], ids=["q1", "q2"])


def test_find_lone_surrogate_walks_keys_lists_and_values() -> None:
    assert find_lone_surrogate({"a": [{"b": "x"}, {"c": ["y", "z\udc00"]}]}) == (
        "a[1].c[1]",
        "z\udc00",
        1,
    )
    assert find_lone_surrogate({"k\ud800": 1}) == ("key 'k\\ud800'", "k\ud800", 1)
    assert find_lone_surrogate({"ok": ["\U0001f600", 1, None]}) is None


# -- the loaders: file, line or field, and position ------------------------------------


def _beir(root: Path, corpus: str, queries: str = '{"_id": "q1", "text": "Who purrs?"}\n') -> Path:
    (root / "qrels").mkdir(parents=True)
    (root / "corpus.jsonl").write_text(corpus)
    (root / "queries.jsonl").write_text(queries)
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    return root


GOOD_DOC = '{"_id": "d1", "title": "Cats", "text": "Cats purr."}\n'


def _line(**fields: str) -> str:
    """One JSON line, written by hand so that ``\\udXXX`` escapes stay as typed."""
    return "{" + ", ".join(f'"{k}": "{v}"' for k, v in fields.items()) + "}\n"


@pytest.mark.parametrize(
    ("corpus", "queries", "where"),
    [
        (
            GOOD_DOC + _line(_id="d2", text="Dogs \\ud800 bark."),
            None,
            "corpus.jsonl:2: field 'text'",
        ),
        (
            GOOD_DOC + _line(_id="d2", title="\\udfff", text="x"),
            None,
            "corpus.jsonl:2: field 'title'",
        ),
        (GOOD_DOC + _line(_id="d\\uDC00", text="x"), None, "corpus.jsonl:2: field '_id'"),
        (GOOD_DOC, _line(_id="q1", text="Who \\ud83d purrs?"), "queries.jsonl:1: field 'text'"),
    ],
)
def test_beir_names_file_line_field_and_position(
    tmp_path: Path, corpus: str, queries: str | None, where: str
) -> None:
    root = _beir(tmp_path / "b", corpus, *([queries] if queries else []))
    with pytest.raises(BeirFormatError, match="lone surrogate") as info:
        load_beir(root)
    assert where in str(info.value)
    assert "at character" in str(info.value)


def test_beir_keeps_complete_escape_pairs(tmp_path: Path) -> None:
    corpus = GOOD_DOC + '{"_id": "d2", "title": "Smile \\ud83d\\ude00", "text": "x"}\n'
    ds = load_beir(_beir(tmp_path / "b", corpus))
    assert ds.corpus["d2"].title == "Smile \U0001f600"


def _paper(**changes: object) -> dict[str, object]:
    paper: dict[str, object] = {
        "title": "T",
        "abstract": "We study x.",
        "figures_and_tables": [],
        "full_text": [{"section_name": "Intro", "paragraphs": ["X is y.", "More text."]}],
        "qas": [
            {
                "question": "What is x?",
                "question_id": "q1",
                "answers": [{"answer": {"unanswerable": False, "evidence": ["X is y."]}}],
            }
        ],
    }
    return paper | changes


@pytest.mark.parametrize(
    ("papers", "where"),
    [
        (
            {"p1": _paper(full_text=[{"section_name": "I", "paragraphs": ["ok", "bad \udc00"]}])},
            "paper 'p1': field 'full_text[0].paragraphs[1]'",
        ),
        ({"p1": _paper(title="Title \ud800")}, "paper 'p1': field 'title'"),
        (
            {"p1": _paper(qas=[{"question": "Why \udbff?", "question_id": "q1", "answers": []}])},
            "paper 'p1': field 'qas[0].question'",
        ),
        ({"p\udfff": _paper()}, "paper 'p\\udfff': field 'paper id'"),
    ],
)
def test_qasper_names_paper_and_field(
    tmp_path: Path, papers: dict[str, object], where: str
) -> None:
    path = tmp_path / "q.json"
    path.write_text(json.dumps(papers))  # ensure_ascii: each surrogate becomes "\\udXXX"
    with pytest.raises(QasperFormatError, match="lone surrogate") as info:
        load_qasper(path)
    assert str(info.value).startswith(f"{path}: {where}")


QUOTE = "Logs are written to the var/log folder of the install."


def _folder(root: Path, question: str) -> Path:
    root.mkdir()
    (root / "setup.md").write_text(f"# Setup\n\n{QUOTE}\n")
    (root / "questions.jsonl").write_text(question + "\n")
    return root


@pytest.mark.parametrize(
    ("line", "where"),
    [
        (f'{{"question": "Where \\udc00?", "evidence": ["{QUOTE}"]}}', "'question'"),
        (f'{{"question": "Where?", "evidence": ["{QUOTE} \\ud800"]}}', "'evidence[0]'"),
        (f'{{"id": "q\\ud800", "question": "Where?", "evidence": ["{QUOTE}"]}}', "'id'"),
    ],
)
def test_folder_questions_name_line_and_key(tmp_path: Path, line: str, where: str) -> None:
    root = _folder(tmp_path / "f", line)
    with pytest.raises(FolderFormatError, match="lone surrogate") as info:
        load_folder(root)
    assert str(info.value).startswith(f"{root / 'questions.jsonl'}:1: {where} is not valid")


@pytest.mark.skipif(sys.platform == "darwin", reason="macOS file systems refuse such names")
def test_folder_file_name_that_is_not_utf8(tmp_path: Path) -> None:
    root = _folder(tmp_path / "f", json.dumps({"question": "Where?", "evidence": [QUOTE]}))
    (Path(os.fsdecode(os.fsencode(root) + b"/caf\xe9.md"))).write_text("# Cafe\n\nText.\n")
    with pytest.raises(FolderFormatError, match="file name") as info:
        load_folder(root)
    assert "'caf\\udce9.md' is not UTF-8" in str(info.value)
    assert "0xe9" in str(info.value)
    assert "rename" in str(info.value)


def test_cli_refuses_it_with_status_2_and_the_location(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _beir(tmp_path / "b", GOOD_DOC + '{"_id": "d2", "text": "Dogs \\ud800 bark."}\n')
    code = main(["search", "dogs", "--corpus", str(root), "--encoder", "hash"])
    err = capsys.readouterr().err
    assert code == 2
    assert "corpus.jsonl:2: field 'text' is not valid Unicode" in err
    assert "Traceback" not in err
    with pytest.raises(BeirFormatError):
        load(root)
