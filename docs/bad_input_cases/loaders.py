"""Bad-input cases for the dataset loaders (Qasper, BEIR, download).

Each call writes a hostile file into a fresh temporary folder and runs the
loader. A file the loader cannot trust is a clear error naming the file, the
field and the fix; where the loader may answer (dropping what can never be
retrieved), the checks say what must be left and what must be said.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import tarfile
import tempfile
import threading
import warnings
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from bad_input_cases import Case, Facts, right
from hierret.datasets import load
from hierret.datasets import qasper as qasper_mod
from hierret.datasets.download import extract_tar, extract_zip, fetch
from hierret.datasets.folder import load_folder
from hierret.datasets.qasper import QasperRemote, load_qasper
from hierret.encoders import HashEncoder
from hierret.structure.units import Document


def _paper(evidence: object = ("X is y.",), answer: object = None) -> dict[str, Any]:
    ans = answer if answer is not None else {"unanswerable": False, "evidence": evidence}
    return {
        "title": "T",
        "abstract": "",
        "full_text": [{"section_name": "Intro", "paragraphs": ["X is y."]}],
        "qas": [{"question": "What?", "question_id": "q1", "answers": [{"answer": ans}]}],
        "figures_and_tables": [],
    }


def _qasper(content: str | bytes, **kwargs: Any) -> str:
    path = Path(tempfile.mkdtemp(), "qasper.json")
    if isinstance(content, str):
        content = content.encode()
    path.write_bytes(content)
    ds = load_qasper(path, **kwargs)
    return f"loaded {ds.stats.papers} paper(s), {len(ds.queries)} question(s)"


_D1 = b'{"_id": "d1", "title": "Cats", "text": "Cats purr."}\n'


def _beir(
    corpus: bytes | None = None,
    qrels: str | None = None,
    queries: bytes | None = None,
    first: bytes = _D1,
) -> Facts:
    root = Path(tempfile.mkdtemp())
    (root / "qrels").mkdir()
    (root / "corpus.jsonl").write_bytes(first + (corpus or b""))
    (root / "queries.jsonl").write_bytes(queries or b'{"_id": "q1", "text": "Who purrs?"}\n')
    qrels_text = qrels or "query-id\tcorpus-id\tscore\nq1\td1\t1\n"
    (root / "qrels" / "test.tsv").write_bytes(qrels_text.encode())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ds = load(root)
    heard = [str(w.message) for w in caught]
    said = "; ".join(f"warning: {w}" for w in heard)
    return Facts(
        f"loaded {len(ds.corpus)} document(s), "
        f"{sum(len(j) for j in (ds.judgments or {}).values())} judgment(s)"
        + (f" ({said})" if said else ""),
        corpus=ds.corpus,
        docs=[d.id for d in ds.corpus],
        qrels=ds.judgments,
        heard=heard,
        dropped=dict(getattr(ds, "dropped", {})),
        identity=ds.identity(),
        summary={"dropped": "", **ds.summary()},
    )


_QUOTE = "Logs are written to the var/log folder of the install."


def _loaded(path: Path) -> str:
    bundle = load(path)
    return f"loaded {len(bundle.corpus)} document(s), {len(bundle.queries)} question(s)"


def _qasper_file(papers: object) -> str:
    """Qasper ``papers`` written as a file and loaded by :func:`hierret.datasets.load`."""
    path = Path(tempfile.mkdtemp(), "qasper.json")
    path.write_text(json.dumps(papers))
    return _loaded(path)


def _beside(field: str) -> dict[str, Any]:
    """A paper whose one annotation holds ``field`` beside ``answer``, not inside it."""
    paper = _paper()
    annotation = paper["qas"][0]["answers"][0]
    annotation[field] = annotation["answer"].pop(field)
    return paper


def _folder(question: str, name: bytes = b"setup.md") -> str:
    """A folder of one document (file ``name``, as bytes) and one line of questions.jsonl."""
    root = Path(tempfile.mkdtemp(), "notes")
    root.mkdir()
    Path(os.fsdecode(os.fsencode(root) + b"/" + name)).write_text(f"# Setup\n\n{_QUOTE}\n")
    (root / "questions.jsonl").write_text(question + "\n")
    ds = load_folder(root)
    return f"loaded {len(ds.corpus)} document(s), {len(ds.queries)} question(s)"


def _folder_ids(file_name: str, named: str) -> Facts:
    """A folder document named ``file_name`` that a question names as ``named``."""
    root = Path(tempfile.mkdtemp(), "notes")
    root.mkdir()
    (root / f"{file_name}.md").write_text(f"# Setup\n\n{_QUOTE}\n")
    rows = [
        {"question": "Where?", "relevant": [named]},
        {"question": "Logs?", "evidence": [_QUOTE]},
    ]
    (root / "questions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        bundle = load(root)
    judged = [d for q in bundle.queries[:1] for d in q.evidence_docs]
    return Facts(
        f"loaded {len(bundle.corpus)} document(s), {len(bundle.queries)} question(s) judged "
        f"by {[ascii(d) for d in judged]}, {len(caught)} warning(s)",
        judged=judged,
        n_questions=len(bundle.queries),
        heard=[str(w.message) for w in caught],
    )


def _embedded(text: str) -> str:
    HashEncoder().encode_passages(["Cats purr.", text])
    return "embedded"


def _tgz() -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for i in range(3):
            data = hashlib.sha256(str(i).encode()).digest() * 600
            info = tarfile.TarInfo(f"qasper-dev-v0.3/x{i}.json")
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _flip(data: bytes) -> bytes:
    damaged = bytearray(data)
    damaged[len(damaged) // 2] ^= 0xFF
    return bytes(damaged)


def _extract(data: bytes, name: str = "data.tgz") -> str:
    folder = Path(tempfile.mkdtemp())
    (folder / name).write_bytes(data)
    unpack = extract_zip if name.endswith(".zip") else extract_tar
    unpack(folder / name, folder / "out")
    return "extracted " + ", ".join(sorted(p.name for p in (folder / "out").rglob("*")))


def _zip_cut() -> str:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("scifact/corpus.jsonl", hashlib.sha256(b"a").digest() * 600)
    return _extract(buf.getvalue()[:-30], "scifact.zip")


def _pinned_but_cut() -> Facts:
    """A Qasper split whose pinned archive (file://) ends early: what is left in the cache."""
    home, remote_dir = Path(tempfile.mkdtemp()), Path(tempfile.mkdtemp())
    cut = _tgz()[:-40]
    (remote_dir / "qasper.tgz").write_bytes(cut)
    remote = QasperRemote(
        (remote_dir / "qasper.tgz").as_uri(), hashlib.sha256(cut).hexdigest(), "sha256", "x.json"
    )
    old_env, old_remote = os.environ.get("HIERRET_DATA"), qasper_mod.QASPER_DOWNLOADS["dev"]
    os.environ["HIERRET_DATA"] = str(home)
    qasper_mod.QASPER_DOWNLOADS["dev"] = remote
    refused: BaseException | None = None
    try:
        load_qasper("dev", progress=False)
    except OSError as err:
        refused = err
    finally:
        qasper_mod.QASPER_DOWNLOADS["dev"] = old_remote
        if old_env is None:
            del os.environ["HIERRET_DATA"]
        else:
            os.environ["HIERRET_DATA"] = old_env
    left = sorted(p.name for p in (home / "qasper").iterdir())
    return Facts(f"left in the download cache: {left or 'nothing'}", refused=refused, left=left)


def _drip() -> str:
    """Fetch from a local server that sends one byte every 0.2 s, with a 1 s deadline."""
    stop = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Length", "10000")
            self.end_headers()
            for _ in range(25):  # stops by itself after 5 s
                if stop.wait(0.2):
                    return
                try:
                    self.wfile.write(b"x")
                    self.wfile.flush()
                except OSError:
                    return

        def log_message(self, fmt: str, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05})
    thread.daemon = True
    thread.start()
    dest = Path(tempfile.mkdtemp(), "file.bin")
    try:
        fetch(
            f"http://127.0.0.1:{httpd.server_address[1]}/file.bin",
            hashlib.sha256(b"").hexdigest(),
            dest,
            progress=False,
            timeout=5,
            deadline=1,
        )
    finally:
        stop.set()
        httpd.shutdown()
        httpd.server_close()
    return "downloaded"  # pragma: no cover - the deadline raises


