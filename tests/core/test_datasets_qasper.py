"""Tests for the Qasper loader: text layout, section tree, evidence, download, real sample."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
from conftest import Server
from hypothesis import given, settings
from hypothesis import strategies as st

from hierret.datasets import qasper
from hierret.datasets.download import (
    ChecksumError,
    CorruptArchiveError,
    DataFormatError,
    DataNotFoundError,
)
from hierret.datasets.qasper import (
    HEADING_STYLES,
    QASPER_DOWNLOADS,
    QasperFormatError,
    QasperRemote,
    load_qasper,
)
from hierret.evaluation import qrels_from_evidence
from hierret.structure.hierarchy import build_hierarchy
from hierret.structure.units import Corpus


def answer(*evidence: str, unanswerable: bool = False) -> dict[str, Any]:
    return {
        "answer": {
            "unanswerable": unanswerable,
            "extractive_spans": [],
            "yes_no": None,
            "free_form_answer": "",
            "evidence": list(evidence),
            "highlighted_evidence": [],
        },
        "annotation_id": "a",
        "worker_id": "w",
    }


def qa(qid: str, *answers: dict[str, Any]) -> dict[str, Any]:
    return {"question": f"Question {qid}?", "question_id": qid, "answers": list(answers)}


P1: dict[str, Any] = {
    "title": "A Study of Things",
    "abstract": "We study things.",
    "full_text": [
        {"section_name": "Introduction", "paragraphs": ["Things matter.", "", "They do."]},
        {"section_name": "Method", "paragraphs": ["Our method has parts."]},
        {"section_name": "Method ::: Encoder", "paragraphs": ["The encoder reads text."]},
        {"section_name": "Method ::: Encoder ::: Layers", "paragraphs": ["Six layers."]},
        {"section_name": "", "paragraphs": ["A loose paragraph.", "  "]},
        {"section_name": "Method ::: Decoder", "paragraphs": ["The decoder writes text."]},
        {"section_name": "Results", "paragraphs": ["It works   well\non all data."]},
        {"section_name": "Appendix ::: Extra ::: More", "paragraphs": ["Deep text."]},
    ],
    "qas": [
        qa("q1", answer("The encoder reads text.")),
        qa("q2", answer(unanswerable=True), answer("Things matter.", unanswerable=True)),
        qa("q3", answer("FLOAT SELECTED: Table 1: Scores."), answer("Table 1:  Scores.")),
        qa("q4", answer("It works well on all data."), answer(unanswerable=True)),
        qa("q5", answer("Not in the paper at all.")),
        qa("q6", answer("Things matter.", "We study things."), answer("Things matter.")),
        qa("q7", answer()),  # a yes/no answer with no evidence
        qa("q8", answer("FLOAT SELECTED: Figure 2: A plot.", "Six layers.")),
    ],
    "figures_and_tables": [{"caption": "Table 1: Scores.", "file": "t1.png"}],
}
P1_TEXT = (
    "# A Study of Things\n\n## Abstract\n\nWe study things.\n\n"
    "## Introduction\n\nThings matter.\n\nThey do.\n\n"
    "## Method\n\nOur method has parts.\n\n### Encoder\n\nThe encoder reads text.\n\n"
    "#### Layers\n\nSix layers.\n\nA loose paragraph.\n\n### Decoder\n\nThe decoder writes text."
    "\n\n## Results\n\nIt works   well\non all data.\n\n"
    "## Appendix\n\n### Extra\n\n#### More\n\nDeep text."
)
P2: dict[str, Any] = {
    "title": None,
    "abstract": "",
    "full_text": [
        {"section_name": "", "paragraphs": ["Front matter."]},
        {"section_name": None, "paragraphs": ["More front."]},
        {"section_name": " ::: ", "paragraphs": ["Still front."]},
        {"section_name": "A ::: B", "paragraphs": ["In B."]},
        {"section_name": "A", "paragraphs": ["Back in A."]},
    ],
    "qas": [qa("q9", answer("Back in A."))],
    "figures_and_tables": [],
}
P2_TEXT = (
    "# p2\n\n## (untitled)\n\nFront matter.\n\nMore front.\n\nStill front.\n\n"
    "## A\n\n### B\n\nIn B.\n\n## A\n\nBack in A."
)


def write_json(path: Path, papers: object) -> Path:
    path.write_text(json.dumps(papers), encoding="utf-8")
    return path


@pytest.fixture
def mini(tmp_path: Path) -> Path:
    return write_json(tmp_path / "mini-v0.3.json", {"p1": P1, "p2": P2})


def test_text_layout(mini: Path) -> None:
    ds = load_qasper(mini)
    assert [d.id for d in ds.corpus] == ["p1", "p2"]
    assert ds.corpus["p1"].title == "A Study of Things"
    assert ds.corpus["p1"].text == P1_TEXT
    assert ds.corpus["p2"].title == "p2"  # no title: the paper id
    assert ds.corpus["p2"].text == P2_TEXT
    assert (ds.name, ds.corpus.name, ds.path) == ("mini-v0.3", "qasper-mini-v0.3", mini)


def test_section_tree(mini: Path) -> None:
    h = build_hierarchy(load_qasper(mini).corpus)
    got = [(s.id, s.path[1:]) for s in h.sections["p1"]]
    assert got == [
        ("p1#s1", ()),
        ("p1#s1.1", ("Abstract",)),
        ("p1#s1.2", ("Introduction",)),
        ("p1#s1.3", ("Method",)),
        ("p1#s1.3.1", ("Method", "Encoder")),
        ("p1#s1.3.1.1", ("Method", "Encoder", "Layers")),
        ("p1#s1.3.2", ("Method", "Decoder")),
        ("p1#s1.4", ("Results",)),
        ("p1#s1.5", ("Appendix",)),
        ("p1#s1.5.1", ("Appendix", "Extra")),
        ("p1#s1.5.1.1", ("Appendix", "Extra", "More")),
    ]
    assert h.sections["p1"][0].path[0] == "A Study of Things"
    assert [(s.id, s.path[1:]) for s in h.sections["p2"]] == [
        ("p2#s1", ()),
        ("p2#s1.1", ("(untitled)",)),
        ("p2#s1.2", ("A",)),
        ("p2#s1.2.1", ("A", "B")),
        ("p2#s1.3", ("A",)),
    ]
    layers = h.sections["p1"][5]
    own = h.corpus["p1"].text[layers.start : layers.own_end]
    assert own == "#### Layers\n\nSix layers.\n\nA loose paragraph.\n\n"  # unnamed entry joins


def test_counts(mini: Path) -> None:
    ds = load_qasper(mini)
    assert asdict(ds.stats) == {
        "papers": 2,
        "questions": 9,
        "kept": 5,
        "unanswerable": 1,
        "figure_table_only": 1,
        "no_located_evidence": 2,
        "evidence_total": 8,
        "evidence_located": 7,
        "evidence_figure_table": 3,
        "blank_paragraphs": 2,
        "stray_headings": 0,
    }
    s = ds.stats
    assert s.questions == s.kept + s.unanswerable + s.figure_table_only + s.no_located_evidence
    assert [q.id for q in ds.queries] == ["q1", "q4", "q6", "q8", "q9"]
    assert "7/8 evidence spans located" in s.summary()
    assert ds.unlocated == ["q5: evidence 'Not in the paper at all.' not found in paper p1"]


def test_evidence_spans_cut_back_out(mini: Path) -> None:
    ds = load_qasper(mini)
    cut = {q.id: [ds.corpus[d].text[s:e] for d, s, e in q.evidence] for q in ds.queries}
    assert cut == {
        "q1": ["The encoder reads text."],
        "q4": ["It works   well\non all data."],  # located modulo whitespace, cut verbatim
        "q6": ["Things matter.", "We study things."],  # duplicates across annotators merged
        "q8": ["Six layers."],  # figure evidence left out, text evidence kept
        "q9": ["Back in A."],
    }
    assert all(d == "p1" for q in ds.queries[:4] for d, _, _ in q.evidence)
    q1 = ds.queries[0]
    assert q1.text == "Question q1?"
    h = build_hierarchy(ds.corpus)
    qrels = qrels_from_evidence(ds.queries, h.units("sections"))
    assert qrels["q1"] == {"p1#s1.3.1": 1}
    assert qrels["q6"] == {"p1#s1.1": 1, "p1#s1.2": 1}


def test_max_papers_and_identity(mini: Path) -> None:
    one = load_qasper(mini, max_papers=1)
    assert [d.id for d in one.corpus] == ["p1"]
    assert (one.stats.papers, one.stats.questions) == (1, 8)
    ident = load_qasper(mini).identity()
    assert ident == load_qasper(str(mini)).identity()
    assert ident["dataset"] == "qasper/mini-v0.3"
    assert ident["queries"] == 5
    assert ident["qasper_evidence_located"] == 7
    assert ident["fingerprint"] != one.identity()["fingerprint"]
    assert str(mini.parent) not in json.dumps(ident)


def test_deep_nesting_is_capped_at_six_levels() -> None:
    name = " ::: ".join("ABCDEFG")
    paper = {"title": "T", "full_text": [{"section_name": name, "paragraphs": ["x"]}]}
    qasper._check_paper("p", paper, Path("<paper>"))  # as load_qasper reads each paper
    doc = qasper._PaperText("p", paper, Path("<paper>")).document
    assert doc.text == ("# T\n\n## A\n\n### B\n\n#### C\n\n##### D\n\n###### E ::: F ::: G\n\nx")
    h = build_hierarchy(Corpus("c", [doc]))
    assert h.sections["p"][-1].path[1:] == ("A", "B", "C", "D", "E ::: F ::: G")


@pytest.mark.parametrize(
    ("content", "pattern"),
    [
        ("[1, 2]", r"expected a JSON object"),
        ('{"p": ', r"malformed JSON"),
        ('{"p": [1]}', r"paper 'p' is not a JSON object"),
        ('{"p": {"full_text": [{"section_name": "x"}]}}', r"list of 'paragraphs'.*got nothing"),
        ('{"p": {"full_text": [], "qas": [{"question": "?"}]}}', r"'qas\[0\]\.question_id'"),
        ('{"p": {"title": 3}}', r"'title' must be a string"),
        ('{"p": {"abstract": ["x"]}}', r"'abstract' must be a string .*got array of 1"),
        ('{"p": {"full_text": "text"}}', r"'full_text' must be a list"),
        ('{"p": {"full_text": [{"section_name": 7, "paragraphs": []}]}}', r"section_name"),
        ('{"p": {"full_text": [{"paragraphs": ["x", 3]}]}}', r"'full_text\[0\]\.paragraphs\[1\]'"),
        ('{"p": {"figures_and_tables": [{"caption": 1}]}}', r"caption' must be a string"),
        ('{"p": {"figures_and_tables": ["Table 1"]}}', r"'figures_and_tables\[0\]' must be"),
        ('{"p": {"qas": {"q1": {}}}}', r"'qas' must be a list"),
        (
            '{"p": {"qas": [{"question_id": "q", "question": "?", "answers": ["yes"]}]}}',
            r"'qas\[0\]\.answers\[0\]' must be an object .*got string 'yes'",
        ),
        (
            '{"p": {"qas": [{"question_id": "q", "question": "?", "answers": [{"answer": 1}]}]}}',
            r"'qas\[0\]\.answers\[0\]\.answer' must be an object .*got number 1",
        ),
        (
            '{"p": {"qas": [{"question_id": "q", "question": "?", "answers": '
            '[{"answer": {"evidence": "A paragraph."}}]}]}}',
            r"'qas\[0\]\.answers\[0\]\.answer\.evidence' must be a list of strings .*"
            r"got string 'A paragraph\.'; put the evidence paragraph\(s\) in a list",
        ),
        (
            '{"p": {"qas": [{"question_id": "q", "question": "?", "answers": '
            '[{"answer": {"unanswerable": "no"}}]}]}}',
            r"unanswerable' must be true, false or null",
        ),
        ('{"p": {"qas": [{"question_id": null, "question": "?", "answers": []}]}}', r"got null"),
        ('{"p1": {}, "p2": {}, "p1": {}}', r"paper id\(s\) \['p1'\] appear more than once"),
    ],
)
def test_malformed_files(tmp_path: Path, content: str, pattern: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(QasperFormatError, match=pattern):
        load_qasper(path)


def test_string_evidence_is_not_split_into_characters(tmp_path: Path) -> None:
    paper = json.loads(json.dumps(P1))
    paper["qas"][0]["answers"][0]["answer"]["evidence"] = "The encoder reads text."
    path = write_json(tmp_path / "bad.json", {"p1": paper})
    with pytest.raises(QasperFormatError) as info:
        load_qasper(path)
    msg = str(info.value)
    assert str(path) in msg
    assert "paper 'p1'" in msg
    assert "qas[0].answers[0].answer.evidence" in msg
    assert "got string" in msg


def test_errors_are_value_errors_of_the_package(tmp_path: Path) -> None:
    path = write_json(tmp_path / "bad.json", {"p": {"title": 3}})
    with pytest.raises(DataFormatError):
        load_qasper(path)
    assert issubclass(QasperFormatError, ValueError)


def test_invalid_utf8_names_file_byte_and_line(tmp_path: Path) -> None:
    path = tmp_path / "latin1.json"
    path.write_bytes(b'{"p": {\n"title": "Caf\xe9"}}')
    with pytest.raises(
        QasperFormatError, match=r"latin1\.json: not valid UTF-8: byte 21 \(line 2\)"
    ):
        load_qasper(path)


def test_negative_or_bad_max_papers(mini: Path) -> None:
    with pytest.raises(ValueError, match="max_papers must be None or an integer >= 0, got -1"):
        load_qasper(mini, max_papers=-1)
    with pytest.raises(ValueError, match="max_papers"):
        load_qasper(mini, max_papers=True)
    assert load_qasper(mini, max_papers=0).stats.papers == 0


def test_errors_before_any_paper_is_built(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[str] = []
    real = qasper._PaperText

    def spy(pid: str, *args: Any) -> Any:
        built.append(pid)
        return real(pid, *args)

    monkeypatch.setattr(qasper, "_PaperText", spy)
    path = write_json(tmp_path / "bad.json", {"p1": P1, "p2": {"qas": 3}})
    with pytest.raises(QasperFormatError, match="'qas' must be a list"):
        load_qasper(path)
    assert built == []


# -- hostile shapes: mutate a valid paper ------------------------------------

_MINI_PAPER: dict[str, Any] = {
    "title": "T",
    "abstract": "We study x.",
    "full_text": [
        {"section_name": "Intro ::: Part", "paragraphs": ["X is y.", ""]},
        {"section_name": None, "paragraphs": ["More."]},
    ],
    "qas": [
        {
            "question": "What is x?",
            "question_id": "q1",
            "answers": [
                {"answer": {"unanswerable": False, "evidence": ["X is y.", "FLOAT SELECTED: T"]}},
                {"answer": {"unanswerable": True, "evidence": []}},
            ],
        }
    ],
    "figures_and_tables": [{"caption": "Table 1", "file": "t.png"}],
}

_json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=4),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=5,
)


def _paths(value: object, prefix: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            out += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            out += _paths(item, (*prefix, i))
    return out


_PATHS = _paths({"p1": _MINI_PAPER})[1:]


def _mutate(doc: Any, path: tuple[str | int, ...], new: object, drop: bool) -> None:
    """Replace (or drop) the value at ``path`` if it is still there."""
    parent = doc
    for key in path[:-1]:
        try:
            parent = parent[key]
        except (KeyError, IndexError, TypeError):
            return
    last = path[-1]
    if (isinstance(parent, dict) and isinstance(last, str) and last in parent) or (
        isinstance(parent, list) and isinstance(last, int) and last < len(parent)
    ):
        if drop:
            del parent[last]
        else:
            parent[last] = new


@settings(max_examples=50, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(_PATHS), _json_values, st.booleans()), min_size=1, max_size=3
    )
)
def test_mutated_papers_load_or_raise_the_documented_error(
    mutations: list[tuple[tuple[str | int, ...], object, bool]],
) -> None:
    doc = json.loads(json.dumps({"p1": _MINI_PAPER}))
    for path, new, drop in mutations:
        _mutate(doc, path, new, drop)
    with tempfile.TemporaryDirectory() as tmp:
        path = write_json(Path(tmp, "mutated.json"), doc)
        try:
            ds = load_qasper(path)
        except QasperFormatError as err:  # the documented error, naming the file
            error = str(err)
        else:
            error = ""
    if error:
        assert str(path) in error
        return
    for q in ds.queries:
        assert q.evidence
        for d, start, end in q.evidence:
            assert 0 <= start < end <= len(ds.corpus[d].text)


def test_duplicate_question_ids(tmp_path: Path) -> None:
    path = write_json(tmp_path / "dup.json", {"p1": P1, "p3": P1})
    with pytest.raises(QasperFormatError, match="duplicate question_id 'q1'"):
        load_qasper(path)


def test_unknown_split_or_missing_file(tmp_path: Path) -> None:
    with pytest.raises(DataNotFoundError, match=r"known: dev, test, train"):
        load_qasper("validation")
    with pytest.raises(DataNotFoundError):
        load_qasper(tmp_path / "absent.json")


def test_pins() -> None:
    for split, member in [
        ("train", "qasper-train-v0.3.json"),
        ("dev", "qasper-dev-v0.3.json"),
        ("test", "qasper-test-v0.3.json"),
    ]:
        remote = QASPER_DOWNLOADS[split]
        assert remote.member == member
        assert remote.url.startswith("https://qasper-dataset.s3.us-west-2.amazonaws.com/")
        assert (remote.algorithm, len(remote.digest)) == ("sha256", 64)
    assert QASPER_DOWNLOADS["train"].archive == "qasper-train-dev-v0.3.tgz"
    assert QASPER_DOWNLOADS["test"].archive == "qasper-test-and-evaluator-v0.3.tgz"


def test_module_exports() -> None:
    assert set(qasper.__all__) <= set(dir(qasper))


# -- downloading -------------------------------------------------------------


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("HIERRET_DATA", str(tmp_path / "home"))
    return tmp_path / "home"


def train_dev_tgz() -> bytes:
    """An archive laid out like the official one: both JSON files at the top."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, papers in [
            ("qasper-train-v0.3.json", {"p1": P1}),
            ("qasper-dev-v0.3.json", {"p2": P2}),
        ]:
            data = json.dumps(papers).encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _pin(monkeypatch: pytest.MonkeyPatch, url: str, data: bytes) -> None:
    digest = hashlib.sha256(data).hexdigest()
    for split in ("train", "dev"):
        member = f"qasper-{split}-v0.3.json"
        monkeypatch.setitem(QASPER_DOWNLOADS, split, QasperRemote(url, digest, "sha256", member))


