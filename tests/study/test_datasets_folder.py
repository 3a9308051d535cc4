"""Tests for a folder of your own documents with ``questions.jsonl`` (datasets.folder)."""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path

import pytest

from hierret.cli import main
from hierret.datasets import (
    DataNotFoundError,
    FolderDataset,
    FolderDataWarning,
    FolderFormatError,
    load,
    load_folder,
    locate,
)
from hierret.structure.hierarchy import build_hierarchy
from hierret.study.params import CORPUS

EXAMPLE = Path(__file__).resolve().parents[2] / "data" / "examples" / "handbook"
QUOTE_IDS = [f"q{i}" for i in range(1, 19)]  # the example's questions with evidence quotes
SECTION_IDS = ["q20", "q21", "q23"]  # ... naming sections
DOCUMENT_IDS = ["q19", "q22"]  # ... naming a document

SETUP = (
    "# Setup\n\nRun the installer before anything else, then restart.\n\n"
    "## Logging\n\nLogs are written to the var/log folder of the install.\n\n"
    "## Upgrading\n\nUpgrades keep the configuration files where they are.\n"
)
FAQ = (
    "# FAQ\n\n## Logging\n\nAsk the operators where the logs of the service go.\n\n"
    "Upgrades keep the configuration files where they are.\n"
)
LOGS_QUOTE = "Logs are written to the var/log folder of the install."