_D2 = b'{"_id": "d2", "title": "Dogs", "text": "Dogs bark."}\n'
_NO_LOSS = right(
    "both judgments kept, nothing dropped, no warning",
    lambda f: f.qrels == {"q1": {"d1": 1, "d2": 1}} and f.dropped == {} and f.heard == [],
)


def _counted(reason: str) -> tuple[Any, ...]:
    return (
        right(
            f"the bundle counts it ({reason}: 1)",
            lambda f: f.dropped == {reason: 1} and reason in str(f.identity.get("dropped")),
        ),
        right("the summary shows it", lambda f: reason in str(f.summary["dropped"])),
        right("a warning names it", lambda f: len(f.heard) == 1),
    )


_NFD = "caf\u0065\u0301"
_NFC = "caf\u00e9"

CASES: list[Case] = [
    (
        'Qasper file of papers wrapped in one more object ({"data": {papers}})',
        lambda: _qasper_file({"data": {"p1": _paper(), "p2": _paper()}}),
    ),
    ("Qasper file holding no papers ({})", lambda: _qasper_file({})),
    (
        "Qasper file with a metadata object beside its papers",
        lambda: _qasper_file({"p1": _paper(), "meta": {"version": "0.3"}}),
    ),
    (
        "Qasper annotation whose evidence sits beside 'answer', not inside it",
        lambda: _qasper_file({"p1": _beside("evidence")}),
    ),
    (
        "Qasper annotation whose 'unanswerable' sits beside 'answer'",
        lambda: _qasper_file({"p1": _beside("unanswerable")}),
    ),
    (
        "Qasper file whose every question is unanswerable",
        lambda: _qasper_file({"p1": _paper(answer={"unanswerable": True, "evidence": []})}),
    ),
    (
        "BEIR headerless qrels file starting with a UTF-8 BOM",
        lambda: _beir(_D2, qrels="\ufeffq1\td1\t1\nq1\td2\t1\n"),
        _NO_LOSS,
    ),
    (
        "BEIR corpus.jsonl and queries.jsonl starting with a UTF-8 BOM",
        lambda: _beir(
            _D2,
            first=b"\xef\xbb\xbf" + _D1,
            queries=b'\xef\xbb\xbf{"_id": "q1", "text": "Who purrs?"}\n',
            qrels="q1\td1\t1\nq1\td2\t1\n",
        ),
        _NO_LOSS,
    ),
    (
        'BEIR corpus id "d1 " (a trailing space) judged as "d1" in the qrels',
        lambda: _beir(_D2, first=_D1.replace(b'"d1"', b'"d1 "'), qrels="q1\td1\t1\nq1\td2\t1\n"),
        _NO_LOSS,
    ),
    (
        'BEIR query id " q1" in queries.jsonl, "q1 " in the qrels',
        lambda: _beir(
            _D2,
            queries=b'{"_id": " q1", "text": "Who purrs?"}\n{"_id": "q2", "text": "Who barks?"}\n',
            qrels="q1 \td1\t1\nq2\td2\t1\n",
        ),
        right(
            "both judgments kept, nothing dropped, no warning",
            lambda f: (
                f.qrels == {"q1": {"d1": 1}, "q2": {"d2": 1}} and f.dropped == {} and f.heard == []
            ),
        ),
    ),
    (
        "BEIR corpus id in NFD (e + combining accent), qrels id in NFC",
        lambda: _beir(
            _D2,
            first=_D1.replace(b'"d1"', json.dumps(_NFD).encode()),
            qrels=f"q1\t{_NFC}\t1\nq1\td2\t1\n",
        ),
        right(
            "both judgments kept (one under the NFC id), nothing dropped, no warning",
            lambda f: f.qrels == {"q1": {_NFC: 1, "d2": 1}} and f.dropped == {} and f.heard == [],
        ),
    ),
    (
        'BEIR corpus with ids "d1" and "d1 " (one id once stripped)',
        lambda: _beir(corpus=b'{"_id": "d1 ", "text": "Dogs bark."}\n'),
    ),
    ("BEIR corpus.jsonl that is empty", lambda: _beir(first=b"")),
    (
        "BEIR qrels judging a question queries.jsonl lost",
        lambda: _beir(qrels="q1\td1\t1\nq7\td1\t1\n"),
        _counted("judgments naming unknown queries"),
    ),
    (
        "BEIR qrels judging a document corpus.jsonl lost",
        lambda: _beir(qrels="q1\td1\t1\nq1\td7\t2\n"),
        _counted("judgments naming unknown documents"),
    ),
    (
        "folder document named in NFD (as macOS writes it), named in NFC by a question",
        lambda: _folder_ids(_NFD, _NFC),
        right(
            "the question is judged by that document, no warning",
            lambda f: f.judged == [_NFC] and f.n_questions == 2 and f.heard == [],
        ),
    ),
    (
        "Qasper answer whose evidence is a string, not a list",
        lambda: _qasper(json.dumps({"p1": _paper(evidence="X is y.")})),
    ),
    (
        "Qasper annotation whose answer is a string, not an object",
        lambda: _qasper(json.dumps({"p1": _paper(answer="yes")})),
    ),
    (
        "Qasper figure caption that is a number",
        lambda: _qasper(json.dumps({"p1": {**_paper(), "figures_and_tables": [{"caption": 1}]}})),
    ),
    (
        "Qasper file with the same paper id twice (merged files)",
        lambda: _qasper(f'{{"p1": {json.dumps(_paper())}, "p1": {json.dumps(_paper())}}}'),
    ),
    (
        "Qasper load with max_papers=-1",
        lambda: _qasper(json.dumps({"p1": _paper()}), max_papers=-1),
    ),
    (
        "Qasper file in Latin-1 (invalid UTF-8)",
        lambda: _qasper(json.dumps({"p1": _paper()}).encode().replace(b'"T"', b'"Caf\xe9"')),
    ),
    (
        "BEIR corpus.jsonl line in Latin-1 (invalid UTF-8)",
        lambda: _beir(corpus=b'{"_id": "d2", "text": "Caf\xe9"}\n'),
    ),
    (
        "BEIR document with empty title and text, judged relevant",
        lambda: _beir(
            corpus=b'{"_id": "d2", "title": "", "text": ""}\n',
            qrels="query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t1\n",
        ),
        (
            right(
                "d1 and its judgment are kept",
                lambda f: f.docs == ["d1"] and f.qrels == {"q1": {"d1": 1}},
            ),
            right(
                "one warning names the dropped document and the dropped judgment",
                lambda f: (
                    len(f.heard) == 1 and "'d2'" in f.heard[0] and "1 judgment(s)" in f.heard[0]
                ),
            ),
        ),
    ),
    (
        "BEIR corpus.jsonl line that is a JSON list, not an object",
        lambda: _beir(corpus=b'["d2", "Dogs bark."]\n'),
    ),
    (
        "BEIR qrels judging one pair twice, with scores 1 and 2",
        lambda: _beir(qrels="query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td1\t2\n"),
        (
            right("one judgment, the last score (2)", lambda f: f.qrels == {"q1": {"d1": 2}}),
            right(
                "a warning says a pair repeats and which score is kept",
                lambda f: (
                    len(f.heard) == 1 and "repeat" in f.heard[0] and "last score kept" in f.heard[0]
                ),
            ),
        ),
    ),
    (
        "BEIR qrels whose first line is a malformed judgment, not a header",
        lambda: _beir(qrels="q1\td1\tyes\nq1\td1\t1\n"),
    ),
    (
        "Download from a server that drips one byte every 0.2 s (deadline 1 s)",
        _drip,
    ),
    (
        "BEIR corpus.jsonl text with a lone surrogate escape (\\ud800: half of a pair)",
        lambda: _beir(corpus=b'{"_id": "d2", "text": "Dogs \\ud800 bark."}\n'),
    ),
    (
        "BEIR corpus.jsonl _id with a lone low surrogate (\\uDC00, upper-case hex)",
        lambda: _beir(corpus=b'{"_id": "d\\uDC00", "text": "Dogs bark."}\n'),
    ),
    (
        "BEIR queries.jsonl question holding the first half of an emoji (\\ud83d)",
        lambda: _beir(queries=b'{"_id": "q1", "text": "Who purrs \\ud83d?"}\n'),
    ),
    (
        "BEIR title with a complete escape pair (\\ud83d\\ude00, an emoji)",
        lambda: _beir(corpus=b'{"_id": "d2", "title": "Smile \\ud83d\\ude00", "text": "x"}\n'),
        right(
            "loaded, the pair read as one character (U+1F600)",
            lambda f: f.corpus["d2"].title == "Smile \U0001f600",
        ),
    ),
    (
        "Qasper paragraph with a lone surrogate (\\udc00)",
        lambda: _qasper(
            json.dumps(
                {
                    "p1": {
                        **_paper(),
                        "full_text": [{"section_name": "I", "paragraphs": ["X \udc00"]}],
                    }
                }
            )
        ),
    ),
    (
        "Qasper question text with a lone surrogate (\\udbff)",
        lambda: _qasper(
            json.dumps(
                {
                    "p1": {
                        **_paper(),
                        "qas": [{"question": "Why \udbff?", "question_id": "q1", "answers": []}],
                    }
                }
            )
        ),
    ),
    (
        "folder questions.jsonl evidence quote with a lone surrogate (\\ud800)",
        lambda: _folder(json.dumps({"question": "Where?", "evidence": [_QUOTE + " \ud800"]})),
    ),
    (
        "folder document whose file name is Latin-1 bytes (caf\\xe9.md)",
        lambda: _folder(json.dumps({"question": "Where?", "evidence": [_QUOTE]}), b"caf\xe9.md"),
    ),
    (
        "Document built in Python with a lone surrogate in its title",
        lambda: Document("d1", "Cats \udfff", "Cats purr."),
    ),
    (
        "an encoder asked to embed a text with a lone surrogate",
        lambda: _embedded("Dogs \ud800 bark."),
    ),
    ("a .tgz cut in half (extract_tar)", lambda: _extract(_tgz()[: len(_tgz()) // 2])),
    ("a .tgz missing its last 10 bytes (the gzip checksum)", lambda: _extract(_tgz()[:-10])),
    ("a .tgz with one byte flipped in its compressed data", lambda: _extract(_flip(_tgz()))),
    ("a .zip missing its last 30 bytes (extract_zip)", _zip_cut),
    (
        "a Qasper split whose pinned archive matches its checksum but ends early",
        _pinned_but_cut,
        right(
            "the download cache keeps neither the archive nor a half extraction",
            lambda f: f.left == [],
        ),
    ),
]
