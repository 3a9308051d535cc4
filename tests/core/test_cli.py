"""The command line: hits with section paths and spans, the cache, clear usage errors."""

from __future__ import annotations

import json
import os
import re
import runpy
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

import hierret
from hierret.cli import CLOSED_PIPE, main
from hierret.datasets import load_python_reference
from hierret.structure.hierarchy import build_hierarchy

HIT = re.compile(r"^ ?(\d+)  (-?\d\.\d{4})  (\S+)  \[(\d+), (\d+)\)  (.+)$")


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("vectors")


def search(cache: Path, *args: str) -> list[str]:
    return [
        "search",
        "how does finally work?",
        "--encoder",
        "hash",
        "--cache-dir",
        str(cache),
        *args,
    ]


def hits(out: str) -> list[re.Match[str]]:
    return [m for line in out.splitlines() if (m := HIT.match(line))]


def test_fused_search_prints_section_paths_and_spans(
    cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(search(cache_dir, "--level", "fused", "--k", "4")) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("python-reference: 79 documents")
    found = hits(out)
    assert [int(m[1]) for m in found] == [1, 2, 3, 4]
    h = build_hierarchy(load_python_reference())
    sections = {s.id: s for ss in h.sections.values() for s in ss}
    for m in found:
        s = sections[m[3]]
        assert (int(m[4]), int(m[5])) == (s.start, s.own_end)
        assert m[6] == " > ".join(s.path)
    assert len(out.splitlines()) == 1 + 2 * 4  # header, then hit and snippet lines


def test_second_call_reads_the_cache(cache_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(search(cache_dir))
    shards = sorted(cache_dir.rglob("*.hvc"))
    assert shards
    first = capsys.readouterr().out
    main(search(cache_dir))
    assert sorted(cache_dir.rglob("*.hvc")) == shards
    assert capsys.readouterr().out == first


@pytest.mark.parametrize(
    ("level", "vectors", "ranker"),
    [
        ("passages", "rawspan", "dense"),
        ("documents", "centroid", "hybrid"),
        ("sections", "first-window", "bm25"),
        ("fused", "centroid", "hybrid"),
    ],
)
def test_other_levels_vectors_and_rankers(
    cache_dir: Path, capsys: pytest.CaptureFixture[str], level: str, vectors: str, ranker: str
) -> None:
    args = search(
        cache_dir,
        "--level",
        level,
        "--vectors",
        vectors,
        "--ranker",
        ranker,
        "--k",
        "2",
        "--snippet-chars",
        "0",
    )
    assert main(args) == 0
    out = capsys.readouterr().out
    assert len(hits(out)) == 2
    assert len(out.splitlines()) == 3
    assert f"{vectors} vectors; {level}, {ranker}" in out


def test_the_default_is_the_package_default_profile(
    cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No option: dense passages (DEFAULT), exactly what the Searcher gives with DEFAULT."""
    from hierret.encoders import load_encoder
    from hierret.encoders.cache import CachedEncoder, VectorCache
    from hierret.search.searcher import Searcher

    assert main(search(cache_dir, "--k", "3")) == 0
    out = capsys.readouterr().out
    assert "rawspan vectors; passages, dense" in out.splitlines()[0]
    enc = CachedEncoder(load_encoder("hash"), VectorCache(cache_dir))
    expected = Searcher(build_hierarchy(load_python_reference()), enc).search(
        "how does finally work?", k=3
    )
    assert [(m[3], f"{float(m[2]):.4f}") for m in hits(out)] == [
        (h.unit_id, f"{h.score:.4f}") for h in expected
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--level", "paragraphs"], "invalid choice: 'paragraphs'"),
        (["--vectors", "mean"], "invalid choice: 'mean'"),
        (["--ranker", "splade"], "invalid choice: 'splade'"),
        (["--depth", "50"], "unrecognized arguments: --depth"),
        (["--pool", "0"], "expected a positive integer"),
        (["--section-weight", "1.5"], "expected a number in [0, 1]"),
        (["--k", "0"], "expected a positive integer"),
    ],
)
def test_usage_errors_are_clear(
    cache_dir: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(search(cache_dir, *args))
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_overlap_not_below_passage_size(
    cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(search(cache_dir, "--max-chars", "100", "--overlap-chars", "100")) == 2
    assert "--overlap-chars" in capsys.readouterr().err


def test_no_command_prints_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "search" in capsys.readouterr().err


def test_python_dash_m(
    cache_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "argv", ["hierret", *search(cache_dir, "--k", "1")])
    with pytest.raises(SystemExit) as exit_info:
        runpy.run_path(str(Path(hierret.__file__).with_name("__main__.py")), run_name="__main__")
    assert exit_info.value.code == 0
    assert len(hits(capsys.readouterr().out)) == 1


@pytest.mark.parametrize(
    ("question", "message"),
    [
        ("   ", "the question is empty"),
        ("caf\udce9 au lait", "not valid UTF-8"),  # what Python makes of Latin-1 bytes in argv
    ],
)
def test_bad_questions_are_refused_before_any_work(
    cache_dir: Path, capsys: pytest.CaptureFixture[str], question: str, message: str
) -> None:
    assert main(["search", question, "--encoder", "hash", "--cache-dir", str(cache_dir)]) == 2
    assert message in capsys.readouterr().err


def test_interrupt_says_the_cache_is_kept(
    cache_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("hierret.cli._run.build_hierarchy", interrupted)
    assert main(search(cache_dir)) == 130
    err = capsys.readouterr().err
    assert "interrupted" in err
    assert "Traceback" not in err


# -- terminal injection: data is shown, never obeyed ---------------------------------

HOSTILE_TITLE = "Cats \x1b[2J\x1b]0;owned\x07"
HOSTILE_TEXT = "Cats purr \x1b[1A\x1b[2K and \x9b31m sleep \u202eevil\u202c all day \x7f."


def _hostile_beir(root: Path) -> Path:
    (root / "qrels").mkdir(parents=True)
    docs = [
        {"_id": "d\x1b[31m1", "title": HOSTILE_TITLE, "text": HOSTILE_TEXT},
        {"_id": "d2", "title": "Dogs", "text": "Dogs bark at the mail carrier."},
    ]
    (root / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    (root / "queries.jsonl").write_text('{"_id": "q1", "text": "Who purrs?"}\n')
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td2\t1\n")
    return root


def _unsafe(text: str) -> list[str]:
    """The characters of ``text`` a terminal would act on (independent of printable())."""
    return [
        c
        for c in text
        if c != "\n" and (unicodedata.category(c) in ("Cc", "Cs", "Zl", "Zp") or c in BIDI)
    ]


BIDI = set("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


@pytest.mark.parametrize("level", ["passages", "sections", "documents", "fused"])
def test_control_characters_in_the_corpus_are_shown_not_obeyed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], level: str
) -> None:
    corpus = _hostile_beir(tmp_path / "hostile")
    args = ["search", "cats purr", "--corpus", str(corpus), "--level", level, "--k", "2"]
    assert main([*args, "--encoder", "hash", "--cache-dir", str(tmp_path / "c")]) == 0
    out = capsys.readouterr().out
    assert _unsafe(out) == []
    assert "\\x1b[31m" in out  # the id, escaped
    if level != "passages":  # passages have no path; sections and documents show the title
        assert "Cats \\x1b[2J\\x1b]0;owned\\x07" in out
    assert "\\x1b[1A\\x1b[2K" in out  # the snippet
    assert "\\u202eevil\\u202c" in out


def test_control_characters_in_an_error_message_are_shown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "evil\x1b]0;owned\x07"
    folder.mkdir()
    code = main(["search", "q", "--corpus", str(folder), "--encoder", "hash"])
    err = capsys.readouterr().err
    assert code == 2
    assert _unsafe(err) == []
    assert "evil\\x1b]0;owned\\x07" in err


def test_printable_escapes_every_control_and_keeps_every_printable_character() -> None:
    """Against unicodedata: every C0/C1 control, separator, bidi control and surrogate is
    escaped (newline too, unless lines=True); every str.isprintable() character is kept."""
    from hierret.cli import printable

    everything = "".join(map(chr, range(0x3000))) + "\ud800\udfff😀"
    assert _unsafe(printable(everything)) == []
    assert "\n" not in printable(everything)
    assert "\t" not in printable(everything)
    assert [c for c in _unsafe(printable(everything, lines=True)) if c != "\t"] == []
    for c in map(chr, range(0x3000)):
        if c.isprintable():
            assert printable(c) == c, repr(c)
        if unicodedata.category(c) == "Cc" or c in BIDI:
            code = ord(c)
            assert printable(c) == (f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}")
    assert printable("\n\t", lines=True) == "\n\t"
    assert printable("\r", lines=True) == "\\x0d"


# -- a reader that closes the pipe early ------------------------------------------------


def test_a_closed_pipe_ends_the_command_quietly_with_141(tmp_path: Path) -> None:
    """``hierret search ... | head -1``: no "Broken pipe" message, no traceback, status 141
    (128 + SIGPIPE, as a shell reports for any tool a closed pipe stops)."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first line is written
    env = {**os.environ, "PYTHONPATH": str(Path(hierret.__file__).parents[1])}
    cmd = [sys.executable, "-m", "hierret", *search(tmp_path, "--k", "20")]
    try:
        proc = subprocess.run(cmd, stdout=write_end, stderr=subprocess.PIPE, env=env, timeout=600)
    finally:
        os.close(write_end)
    assert proc.returncode == CLOSED_PIPE == 141
    assert proc.stderr == b""


def test_the_same_command_into_an_open_pipe_prints_everything(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(hierret.__file__).parents[1])}
    cmd = [sys.executable, "-m", "hierret", *search(tmp_path, "--k", "20")]
    proc = subprocess.run(cmd, capture_output=True, env=env, timeout=600)
    assert proc.returncode == 0
    assert len(hits(proc.stdout.decode())) == 20


def test_a_k_past_the_pool_is_noted_on_stderr(
    cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(search(cache_dir, "--level", "fused", "--k", "1000000000", "--pool", "20")) == 0
    captured = capsys.readouterr()
    n = len(hits(captured.out))
    assert 20 <= n < 208
    assert f"at most {n} of the 208 sections" in captured.err
    assert "pool=20" in captured.err
    assert "--pool" in captured.err


def test_a_question_nothing_matches_says_so(
    cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = search(cache_dir, "--level", "fused", "--ranker", "bm25")
    args[1] = "the of and is it"
    assert main(args) == 0
    captured = capsys.readouterr()
    assert hits(captured.out) == []
    assert "no hits" in captured.err
