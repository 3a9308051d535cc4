"""Tests for the BEIR loader: parsing, validation, download-and-cache, real SciFact."""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import socket
import tempfile
import warnings
import zipfile
from pathlib import Path

import pytest
from _toy import BEIR_CORPUS as CORPUS
from _toy import BEIR_QUERIES as QUERIES
from _toy import BEIR_TEST_QRELS as TEST_QRELS
from _toy import jsonl as _jsonl
from _toy import write_beir
from conftest import Server
from hypothesis import event, given, settings
from hypothesis import strategies as st

from hierret.datasets import beir
from hierret.datasets.beir import (
    BEIR_DOWNLOADS,
    BeirDataWarning,
    BeirFormatError,
    Remote,
    load_beir,
)
from hierret.datasets.download import (
    ChecksumError,
    CorruptArchiveError,
    DataNotFoundError,
    DownloadError,
)

# -- reading a folder --------------------------------------------------------


def test_load_folder(tmp_path: Path) -> None:
    ds = load_beir(write_beir(tmp_path / "mini"))
    assert (ds.name, ds.split, ds.path) == ("mini", "test", tmp_path / "mini")
    assert ds.corpus.name == "beir-mini"
    assert [d.id for d in ds.corpus] == ["d1", "d2", "d3"]
    assert ds.corpus["d1"].title == "Cats"
    assert ds.corpus["d1"].text == "Cats\n\nCats purr when content."
    assert ds.corpus["d2"].text == "Dogs bark at strangers."  # no title: text only
    # only judged queries, in queries.jsonl order
    assert [q.id for q in ds.queries] == ["q1", "q2"]
    assert ds.queries[0].text == "Which animal purrs?"
    # graded qrels kept as given, zeros included
    assert ds.qrels == {"q2": {"d3": 1, "d1": 1}, "q1": {"d1": 2, "d2": 0}}
    assert ds.n_qrels == 4
    assert ds.dropped_qrels == 0
    # evidence: whole documents judged > 0
    q1, q2 = ds.queries
    assert q1.evidence == (("d1", 0, len(ds.corpus["d1"].text)),)
    assert q2.evidence == (("d3", 0, 26), ("d1", 0, 29))
    for q in ds.queries:
        for doc, start, end in q.evidence:
            assert ds.corpus[doc].text[start:end] == ds.corpus[doc].text
    # a whole document judged: no section or passage of it is judged relevant by it
    assert {q.level for q in ds.queries} == {"documents"}
    assert not any(q.judged_at("sections") or q.judged_at("passages") for q in ds.queries)


def test_identity_is_stable_and_split_aware(tmp_path: Path) -> None:
    root = write_beir(tmp_path / "mini")
    ident = load_beir(root).identity()
    assert ident == load_beir(str(root)).identity()
    assert ident["dataset"] == "beir/mini"
    assert ident["queries"] == 2
    assert ident["qrels_pairs"] == 4
    assert str(tmp_path) not in json.dumps(ident)
    train = load_beir(root, "train")
    assert [q.id for q in train.queries] == ["q3"]
    assert train.identity()["qrels_fingerprint"] != ident["qrels_fingerprint"]


def test_missing_files(tmp_path: Path) -> None:
    root = write_beir(tmp_path / "mini")
    with pytest.raises(BeirFormatError, match=r"dev\.tsv.*splits present: test, train"):
        load_beir(root, "dev")
    (root / "queries.jsonl").unlink()
    with pytest.raises(BeirFormatError, match=r"missing: .*queries\.jsonl"):
        load_beir(root)


D1 = '{"_id": "d1", "text": "a"}\n'
HEADER = "query-id\tcorpus-id\tscore\n"