def _folder(tmp_path: Path, lines: list[object], docs: dict[str, str] | None = None) -> Path:
    """A folder with ``docs`` (default: guide/setup.md and faq.md) and these question lines."""
    root = tmp_path / "mine"
    for rel, text in (docs or {"guide/setup.md": SETUP, "faq.md": FAQ}).items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    rows = [line if isinstance(line, str) else json.dumps(line) for line in lines]
    (root / "questions.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return root


def _warned(root: Path) -> tuple[FolderDataset, str]:
    with pytest.warns(FolderDataWarning) as caught:
        data = load_folder(root)
    assert len(caught) == 1, "one warning per load"
    return data, str(caught[0].message)


# -- the example folder ----------------------------------------------------------


def test_example_folder_loads_without_warnings() -> None:
    bundle = load(EXAMPLE)  # warnings are errors in the tests: none is given
    assert (bundle.source, bundle.split, bundle.corpus.name) == (
        "handbook",
        None,
        "folder-handbook",
    )
    assert len(bundle.corpus) == 18
    assert [q.id for q in bundle.queries] == [f"q{i}" for i in range(1, 24)]
    assert bundle.targets == ("documents", "sections", "passages")
    assert bundle.heading_styles == ("rst", "markdown", "numbered")
    ids = [d.id for d in bundle.corpus]
    assert ids == sorted(ids)
    assert "README" not in ids
    assert "install/windows" in ids
    assert bundle.corpus["install/linux"].title == "Installing on Linux"
    assert bundle.corpus["changelog"].title == "changelog"  # no heading: the file stem
    sizes = [f.stat().st_size for f in EXAMPLE.rglob("*") if f.is_file()]
    assert sum(sizes) < 80_000


def test_example_quotes_are_each_found_exactly_once() -> None:
    corpus = load(EXAMPLE).corpus
    for line in (EXAMPLE / "questions.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        for quote in row.get("evidence", []):
            assert len(locate(quote, corpus)) == 1, (row["id"], quote)


def test_example_qrels_at_every_target() -> None:
    bundle = load(EXAMPLE)
    h = build_hierarchy(bundle.corpus, heading_styles=bundle.heading_styles)
    qrels = {t: bundle.qrels(h, t) for t in bundle.targets}
    assert set(qrels["passages"]) == set(QUOTE_IDS)
    assert set(qrels["sections"]) == set(QUOTE_IDS + SECTION_IDS)
    assert set(qrels["documents"]) == set(QUOTE_IDS + SECTION_IDS + DOCUMENT_IDS)
    assert qrels["documents"]["q22"] == {
        "install/linux": 1,
        "install/macos": 1,
        "install/windows": 1,
    }
    assert qrels["documents"]["q19"] == {"usage/restore": 1}
    # a section named by its path is evidence with its subsections
    sections = {s.id: s for s in h.sections["usage/restore"]}
    mount = next(s for s in sections.values() if s.title == "Mounting a repository")
    assert qrels["sections"]["q21"] == {mount.id: 1}
    slow = [s.id for s in h.sections["troubleshooting/performance"] if s.path[0].startswith("1 ")]
    assert sorted(qrels["sections"]["q23"]) == sorted(slow)  # "1 Slow first backup" and its 1.x
    assert [q.id for q in bundle.judged_queries("sections")] == [*QUOTE_IDS, "q20", "q21", "q23"]


def test_identity_fingerprints_the_content_not_the_place(tmp_path: Path) -> None:
    copy = tmp_path / "handbook"
    shutil.copytree(EXAMPLE, copy)
    ident = load(EXAMPLE).identity()
    assert load(copy).identity() == ident  # same bytes elsewhere: same identity
    assert str(EXAMPLE) not in json.dumps(ident)
    assert str(tmp_path) not in json.dumps(ident)
    assert ident["dataset"] == "folder/handbook"
    assert (ident["full_documents"], ident["full_queries"]) == (18, 23)
    assert (ident["dropped_items"], ident["dropped_questions"], ident["skipped_files"]) == (0, 0, 0)
    doc = copy / "faq.md"
    raw = bytearray(doc.read_bytes())
    raw[-2] = ord("!") if raw[-2] != ord("!") else ord("?")  # one byte
    doc.write_bytes(bytes(raw))
    changed = load(copy).identity()
    assert changed["content_fingerprint"] != ident["content_fingerprint"]
    assert changed["fingerprint"] != ident["fingerprint"]


def test_identity_changes_with_line_ends_the_text_does_not_show(tmp_path: Path) -> None:
    copy = tmp_path / "handbook"
    shutil.copytree(EXAMPLE, copy)
    doc = copy / "faq.md"
    doc.write_bytes(doc.read_bytes().replace(b"\n", b"\r\n"))
    before, after = load(EXAMPLE).identity(), load(copy).identity()
    assert after["fingerprint"] == before["fingerprint"]  # the text, after \r\n -> \n
    assert after["content_fingerprint"] != before["content_fingerprint"]  # the bytes


def test_sampling_keeps_first_questions_and_their_documents() -> None:
    full = load(EXAMPLE)
    small = load(EXAMPLE, max_queries=5, max_docs=8, seed=1)
    assert small.queries == full.queries[:5]
    ids = [d.id for d in small.corpus]
    assert len(ids) == 8
    assert {d for q in small.queries for d in q.evidence_docs} <= set(ids)
    assert small.sampling.startswith("the first 5 of 23 queries (file order); every judged")
    assert small.sampling.endswith("seed 1")
    assert small.judged_at == {f"q{i}": "passages" for i in range(1, 6)}
    assert load(EXAMPLE, max_queries=5, max_docs=8, seed=1).corpus == small.corpus
    ident = small.identity()
    assert (ident["documents"], ident["queries"], ident["full_documents"]) == (8, 5, 18)
    tail = load(EXAMPLE, max_docs=3)  # never fewer than the judged documents
    assert len(tail.corpus) == len({d for q in tail.queries for d in q.evidence_docs})


def test_cli_searches_the_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "search",
            "--corpus",
            str(EXAMPLE),
            "how do I remove a stale lock",
            "--ranker",
            "bm25",
            "--encoder",
            "hash",
            "--k",
            "3",
            "--cache-dir",
            str(tmp_path),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert out.startswith("folder-handbook: 18 documents")
    assert " 1  " in out
    assert "troubleshooting/common-errors#p0" in out


def test_cli_help_and_notebook_parameter_mention_folders(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        main(["search", "--help"])
    assert "folder of Markdown/RST/text documents" in " ".join(capsys.readouterr().out.split())
    assert CORPUS.accepts(str(EXAMPLE))
    problem = CORPUS.problem("corpus", "no/such/folder")
    assert problem is not None
    assert "questions.jsonl" in problem


def test_questions_file_path_and_split(tmp_path: Path) -> None:
    root = _folder(tmp_path, [{"question": "Where are the logs?", "evidence": [LOGS_QUOTE]}])
    assert load(root / "questions.jsonl").corpus == load(root).corpus
    with pytest.raises(ValueError, match="no splits"):
        load(root, split="test")


# -- bad input: kept without the bad item, one warning ----------------------------


def test_quote_found_nowhere_is_left_out_with_one_warning(tmp_path: Path) -> None:
    missing = "This sentence appears in none of the documents at all."
    root = _folder(
        tmp_path,
        [
            {"id": "a", "question": "Where are the logs?", "evidence": [LOGS_QUOTE, missing]},
            {"id": "b", "question": "Anything?", "evidence": [missing]},
        ],
    )
    data, message = _warned(root)
    assert [q.id for q in data.queries] == ["a"]
    assert "2 quote(s) found in no document" in message
    assert "a (line 1) 'This sentence appears" in message
    assert "b (line 2)" in message
    assert "1 question(s) dropped" in message
    assert "b (line 2)" in message
    assert "copy quotes verbatim" in message
    ident = data.identity()
    assert (ident["dropped_items"], ident["dropped_questions"]) == (2, 1)


def test_quote_in_several_places_is_evidence_in_each(tmp_path: Path) -> None:
    twice = "Upgrades keep the configuration files where they are."
    root = _folder(
        tmp_path, [{"id": "up", "question": "Do upgrades keep config?", "evidence": [twice]}]
    )
    data, message = _warned(root)
    (query,) = data.queries
    assert query.evidence_docs == ("faq", "guide/setup")
    assert "found in several places: each place is evidence (the gold set's rule)" in message
    assert "up (line 1) 2 places in faq, guide/setup" in message


def test_unknown_document_and_section_ids_are_left_out(tmp_path: Path) -> None:
    root = _folder(
        tmp_path,
        [
            {"id": "ok", "question": "Logs?", "relevant": ["guide/setup", "guide/setup.md"]},
            {"id": "sec", "question": "Logs?", "relevant": ["guide/setup > Setup > Loging"]},
            {"id": "typo", "question": "Logs?", "relevant": ["guide/setpu"]},
        ],
    )
    data, message = _warned(root)
    assert [q.id for q in data.queries] == ["ok"]
    assert "3 document or section id(s) not in the folder" in message
    assert "'guide/setup.md' (ids have no suffix: 'guide/setup')" in message
    assert "'guide/setpu' (did you mean 'guide/setup'?)" in message
    assert "no such heading path; guide/setup has: Setup; Setup > Logging" in message
    assert "2 question(s) dropped" in message


def test_section_path_naming_several_sections_keeps_each(tmp_path: Path) -> None:
    doc = "# Guide\n\n## Linux\n\n### Notes\n\nOne.\n\n## Windows\n\n### Notes\n\nTwo.\n"
    root = _folder(
        tmp_path,
        [
            {"id": "all", "question": "Notes?", "relevant": ["guide > Notes"]},
            {"id": "one", "question": "Notes?", "relevant": ["guide>Windows>Notes"]},
        ],
        {"guide.md": doc},
    )
    data, message = _warned(root)
    q_all, q_one = data.queries
    assert len(q_all.evidence) == 2
    assert len(q_one.evidence) == 1
    assert "1 section path(s) naming several sections" in message
    assert "all (line 1) 'guide > Notes' names 2 sections" in message
    assert data.judged_at == {"all": "sections", "one": "sections"}
    with pytest.warns(FolderDataWarning):
        bundle = load(root)
    assert bundle.targets == ("documents", "sections")
    h = build_hierarchy(bundle.corpus, heading_styles=bundle.heading_styles)
    assert sorted(bundle.qrels(h, "sections")) == ["all", "one"]


def test_document_ids_judge_at_documents_only(tmp_path: Path) -> None:
    root = _folder(tmp_path, [{"question": "Setup?", "relevant": ["guide/setup", "faq > Logging"]}])
    bundle = load(root)
    assert bundle.targets == ("documents",)
    h = build_hierarchy(bundle.corpus, heading_styles=bundle.heading_styles)
    assert bundle.qrels(h, "documents") == {"q1": {"faq": 1, "guide/setup": 1}}
    with pytest.raises(ValueError, match="judged at documents only, not 'passages'"):
        bundle.qrels(h, "passages")


def test_skipped_files_are_named(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.md"
    outside.write_text("# Elsewhere\n\nNot part of the folder.\n")
    root = _folder(tmp_path, [{"question": "Where are the logs?", "evidence": [LOGS_QUOTE]}])
    (root / "link.md").symlink_to(outside)
    (root / "inside.md").symlink_to(root / "faq.md")  # inside the folder: read
    (root / "linked").symlink_to(tmp_path, target_is_directory=True)
    (root / "empty.txt").write_text(" \n")
    (root / ".hidden").mkdir()
    (root / ".hidden" / "secret.md").write_text("# Hidden\n\nNever read.\n")
    (root / "README.md").write_text("# About this folder\n")
    (root / "notes.pdf").write_bytes(b"%PDF")
    data, message = _warned(root)
    assert [d.id for d in data.corpus] == ["faq", "guide/setup", "inside"]
    assert "3 file(s) or folder(s) skipped" in message
    assert "link.md (a symlink to a file outside the folder)" in message
    assert "linked/ (a symlinked folder: not followed)" in message
    assert "empty.txt (empty: nothing to retrieve)" in message


def test_mixed_heading_styles_are_named(tmp_path: Path) -> None:
    steps = (
        "# Steps\n\nFirst read this.\n\n1 Install\n\nThe installer sets everything up for you.\n"
    )
    root = _folder(
        tmp_path,
        [{"question": "How to install?", "relevant": ["steps"]}],
        {"steps.md": steps, "notes.txt": "Plain notes without headings.\n"},
    )
    data, message = _warned(root)
    assert data.heading_styles == ("rst", "markdown", "numbered")
    assert "1 document(s) whose headings the folder's heading styles read differently" in message
    assert "steps (+'1 Install')" in message


def test_crlf_and_byte_order_mark_are_read(tmp_path: Path) -> None:
    root = _folder(tmp_path, [{"question": "Where are the logs?", "evidence": [LOGS_QUOTE]}])
    doc = root / "guide" / "setup.md"
    doc.write_bytes(b"\xef\xbb\xbf" + SETUP.replace("\n", "\r\n").encode())
    row = {"question": "Logs\u2028where?", "evidence": [LOGS_QUOTE]}  # a line separator inside
    line = json.dumps(row, ensure_ascii=False)
    (root / "questions.jsonl").write_bytes(b"\xef\xbb\xbf" + f"{line}\r\n".encode())
    data = load_folder(root)
    assert data.corpus["guide/setup"].text == SETUP
    assert data.corpus["guide/setup"].title == "Setup"
    assert [q.text for q in data.queries] == ["Logs\u2028where?"]


# -- bad input: refused -------------------------------------------------------------


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        (['{"question": "Logs?", "evidence": [}'], r"questions\.jsonl:1: malformed JSON"),
        (["", '["not", "an", "object"]'], r"questions\.jsonl:2: expected a JSON object, got list"),
        (
            [{"question": "Logs?", "evidance": [LOGS_QUOTE]}],
            r":1: unknown key\(s\) 'evidance' \(did you mean 'evidence'\?\)",
        ),
        (
            [{"question": "Logs?", "evidence": [LOGS_QUOTE], "topic": "logging"}],
            r":1: unknown key\(s\) 'topic': the keys are .* a topic goes in 'kind' or 'note'",
        ),
        ([{"id": "x", "question": "Logs?"}], r":1 \(x\): the question has neither 'evidence'"),
        (
            [{"id": "x", "question": "Logs?", "evidence": [], "relevant": []}],
            r":1 \(x\): the question has neither",
        ),
        (
            [{"id": "x", "question": "Logs?", "evidence": [LOGS_QUOTE], "relevant": ["faq"]}],
            r":1 \(x\): the question has both 'evidence' and 'relevant'",
        ),
        (
            [{"id": "x", "question": "Logs?", "relevant": ["faq"]}] * 2,
            r":2 \(x\): duplicate question id 'x' \(first at line 1\)",
        ),
        (
            [
                {"question": "Logs?", "relevant": ["faq"]},
                {"id": "q1", "question": "?", "relevant": ["faq"]},
            ],
            r":2 \(q1\): duplicate question id 'q1'",
        ),
        ([{"id": "x", "question": " ", "relevant": ["faq"]}], r":1 \(x\): 'question' must be"),
        (
            [{"id": "x", "question": "Logs?", "evidence": "Logs are written"}],
            r":1 \(x\): 'evidence' must be a list of strings",
        ),
        (
            [{"id": "x", "question": "Logs?", "evidence": ["Logs are written"]}],
            r":1 \(x\): the quote 'Logs are written' is shorter than 40 characters",
        ),
        ([{"id": True, "question": "Logs?", "relevant": ["faq"]}], r":1: 'id' must be"),
        (["", "  "], r"holds no questions: write one JSON object a line"),
        (
            [{"question": "Logs?", "relevant": ["nowhere"]}],
            r"none of its 1 question\(s\) has evidence found in the documents(.|\n)*"
            r"not in the folder(.|\n)*q1 \(line 1\) 'nowhere'",
        ),
    ],
)
def test_refused_lines_name_file_line_id_and_fix(
    tmp_path: Path, lines: list[object], expected: str
) -> None:
    root = _folder(tmp_path, lines)
    with pytest.raises(FolderFormatError, match=expected):
        load(root)


def test_not_utf8_document_names_file_and_fix(tmp_path: Path) -> None:
    root = _folder(tmp_path, [{"question": "Logs?", "relevant": ["faq"]}])
    (root / "latin.txt").write_bytes("Caf\xe9 notes\n".encode("latin-1"))
    with pytest.raises(FolderFormatError) as info:
        load(root)
    message = str(info.value)
    assert "latin.txt: not UTF-8 text: byte 3 (line 1)" in message
    assert "iconv -f CP1252 -t UTF-8" in message


_TEXTS = {
    "utf-16": "# Notes\n\nGrüße aus Köln: the logs are kept for thirty days.\n",
    "utf-16-le": "# Notes\n\nThe logs are kept for thirty days, then removed.\n",
    "utf-16-be": "# Notes\n\nThe logs are kept for thirty days, then removed.\n",
    "utf-32": "# Notes\n\nThe logs are kept for thirty days.\n",
    "cp1252": "# Notes\n\nLes élèves préfèrent « les cafés » ; ça coûte 5 € — voilà.\n" * 3,
    "cp1251": "# Заметки\n\nЭто тестовый документ на русском языке, довольно длинный.\n" * 3,
    "shift_jis": "# メモ\n\n日本語の文書です。これはテストのための長い文章になります。\n" * 3,
    "gb18030": "# 笔记\n\n这是一个用于测试的中文文档，内容比较长一些。日志保存三十天。\n" * 3,
}


@pytest.mark.parametrize("encoding", list(_TEXTS))
def test_the_fix_a_not_utf8_error_names_is_right_for_the_file(
    tmp_path: Path, encoding: str
) -> None:
    """The command the error gives turns the file into its text, not into garbage."""
    import re
    import shutil
    import subprocess

    root = _folder(tmp_path, [{"question": "Logs?", "relevant": ["faq"]}])
    doc = root / "notes.md"
    doc.write_bytes(_TEXTS[encoding].encode(encoding))
    with pytest.raises(FolderFormatError) as info:
        load(root)
    message = str(info.value)
    found = re.search(r"iconv -f (\S+) -t UTF-8 (.+) > .+ && mv", message)
    assert found, message
    assert doc.read_bytes().decode(found.group(1)).removeprefix("\ufeff") == _TEXTS[encoding]
    if shutil.which("iconv"):
        command = message[found.start() :].split(" (a guess")[0]
        subprocess.run(command, shell=True, check=True, cwd=root)
        assert doc.read_text(encoding="utf-8").removeprefix("\ufeff") == _TEXTS[encoding]


def test_a_binary_file_with_a_text_suffix_is_named_as_such(tmp_path: Path) -> None:
    root = _folder(tmp_path, [{"question": "Logs?", "relevant": ["faq"]}])
    (root / "scan.txt").write_bytes(bytes(range(256)) * 16)
    with pytest.raises(FolderFormatError, match="not text in any encoding tried"):
        load(root)


def test_not_utf8_questions_file(tmp_path: Path) -> None:
    root = _folder(tmp_path, [])
    (root / "questions.jsonl").write_bytes(b'{"question": "Caf\xe9?", "relevant": ["faq"]}\n')
    with pytest.raises(FolderFormatError, match=r"questions\.jsonl: not UTF-8 text"):
        load(root)


def test_two_files_with_one_id_are_refused(tmp_path: Path) -> None:
    root = _folder(tmp_path, [{"question": "Logs?", "relevant": ["faq"]}])
    (root / "faq.rst").write_text("FAQ\n===\n\nMore questions.\n")
    with pytest.raises(FolderFormatError, match=r"faq\.md and faq\.rst have the same document id"):
        load(root)


def test_folder_without_questions_or_documents_says_what_is_expected(tmp_path: Path) -> None:
    docs_only = tmp_path / "docs"
    docs_only.mkdir()
    (docs_only / "a.md").write_text("# A\n\nText.\n")
    with pytest.raises(FolderFormatError, match=r"has no questions\.jsonl") as info:
        load_folder(docs_only)
    assert '"evidence": [' in str(info.value)
    assert '"relevant": [' in str(info.value)
    with pytest.raises(ValueError, match="not a recognised format") as via_load:
        load(docs_only)
    assert "questions.jsonl" in str(via_load.value)
    assert "corpus.jsonl" in str(via_load.value)
    questions_only = tmp_path / "questions"
    questions_only.mkdir()
    (questions_only / "questions.jsonl").write_text('{"question": "?", "relevant": ["a"]}\n')
    with pytest.raises(FolderFormatError, match=r"holds no documents with text: put the documents"):
        load(questions_only)
    with pytest.raises(FolderFormatError, match="is not a folder"):
        load_folder(tmp_path / "missing")


def test_the_readme_counts_the_example_folder_as_it_is() -> None:
    """README quotes the example's size; the folder is the source of the numbers."""
    import re

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    quoted = re.search(r"\((\d+) made-up documents, (\d+) questions\)", readme)
    assert quoted is not None
    bundle = load(str(Path(__file__).resolve().parents[2] / "data" / "examples" / "handbook"))
    assert (int(quoted[1]), int(quoted[2])) == (len(bundle.corpus), len(bundle.queries))


# -- links that lead nowhere -------------------------------------------------------------


def test_a_document_that_is_a_symlink_loop_is_skipped_and_named(tmp_path: Path) -> None:
    root = _folder(tmp_path, [{"question": "Where are the logs?", "evidence": [LOGS_QUOTE]}])
    (root / "loop.md").symlink_to("loop.md")
    (root / "gone.md").symlink_to("moved-away.md")
    data, warning = _warned(root)  # used to raise a bare RuntimeError from Path.resolve()
    assert [d.id for d in data.corpus] == ["faq", "guide/setup"]
    assert "loop.md (a symbolic link loop" in warning
    assert "gone.md (a symbolic link to 'moved-away.md', which does not exist)" in warning


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (lambda root: root.symlink_to(root.name), "is a symbolic link loop"),
        (lambda root: root.symlink_to("nowhere"), "is a symbolic link to 'nowhere'"),
        (
            lambda root: (root.mkdir(), (root / "corpus.jsonl").symlink_to("corpus.jsonl")),
            "corpus.jsonl is a symbolic link loop",
        ),
        (
            lambda root: (root.mkdir(), (root / "questions.jsonl").symlink_to("gone.jsonl")),
            "questions.jsonl is a symbolic link to 'gone.jsonl'",
        ),
    ],
)
def test_a_corpus_path_that_is_a_broken_link_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], make: object, said: str
) -> None:
    root = tmp_path / "corpus"
    make(root)  # type: ignore[operator]
    with pytest.raises(DataNotFoundError, match="ls -l") as info:
        load(root)
    assert said in str(info.value)
    assert "folder without" not in str(info.value)
    code = main(["search", "q", "--corpus", str(root), "--encoder", "hash"])
    assert code == 2
    assert said in capsys.readouterr().err