def test_download_once_then_cache(
    server: Server, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = train_dev_tgz()
    server.files["/qasper-train-dev-v0.3.tgz"] = data
    _pin(monkeypatch, server.base + "/qasper-train-dev-v0.3.tgz", data)
    train = load_qasper("train", progress=False)
    assert server.hits == ["/qasper-train-dev-v0.3.tgz"]
    assert (train.name, train.corpus.name, [d.id for d in train.corpus]) == (
        "train",
        "qasper-train",
        ["p1"],
    )
    assert train.stats.kept == 4
    assert sorted(p.name for p in (home / "qasper").iterdir()) == [
        "qasper-train-dev-v0.3",
        "qasper-train-dev-v0.3.tgz",
    ]
    dev = load_qasper("dev", progress=False)  # same archive: no second request
    assert server.hits == ["/qasper-train-dev-v0.3.tgz"]
    assert [d.id for d in dev.corpus] == ["p2"]
    assert load_qasper("train", download=False).identity() == train.identity()


def test_split_file_placed_by_hand(home: Path) -> None:
    (home / "qasper").mkdir(parents=True)
    write_json(home / "qasper" / "qasper-test-v0.3.json", {"p2": P2})
    ds = load_qasper("test", download=False)
    assert (ds.name, len(ds.queries)) == ("test", 1)


def test_checksum_mismatch_keeps_nothing(
    server: Server, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = train_dev_tgz()
    server.files["/qasper-train-dev-v0.3.tgz"] = data + b"tampered"
    _pin(monkeypatch, server.base + "/qasper-train-dev-v0.3.tgz", data)
    with pytest.raises(DataNotFoundError, match="checksum mismatch") as info:
        load_qasper("train", progress=False)
    assert isinstance(info.value.__cause__, ChecksumError)
    assert "HIERRET_DATA" in str(info.value)
    assert list((home / "qasper").iterdir()) == []


def test_absent_without_download_says_where_it_looked(home: Path) -> None:
    with pytest.raises(DataNotFoundError) as info:
        load_qasper("dev", download=False)
    msg = str(info.value)
    assert str(home / "qasper" / "qasper-dev-v0.3.json") in msg
    assert "HIERRET_DATA" in msg
    assert "qasper-train-dev-v0.3.tgz" in msg
    assert not home.exists()


# -- the real sample ----------------------------------------------------------


def test_real_sample(real_qasper_sample: Path) -> None:
    path = real_qasper_sample
    ds = load_qasper(path)
    assert asdict(ds.stats) == {
        "papers": 10,
        "questions": 51,
        "kept": 43,
        "unanswerable": 6,
        "figure_table_only": 1,
        "no_located_evidence": 1,
        "evidence_total": 78,
        "evidence_located": 77,
        "evidence_figure_table": 11,
        "blank_paragraphs": 140,
        "stray_headings": 0,
    }
    raw = json.loads(path.read_text(encoding="utf-8"))
    for q in ds.queries:
        for doc, start, end in q.evidence:
            cut = ds.corpus[doc].text[start:end]
            paper = raw[doc]
            assert cut == paper["abstract"] or any(
                cut in s["paragraphs"] for s in paper["full_text"]
            )
    # with every heading style, "5 Public House Las Vegas ..." in 1805.02400 becomes a
    # numbered heading; with the Markdown the loader writes, it does not
    assert sum(len(s) for s in build_hierarchy(ds.corpus).sections.values()) == 166
    h = build_hierarchy(ds.corpus, heading_styles=HEADING_STYLES)
    assert sum(len(s) for s in h.sections.values()) == 165
    secs = h.sections["1909.00694"]
    assert len(secs) == 26
    assert max(s.depth for s in secs) == 4
    by_id = {s.id: s.path[1:] for s in secs}
    assert by_id["1909.00694#s1.4.2.3"] == (
        "Proposed Method",
        "Discourse Relation-Based Event Pairs",
        "CO (Concession Pairs)",
    )
    assert by_id["1909.00694#s1.8.2.2"] == ("Appendices", "Settings of Encoder", "BERT")


def test_archive_cut_short_is_named_and_not_kept(
    server: Server, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A .tgz that matches its pin but ends early used to raise a bare EOFError."""
    cut = train_dev_tgz()[:-40]
    server.files["/qasper-train-dev-v0.3.tgz"] = cut
    _pin(monkeypatch, server.base + "/qasper-train-dev-v0.3.tgz", cut)
    with pytest.raises(DataNotFoundError) as info:
        load_qasper("train", progress=False)
    msg = str(info.value)
    assert str(home / "qasper" / "qasper-train-dev-v0.3.tgz") in msg
    assert "deleted from the download cache" in msg
    assert "EOFError" in msg
    assert isinstance(info.value.__cause__, CorruptArchiveError)
    assert list((home / "qasper").iterdir()) == []  # no archive, no half extraction


# --- structures that would load as something else are refused; drops are counted ----------


@pytest.mark.parametrize(
    ("papers", "pattern"),
    [
        ({}, r"holds no papers.*right file"),
        ({"data": {"p1": P1, "p2": P2}}, r"paper 'data' has none of a paper's fields.*wrapped"),
        ({"p1": P1, "meta": {"version": "0.3"}}, r"paper 'meta' has none of a paper's fields"),
    ],
)
def test_a_file_that_is_not_papers_is_refused(tmp_path: Path, papers: object, pattern: str) -> None:
    path = write_json(tmp_path / "odd.json", papers)
    with pytest.raises(QasperFormatError, match=pattern) as err:
        load_qasper(path)
    assert str(path) in str(err.value)


@pytest.mark.parametrize("field", ["evidence", "unanswerable", "extractive_spans"])
def test_an_answer_field_beside_answer_is_refused(tmp_path: Path, field: str) -> None:
    annotation = answer("The encoder reads text.")
    annotation[field] = annotation["answer"].pop(field)
    paper = {**P1, "qas": [qa("q1", annotation), *P1["qas"][1:]]}
    with pytest.raises(
        QasperFormatError, match=rf"'qas\[0\]\.answers\[0\]\.{field}' must be inside.*move"
    ):
        load_qasper(write_json(tmp_path / "beside.json", {"p1": paper}))


def test_a_file_whose_every_question_is_dropped_is_refused(tmp_path: Path) -> None:
    paper = {**P1, "qas": [qa("q2", answer(unanswerable=True)), qa("q5", answer("Nowhere."))]}
    with pytest.raises(QasperFormatError, match=r"every one of its 2 question\(s\) was dropped"):
        load_qasper(write_json(tmp_path / "none.json", {"p1": paper}))


def test_dropped_questions_are_counted_by_reason(mini: Path) -> None:
    ds = load_qasper(mini)
    assert ds.dropped == {
        "questions unanswerable": ds.stats.unanswerable,
        "questions with figure/table evidence only": ds.stats.figure_table_only,
        "questions without located evidence": ds.stats.no_located_evidence,
    }
    assert sum(ds.dropped.values()) == ds.stats.questions - ds.stats.kept > 0