@pytest.mark.parametrize(
    ("key", "text", "pattern"),
    [
        ("corpus", D1 + '{"_id": "d2", "text": \n', r"corpus\.jsonl:2: malformed JSON"),
        ("corpus", D1 + "\n[1, 2]\n", r"corpus\.jsonl:3: expected a JSON object"),
        ("corpus", '{"_id": "d1", "title": "t"}\n', r"corpus\.jsonl:1: missing field 'text'"),
        ("corpus", D1 + D1, r"corpus\.jsonl:2: duplicate _id 'd1' \(first at line 1\)"),
        ("corpus", "", r"no documents"),
        ("queries", '{"text": "no id"}\n', r"queries\.jsonl:1: missing field '_id'"),
        ("queries", '{"_id": "q1", "text": ["x"]}\n', r"queries\.jsonl:1: field 'text' must be"),
        ("test", HEADER + "q1\td1\n", r"test\.tsv:2: expected 3 tab-separated"),
        ("test", HEADER + "q1\td1\thigh\n", r"test\.tsv:2: score 'high'"),
        ("test", HEADER, r"no judgments"),
        ("test", "q1\td1\tyes\nq1\td2\t1\n", r"test\.tsv:1: score 'yes' is not an integer"),
        ("test", "q1 d1 1\n", r"test\.tsv:1: expected 3 tab-separated .*query-id<TAB>"),
        ("test", HEADER + "q1\td1\t1\nquery-id\tcorpus-id\tscore\n", r"test\.tsv:3: score"),
    ],
)
def test_malformed_files_name_file_and_line(
    tmp_path: Path, key: str, text: str, pattern: str
) -> None:
    root = write_beir(tmp_path / "mini", **{key: text})
    with pytest.raises(BeirFormatError, match=pattern):
        load_beir(root)


def test_invalid_utf8_names_file_and_line(tmp_path: Path) -> None:
    root = write_beir(tmp_path / "mini")
    with (root / "corpus.jsonl").open("ab") as f:
        f.write(b'{"_id": "d4", "text": "Caf\xe9"}\n')
    with pytest.raises(BeirFormatError, match=r"corpus\.jsonl:4: not valid UTF-8") as info:
        load_beir(root)
    assert isinstance(info.value, ValueError)
    assert "iconv -f CP1252 -t UTF-8" in str(info.value)
    (root / "qrels" / "test.tsv").write_bytes(TEST_QRELS.encode() + b"q1\td\xff\t1\n")
    (root / "corpus.jsonl").write_text(_jsonl(CORPUS))  # type: ignore[arg-type]
    with pytest.raises(BeirFormatError, match=r"test\.tsv:6: not valid UTF-8"):
        load_beir(root)


def test_documents_without_text_are_dropped_with_one_warning(tmp_path: Path) -> None:
    rows = [*CORPUS, {"_id": "d4", "title": "", "text": ""}, {"_id": "d5", "text": " \n"}]
    qrels = TEST_QRELS + "q1\td4\t1\nq2\td4\t1\nq2\td5\t0\n"
    root = write_beir(tmp_path / "mini", corpus=_jsonl(rows), test=qrels)  # type: ignore[arg-type]
    with pytest.warns(BeirDataWarning) as record:
        ds = load_beir(root)
    assert len(record) == 1
    msg = str(record[0].message)
    assert "dropped 2 document(s) with no text" in msg
    assert "3 judgment(s) in test.tsv named them" in msg
    assert [d.id for d in ds.corpus] == ["d1", "d2", "d3"]
    assert ds.dropped_qrels == 3
    assert {d for q in ds.queries for d, _, _ in q.evidence} == {"d1", "d3"}
    assert ds.qrels == {"q2": {"d3": 1, "d1": 1}, "q1": {"d1": 2, "d2": 0}}


@pytest.mark.parametrize(
    "header", ["query-id\tcorpus-id\tscore", "query_id\tdoc_id\trelevance", "QID\tDOCID\tScore"]
)
def test_only_a_real_header_is_skipped(tmp_path: Path, header: str) -> None:
    root = write_beir(tmp_path / "mini", test=TEST_QRELS.replace(HEADER.strip(), header))
    assert load_beir(root).n_qrels == 4
    headerless = TEST_QRELS.removeprefix(HEADER)
    assert load_beir(write_beir(tmp_path / "bare", test=headerless)).n_qrels == 4


def test_unknown_ids_in_qrels_are_dropped_and_reported(tmp_path: Path) -> None:
    qrels = TEST_QRELS + "q9\td1\t1\nq1\td9\t1\nq1\td8\t1\n"
    root = write_beir(tmp_path / "mini", test=qrels)
    with pytest.warns(BeirDataWarning, match=r"1 name unknown queries.*2 name unknown documents"):
        ds = load_beir(root)
    assert ds.dropped_qrels == 3
    assert ds.n_qrels == 4


def test_qrels_with_no_known_ids_raise(tmp_path: Path) -> None:
    root = write_beir(tmp_path / "mini", test="query-id\tcorpus-id\tscore\nq9\td1\t1\nq1\tzz\t1\n")
    with pytest.raises(BeirFormatError, match=r"none of the 2 judgments"):
        load_beir(root)