# -- one id rule: document ids and relevant ids in NFC, stripped ------------------------------


@pytest.mark.parametrize(
    ("file_name", "named"),
    [("caf\u0065\u0301", "caf\u00e9"), ("caf\u00e9", " caf\u0065\u0301 ")],
)
def test_ids_match_across_unicode_forms(tmp_path: Path, file_name: str, named: str) -> None:
    root = _folder(
        tmp_path, [{"question": "Setup?", "relevant": [named]}], {f"{file_name}.md": SETUP}
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", FolderDataWarning)
        data = load_folder(root)
    assert [d.id for d in data.corpus] == ["caf\u00e9"]
    assert data.queries[0].evidence_docs == ("caf\u00e9",)


def test_two_files_one_id_under_nfc_are_refused(tmp_path: Path) -> None:
    docs = {"caf\u0065\u0301.md": SETUP, "caf\u00e9.md": FAQ}
    root = _folder(tmp_path, [{"question": "Setup?", "relevant": ["caf\u00e9"]}], docs)
    with pytest.raises(FolderFormatError, match=r"same document id 'caf\\xe9'.*NFC"):
        load_folder(root)


@pytest.mark.parametrize(
    ("doc_form", "quote_form"), [("NFD", "NFC"), ("NFC", "NFD"), ("NFD", "NFD")]
)
def test_text_and_quotes_are_compared_in_nfc(
    tmp_path: Path, doc_form: str, quote_form: str
) -> None:
    """A document saved on macOS (NFD) holds the quotes typed elsewhere (NFC), and back."""
    import unicodedata

    sentence = "Le café crème est servi à la Brasserie Müller jusqu'à minuit, même en été."
    root = tmp_path / "notes"
    root.mkdir()
    (root / "menu.md").write_text(
        "# Menu\n\n" + unicodedata.normalize(doc_form, sentence) + "\n", encoding="utf-8"
    )
    quote = unicodedata.normalize(quote_form, sentence)
    (root / "questions.jsonl").write_text(
        json.dumps({"question": "Until when?", "evidence": [quote]}) + "\n", encoding="utf-8"
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no quote left out
        data = load_folder(root)
    ((doc_id, start, end),) = data.queries[0].evidence
    assert data.corpus[doc_id].text[start:end] == unicodedata.normalize("NFC", sentence)


def test_locate_maps_composed_matches_back_to_the_text_as_given() -> None:
    import unicodedata

    from hierret.datasets import locate
    from hierret.structure.units import Corpus, Document

    text = "x  " + unicodedata.normalize("NFD", "Ångström über 한국어 text") + " y"
    spans = locate("Ångström  über 한국어", Corpus("c", [Document("a", "", text)]))
    ((_, start, end),) = spans
    assert unicodedata.normalize("NFC", text[start:end]) == "Ångström über 한국어"


@pytest.mark.parametrize(
    "head",
    [
        "---\ntitle: Release notes\ndate: 2024-01-01\ntags: [cache, vectors]\n---\n",
        "---\nTitle: 'Release notes'\n...\n",
        '+++\ntitle = "Release notes"\ndraft = false\n+++\n',
        "\ufeff---\r\ntitle: Release notes\r\n---\r\n",
    ],
)
def test_front_matter_names_the_document_and_is_not_text(tmp_path: Path, head: str) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    body = "The release adds a cache that keeps vectors across runs.\n\n## Fixes\n\nMany.\n"
    (root / "release.md").write_bytes((head + body).encode("utf-8"))
    (root / "questions.jsonl").write_text('{"question": "What?", "relevant": ["release"]}\n')
    doc = load_folder(root).corpus["release"]
    assert doc.title == "Release notes"
    assert doc.text == body
    assert "title" not in doc.text.lower()


def test_a_rule_at_the_top_is_not_front_matter(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    text = "---\n\nA rule above, then the text of the note itself.\n\n---\n\nMore.\n"
    (root / "n.md").write_text(text)
    (root / "questions.jsonl").write_text('{"question": "What?", "relevant": ["n"]}\n')
    assert load_folder(root).corpus["n"].text == text


@pytest.mark.parametrize("name", ["saved.md", "export.txt", "page.markdown"])
def test_an_html_page_saved_under_a_text_name_is_read_as_its_text(
    tmp_path: Path, name: str
) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    page = (
        "<!-- saved from url -->\n<!DOCTYPE html>\n<html lang='en'><head><title>Guide</title>"
        "<style>body{color:red}</style><script>var x = '<p>';</script></head><body>"
        "<nav><a href='/'>Home</a></nav><h1>Install</h1><p>Run the installer &amp; reboot "
        "the machine afterwards, then log in again.</p><h2>Logs</h2><p>Logs go to "
        "<code>/var/log</code>.</p></body></html>"
    )
    (root / name).write_text(page)
    stem = name.split(".")[0]
    quote = "Run the installer & reboot the machine afterwards, then log in again."
    (root / "questions.jsonl").write_text(
        json.dumps({"question": "How?", "evidence": [quote]}) + "\n"
    )
    with pytest.warns(FolderDataWarning, match="HTML page"):
        data = load_folder(root)
    doc = data.corpus[stem]
    assert "<" not in doc.text
    assert "color:red" not in doc.text
    assert "var x" not in doc.text
    assert doc.title == "Guide"
    assert len(data.queries) == 1
    h = build_hierarchy(data.corpus, heading_styles=data.heading_styles)
    assert [s.path for s in h.sections[stem] if s.path != ("(preamble)",)] == [
        ("Install",),
        ("Install", "Logs"),
    ]


def test_markdown_with_inline_html_is_left_as_it_is(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    text = "# Notes\n\nSome <b>bold</b> text and a <br> break.\n\n<details>more</details>\n"
    (root / "n.md").write_text(text)
    (root / "questions.jsonl").write_text('{"question": "What?", "relevant": ["n"]}\n')
    assert load_folder(root).corpus["n"].text == text


def test_a_folder_without_questions_is_searchable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Questions are needed to evaluate, not to search."""
    root = tmp_path / "mydocs"
    root.mkdir()
    (root / "cats.md").write_text("# Cats\n\nCats purr when they are content and warm.\n")
    (root / "dogs.md").write_text("# Dogs\n\nDogs bark at the mail carrier every morning.\n")
    (root / "owls.txt").write_text("Owls hoot at night in the old barn.\n")
    bundle = load(str(root), questions=False)
    assert [d.id for d in bundle.corpus] == ["cats", "dogs", "owls"]
    assert bundle.queries == ()
    with pytest.raises(ValueError, match="questions are needed to evaluate, not to search"):
        load(str(root))  # a study still needs them
    cache = str(tmp_path / "cache")
    argv = ["--corpus", str(root), "--encoder", "hash", "--cache-dir", cache]
    assert main(["embed", *argv, "--no-progress"]) == 0
    assert main(["search", "why do cats purr", *argv, "--ranker", "bm25", "--k", "1"]) == 0
    out = capsys.readouterr().out
    assert "folder-mydocs: 3 documents" in out
    assert "cats#" in out


def test_the_vectorised_whitespace_map_equals_the_regex_one() -> None:
    """gold._Normalised (numpy, 4-8 bytes a character) equals the regex walk it replaced."""
    import random
    import re

    from hierret.datasets.gold import _Normalised

    def reference(text: str) -> tuple[str, list[int]]:
        parts, offsets, pos = [], [], 0
        for m in re.finditer(r"\s+", text):
            parts.append(text[pos : m.start()])
            offsets.extend(range(pos, m.start()))
            parts.append(" ")
            offsets.append(m.start())
            pos = m.end()
        parts.append(text[pos:])
        offsets.extend(range(pos, len(text)))
        return "".join(parts), [*offsets, len(text)]

    from hierret.datasets import gold

    rng = random.Random(7)
    alphabet = [*"ab z\t\n\r\x0b\x0c\x1c\x85\xa0\u2028\u3000漢😀", "  ", "\n\n"]
    for block in (gold._BLOCK, 5):  # whitespace runs across a block's edge too
        for _ in range(300):
            text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 50)))
            saved, gold._BLOCK = gold._BLOCK, block
            try:
                got = _Normalised(text)
            finally:
                gold._BLOCK = saved
            assert (got.text, [int(o) for o in got.offsets]) == reference(text)
