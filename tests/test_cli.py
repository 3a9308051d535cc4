"""The command line: hits with section paths and spans, the cache, clear usage errors."""

from __future__ import annotations

import re
import runpy
import sys
from pathlib import Path

import pytest

import hierret
from hierret.cli import main
from hierret.datasets import load_python_reference
from hierret.hierarchy import build_hierarchy

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
    from hierret.cache import CachedEncoder, VectorCache
    from hierret.encoders import load_encoder
    from hierret.search import Searcher

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

    monkeypatch.setattr("hierret.cli.build_hierarchy", interrupted)
    assert main(search(cache_dir)) == 130
    err = capsys.readouterr().err
    assert "interrupted" in err
    assert "Traceback" not in err