def test_unknown_name_or_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(DataNotFoundError, match=r"known: .*scifact"):
        load_beir("no-such-dataset")
    with pytest.raises(DataNotFoundError):
        load_beir(tmp_path / "absent")


def test_absent_without_download_says_where_it_looked(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HIERRET_DATA", str(tmp_path / "home"))
    with pytest.raises(DataNotFoundError) as info:
        load_beir("scifact", download=False)
    msg = str(info.value)
    assert str(tmp_path / "home" / "scifact") in msg
    assert "HIERRET_DATA" in msg
    assert not (tmp_path / "home").exists()


def test_name_found_under_data_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    write_beir(tmp_path / "home" / "scifact")
    monkeypatch.setenv("HIERRET_DATA", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    ds = load_beir("scifact", download=False)
    assert ds.name == "scifact"
    assert ds.corpus.name == "beir-scifact"


def test_scifact_pin() -> None:
    remote = BEIR_DOWNLOADS["scifact"]
    assert remote.url.endswith("/thakur/BEIR/datasets/scifact.zip")
    assert (remote.algorithm, remote.digest) == ("md5", "5f7d1de60b170fc8027bb7898e2efca1")


# -- downloading -------------------------------------------------------------


def mini_scifact_zip(tmp_path: Path) -> bytes:
    """A zip laid out like the official one: ``scifact/corpus.jsonl`` etc."""
    root = write_beir(tmp_path / "build" / "scifact")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for path in sorted(root.rglob("*")):
            zf.write(path, path.relative_to(root.parent).as_posix())
    return buf.getvalue()


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("HIERRET_DATA", str(tmp_path / "home"))
    return tmp_path / "home"


def _pin(monkeypatch: pytest.MonkeyPatch, url: str, data: bytes, algorithm: str = "md5") -> None:
    digest = hashlib.new(algorithm, data).hexdigest()
    monkeypatch.setitem(BEIR_DOWNLOADS, "scifact", Remote(url, digest, algorithm))  # type: ignore[arg-type]


def test_download_once_then_cache(
    server: Server, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = mini_scifact_zip(tmp_path)
    server.files["/scifact.zip"] = data
    _pin(monkeypatch, server.base + "/scifact.zip", data)
    ds = load_beir("scifact", progress=False)
    assert server.hits == ["/scifact.zip"]
    assert ds.path == home / "scifact"
    assert [q.id for q in ds.queries] == ["q1", "q2"]
    assert sorted(p.name for p in home.iterdir()) == ["scifact", "scifact.zip"]
    again = load_beir("scifact", progress=False)
    assert server.hits == ["/scifact.zip"]  # served from cache
    assert again.identity() == ds.identity()


def test_cached_archive_verified_before_use(
    server: Server, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = mini_scifact_zip(tmp_path)
    server.files["/scifact.zip"] = data
    _pin(monkeypatch, server.base + "/scifact.zip", data, "sha256")
    home.mkdir()
    (home / "scifact.zip").write_bytes(data)  # a good archive: no request
    load_beir("scifact", progress=False)
    assert server.hits == []
    (home / "scifact.zip").write_bytes(data[:-10])  # corrupt archive: fetched again
    shutil.rmtree(home / "scifact")
    ds = load_beir("scifact", progress=False)
    assert server.hits == ["/scifact.zip"]
    assert len(ds.corpus) == 3
    assert (home / "scifact.zip").read_bytes() == data


def test_checksum_mismatch_keeps_nothing(
    server: Server, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = mini_scifact_zip(tmp_path)
    server.files["/scifact.zip"] = data + b"tampered"
    _pin(monkeypatch, server.base + "/scifact.zip", data)
    with pytest.raises(DataNotFoundError) as info:
        load_beir("scifact", progress=False)
    assert isinstance(info.value.__cause__, ChecksumError)
    msg = str(info.value)
    assert "checksum mismatch" in msg
    assert hashlib.md5(data).hexdigest() in msg
    assert str(home / "scifact") in msg
    assert "HIERRET_DATA" in msg
    assert list(home.iterdir()) == []


def test_download_failure_says_how_to_work_offline(
    server: Server, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _pin(monkeypatch, server.base + "/missing.zip", b"")
    with pytest.raises(DataNotFoundError, match="HTTP 404") as info:
        load_beir("scifact", progress=False)
    assert isinstance(info.value.__cause__, DownloadError)
    assert server.base + "/missing.zip" in str(info.value)
    assert "HIERRET_DATA" in str(info.value)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    _pin(monkeypatch, f"http://127.0.0.1:{port}/scifact.zip", b"")
    with pytest.raises(DataNotFoundError, match="could not download"):
        load_beir("scifact", progress=False)
    assert list(home.iterdir()) == []


def test_module_exports() -> None:
    assert set(beir.__all__) <= set(dir(beir))


# -- the real SciFact ---------------------------------------------------------


@pytest.mark.usefixtures("real_scifact")
def test_real_scifact_counts() -> None:
    ds = load_beir("scifact", "test", download=False)
    assert len(ds.corpus) == 5183
    assert len(ds.queries) == 300
    assert ds.n_qrels == 339
    assert ds.dropped_qrels == 0
    assert all(q.evidence for q in ds.queries)
    assert sum(len(q.evidence) for q in ds.queries) == 339


# -- random shapes (property test) -----------------------------------------------------------

_json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=5,
)


@st.composite
def _rows(draw: st.DrawFn, base: list[dict[str, object]]) -> str:
    """JSON lines: the base rows, each kept, given one field of any JSON value, one field
    dropped, or replaced by any JSON value; sometimes a line that is not JSON at all."""
    lines = []
    for row in base:
        row = dict(row)
        how = draw(st.sampled_from(["keep"] * 10 + ["field", "drop", "value", "garbage"]))
        key = draw(st.sampled_from(["_id", "title", "text"]))
        if how == "field":
            row[key] = draw(_json_values)
        elif how == "drop":
            row.pop(key, None)
        lines.append(
            json.dumps(draw(_json_values))
            if how == "value"
            else draw(st.text(max_size=8)).replace("\n", " ")
            if how == "garbage"
            else json.dumps(row)
        )
    return "".join(line + "\n" for line in lines)


_qrel_lines = st.one_of(
    st.sampled_from(["q1\td1\t1", "q2\td1\t0", "q1\td3\t2"]),
    st.sampled_from(
        [
            "q1\td1\t1",
            "q2\td3\t2",
            "q1\td2\t0",
            "q9\td1\t1",
            "q1\td9\t1",
            "query-id\tcorpus-id\tscore",
            "q1\td1\t-1",
        ]
    ),
    st.sampled_from(["q1\td1", "q1\td1\t1\tx", ""]),
    st.lists(st.text(alphabet="qd12 .x-", max_size=4), min_size=1, max_size=4).map("\t".join),
)
_qrels = st.lists(_qrel_lines, max_size=6).map(  # one judgment that holds, then anything
    lambda ls: "".join(x + "\n" for x in ["q2\td3\t1", *ls])
)


@settings(max_examples=60, deadline=None)
@given(corpus=_rows(CORPUS), queries=_rows(QUERIES), qrels=_qrels)
def test_random_shapes_load_or_raise_the_documented_error(
    corpus: str, queries: str, qrels: str
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = write_beir(Path(tmp) / "random", corpus=corpus, queries=queries, test=qrels)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", BeirDataWarning)  # drops are said, and allowed
                ds = load_beir(root)
        except BeirFormatError as err:  # the documented error, naming the file
            error = str(err)
        else:
            error = ""
    event("refused" if error else "loaded")
    if error:
        assert str(root) in error
        return
    ids = {d.id for d in ds.corpus}
    assert all(d.text.strip() for d in ds.corpus)
    assert {q.id for q in ds.queries} == set(ds.qrels)
    assert all(set(judged) <= ids for judged in ds.qrels.values())
    for q in ds.queries:
        assert isinstance(q.text, str)
        for d, start, end in q.evidence:
            assert 0 <= start < end <= len(ds.corpus[d].text)


def test_archive_cut_short_is_named_and_not_kept(
    server: Server, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An archive that matches its pin but cannot be extracted (the pin was taken of a
    truncated upload) is a clear error, and the download cache does not keep it."""
    cut = mini_scifact_zip(tmp_path)[:-30]
    server.files["/scifact.zip"] = cut
    _pin(monkeypatch, server.base + "/scifact.zip", cut, "sha256")
    with pytest.raises(DataNotFoundError) as info:
        load_beir("scifact", progress=False)
    msg = str(info.value)
    assert str(home / "scifact.zip") in msg
    assert "deleted from the download cache" in msg
    assert isinstance(info.value.__cause__, CorruptArchiveError)
    assert sorted(p.name for p in home.iterdir()) == []


# --- one id rule in all three files: BOM, surrounding whitespace, Unicode NFC --------------


def _warn_free(root: Path) -> beir.BeirDataset:
    with warnings.catch_warnings():
        warnings.simplefilter("error", BeirDataWarning)
        return load_beir(root)


@pytest.mark.parametrize("key", ["corpus", "queries", "test"])
def test_a_bom_starting_any_file_is_dropped(tmp_path: Path, key: str) -> None:
    files = {
        "corpus": _jsonl(CORPUS),  # type: ignore[arg-type]
        "queries": _jsonl(QUERIES),  # type: ignore[arg-type]
        "test": TEST_QRELS.removeprefix(HEADER),
    }
    root = write_beir(tmp_path / "mini", **(files | {key: "\ufeff" + files[key]}))
    ds = _warn_free(root)
    assert (ds.n_qrels, ds.dropped_qrels, ds.dropped) == (4, 0, {})
    assert ds.qrels == {"q2": {"d3": 1, "d1": 1}, "q1": {"d1": 2, "d2": 0}}


@pytest.mark.parametrize(
    ("corpus_id", "qrels_id"),
    [
        ("d1 ", "d1"),
        (" d1", "d1"),
        ("d1", " d1"),
        ("d1\u00a0", "d1 "),
        ("caf\u0065\u0301", "caf\u00e9"),  # NFD in the corpus, NFC in the qrels
        ("caf\u00e9", "caf\u0065\u0301"),
    ],
)
def test_ids_match_stripped_and_nfc_on_every_side(
    tmp_path: Path, corpus_id: str, qrels_id: str
) -> None:
    rows = [{**CORPUS[0], "_id": corpus_id}, *CORPUS[1:]]
    queries = [{**QUERIES[0], "_id": " q1"}, *QUERIES[1:]]
    qrels = f"{HEADER}q1\u00a0\t{qrels_id}\t2\nq2\td3\t1\n"
    root = write_beir(
        tmp_path / "mini",
        corpus=_jsonl(rows),  # type: ignore[arg-type]
        queries=_jsonl(queries),  # type: ignore[arg-type]
        test=qrels,
    )
    ds = _warn_free(root)
    nfc = qrels_id.strip().replace("\u0065\u0301", "\u00e9")
    assert ds.queries[0].id == "q1"
    assert ds.qrels["q1"] == {nfc: 2}
    assert nfc in {d.id for d in ds.corpus}
    assert ds.dropped == {}


def test_ids_equal_under_the_rule_are_duplicates(tmp_path: Path) -> None:
    rows = [*CORPUS, {"_id": "d1 ", "text": "again"}]
    root = write_beir(tmp_path / "mini", corpus=_jsonl(rows))  # type: ignore[arg-type]
    with pytest.raises(BeirFormatError, match=r"corpus\.jsonl:4: duplicate _id 'd1 '.*NFC"):
        load_beir(root)


def test_what_is_dropped_is_counted_by_reason_and_recorded(tmp_path: Path) -> None:
    rows = [*CORPUS, {"_id": "d4", "title": "", "text": ""}]
    qrels = TEST_QRELS + "q9\td1\t1\nq1\td9\t1\nq1\td4\t1\nq1\td1\t1\n"
    root = write_beir(tmp_path / "mini", corpus=_jsonl(rows), test=qrels)  # type: ignore[arg-type]
    with pytest.warns(BeirDataWarning):
        ds = load_beir(root)
    assert ds.dropped == {
        "documents without text": 1,
        "judgments naming unknown queries": 1,
        "judgments naming unknown documents": 1,
        "judgments naming documents without text": 1,
        "judgments repeating an earlier pair (last score kept)": 1,
    }
    assert ds.dropped_qrels == 3
    assert "1 judgments naming unknown queries" in str(ds.identity()["dropped"])


def test_look_alike_ids_are_told_apart_in_the_warning(tmp_path: Path) -> None:
    qrels = TEST_QRELS + "q1\td\u200b1\t1\n"  # a zero-width space: no rule removes it
    root = write_beir(tmp_path / "mini", test=qrels)
    with pytest.warns(BeirDataWarning, match=r"'d\\u200b1'"):
        load_beir(root)
