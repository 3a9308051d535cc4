"""The "What bad input gets" page: its classifier on synthetic cases of each outcome, and
the real case set (``docs/bad_input_cases/``), which must have no silent, lost, crashing or
hanging case."""

from __future__ import annotations

import importlib.util
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

from hierret.cache import VectorCache
from hierret.chunking import chunk_text
from hierret.encoders import HashEncoder

DOCS = Path(__file__).resolve().parents[1] / "docs"


def _load_page() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bad_input_page", DOCS / "bad_input.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bad_input_page"] = module
    spec.loader.exec_module(module)
    return module


page = _load_page()
from bad_input_cases import Facts, kept, right  # noqa: E402  (docs/ is on the path now)

HOLDS = right("the answer is 3", lambda f: f.answer == 3)
KEPT = kept("the file is still there", lambda f: f.there)


def _raise(err: BaseException) -> object:
    raise err


def _package_error(call: Callable[[], object]) -> BaseException:
    """What the package raises for ``call()`` (a real, documented error of hierret)."""
    try:
        call()
    except Exception as err:
        return err
    raise AssertionError("the package did not refuse")


def _refuse_max_chars() -> object:
    return chunk_text("Some text.", 0, 0)


def _refuse_lookup() -> object:
    with tempfile.TemporaryDirectory() as tmp:
        return VectorCache(tmp).lookup(HashEncoder(dimension=4).identity, ["never stored"])


@pytest.mark.parametrize(
    ("call", "checks", "expected"),
    [
        (lambda: Facts("three", answer=3, there=True), (HOLDS, KEPT), "handled"),
        (lambda: Facts("four", answer=4, there=True), (HOLDS, KEPT), "silent"),
        (lambda: Facts("three, file gone", answer=3, there=False), (HOLDS, KEPT), "lost"),
        (lambda: Facts("four, file gone", answer=4, there=False), (HOLDS, KEPT), "lost"),
        (lambda: "returned something", (), "silent"),  # no check declared: not handled
        (_refuse_max_chars, (), "clear error"),  # ValueError from the package
        (_refuse_lookup, (HOLDS,), "clear error"),  # MissingVectorsError, a KeyError
        (lambda: _raise(ValueError("k must be >= 1, got -1")), (), "crash"),  # the case's own
        (lambda: _raise(ValueError("")), (), "crash"),  # an error that says nothing
        (lambda: _raise(AttributeError("'NoneType' object has no attribute 'x'")), (), "crash"),
        (lambda: _raise(IndexError("list index out of range")), (HOLDS,), "crash"),
        (
            lambda: _raise(SystemExit("exit status 2: error: the question is empty")),
            (),
            "clear error",
        ),
        (lambda: _raise(SystemExit(2)), (), "crash"),  # a status, no message
        (
            lambda: Facts(
                "refused, then checked",
                refused=_package_error(_refuse_max_chars),
                answer=3,
                there=True,
            ),
            (HOLDS, KEPT),
            "clear error",
        ),
        (
            lambda: Facts(
                "refused, file gone",
                refused=_package_error(_refuse_max_chars),
                answer=3,
                there=False,
            ),
            (HOLDS, KEPT),
            "lost",
        ),
        (
            lambda: Facts(
                "refused by the case", refused=OSError("not writable: fix it"), answer=3, there=True
            ),
            (HOLDS, KEPT),
            "crash",
        ),
        (
            lambda: Facts("refused oddly", refused=RuntimeError("boom"), answer=3, there=True),
            (HOLDS,),
            "crash",
        ),
        (lambda: Facts("no such field"), (HOLDS,), "crash"),  # the check itself cannot run
    ],
)
def test_each_outcome_class(call: object, checks: tuple[object, ...], expected: str) -> None:
    kind, what = page.run_case(call, checks)
    assert kind == expected, what


def test_a_failed_check_is_named() -> None:
    kind, what = page.run_case(lambda: Facts("four", answer=4, there=True), (HOLDS, KEPT))
    assert kind == "silent"
    assert "NOT TRUE: the answer is 3" in what
    assert "file is still there" not in what


def test_a_call_past_the_limit_is_a_hang(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(page, "LIMIT_S", 1)
    start = time.monotonic()
    kind, _ = page.run_case(lambda: time.sleep(10), (HOLDS,))
    assert kind == "hang"
    assert time.monotonic() - start < 5


def _cases_folder(tmp_path: Path, body: str) -> Path:
    folder = tmp_path / "cases"
    folder.mkdir()
    (folder / "toy.py").write_text(
        "from bad_input_cases import Facts, kept, right\n"
        "from hierret.chunking import chunk_text\n\n" + body,
        encoding="utf-8",
    )
    return folder


@pytest.mark.parametrize("checks", ["()", "[]", "None", "'the answer is 3'", "(None,)"])
def test_a_case_that_declares_no_check_is_refused(tmp_path: Path, checks: str) -> None:
    folder = _cases_folder(tmp_path, f"CASES = [('toy input', lambda: Facts('x'), {checks})]\n")
    with pytest.raises(page.CaseError, match=r"toy input.*declares no check"):
        page.collect(folder)


def test_check_exits_1_on_silent_and_the_summary_lists_six_classes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _cases_folder(
        tmp_path,
        (
            "CASES = [\n"
            "    ('a right answer', lambda: Facts('3', a=3),\n"
            "     right('a is 3', lambda f: f.a == 3)),\n"
            "    ('a refusal', lambda: chunk_text('x', 0, 0)),\n"
            "]\n"
        ),
    )
    out = tmp_path / "page.md"
    assert page.main(["--check", "--cases", str(folder), "--out", str(out)]) == 0
    line = "2 cases: 1 handled, 1 clear errors, 0 silent, 0 lost, 0 crashes, 0 hangs"
    assert capsys.readouterr().out.strip() == line
    text = out.read_text()
    assert f"**{line}.**" in text
    assert "| toy | a right answer | a is 3 | handled | 3 |" in text
    for word in ("*handled*", "*clear error*", "*silent*", "*lost*", "*crash*", "*hang*"):
        assert word in text
    (folder / "toy.py").write_text(
        "from bad_input_cases import Facts, right\n\n"
        "CASES = [('a wrong answer', lambda: Facts('4', a=4),\n"
        "          right('a is 3', lambda f: f.a == 3))]\n",
        encoding="utf-8",
    )
    assert page.main(["--check", "--cases", str(folder)]) == 1
    assert page.main(["--cases", str(folder)]) == 0  # without --check it only reports
    assert "silent: [toy] a wrong answer" in capsys.readouterr().err


@pytest.fixture(scope="module")
def real_outcomes() -> list[tuple[str, str, str, str]]:
    """(area, input, outcome, what happened) of every real case."""
    pytest.importorskip("sentence_transformers")
    return [(c.area, c.text, *page.run_case(c.call, c.checks)) for c in page.collect()]


def test_the_real_cases_have_no_silent_lost_crash_or_hang(
    real_outcomes: list[tuple[str, str, str, str]],
) -> None:
    bad = [r for r in real_outcomes if r[2] in page.FAILURES]
    assert not bad, "\n".join(f"{kind}: [{area}] {text}: {what}" for area, text, kind, what in bad)
    counts = Counter(kind for _, _, kind, _ in real_outcomes)
    assert counts["handled"] > 0
    assert counts["clear error"] > 0


def test_every_class_of_the_issue_has_cases(
    real_outcomes: list[tuple[str, str, str, str]],
) -> None:
    texts = " ".join(text for _, text, _, _ in real_outcomes).lower()
    for needle in [
        # 1. the identity covers what changes a vector
        "pooling",
        "normalize",
        "tokenizer",
        "token window",
        "half precision",
        "default prompt",
        "torch version",
        "query prefix",
        # 2. text the chunker does not expect
        "chinese",
        "cr only",
        "u+2028",
        "nel",
        "200 kb line",
        # 3. shared caches
        "another process",
        "cannot be listed",
        "regular file",
        "umask",
        "never stored",
        # 4. confident answers to nonsense
        "empty query",
        "whitespace-only",
        "no text",
        "k = -1",
        'k = "3"',
        "k = 2.5",
        "nan",
        "+inf",
        "longer than the encoder's token window",
        # 5. loaders trusting field types
        "evidence is a string",
        "answer is a string",
        "caption",
        "same paper id",
        "max_papers=-1",
        "latin-1",
        "empty title and text",
        "malformed judgment",
        # 6. unbounded waits
        "drips",
        "ctrl-c",
        "non-utf-8 terminal",
    ]:
        assert needle in texts, needle


def test_every_class_of_the_third_round_has_cases(
    real_outcomes: list[tuple[str, str, str, str]],
) -> None:
    """Issue 43's fourteen classes, and a folder without questions, each on the page."""
    texts = " ".join(text for _, text, _, _ in real_outcomes).lower()
    for needle in [
        "disk fills up",  # 1. a command that exists to store fails when it stored nothing
        "under a regular file",
        "says format 2",  # 2. the format checked where it is read
        "says format 7",
        "utf-16",  # 3. the encoding found named, with a fix right for it
        "shift-jis",
        "windows-1251",
        "cut short in place",  # 4. a mapped file shrinking under a reader
        "two-document folder",  # 5. BM25 on a tiny corpus
        "nfd",  # 6. text normalised as ids are
        "--engine ray",  # 7. a Ray start failure
        "evidence files whose question ids",  # 8. ids that look missing
        "front matter",  # 9
        "html page",  # 10
        "words no document holds",  # 11. no zero-score hits
        "two writers",  # 12. a key stored twice
        "--encoder ''",  # 13. an empty encoder name
        "docs/execute.py --out",  # 14. output paths checked up front
        "no questions.jsonl",  # a folder of documents is searchable
    ]:
        assert needle in texts, needle


def test_a_neutral_placeholder_shows_on_the_page() -> None:
    """``<tmp>`` was raw HTML to MyST: the page showed 'file:///qasper.tgz' where a
    temporary folder had been, and Chromium's path check flagged it as a local path."""
    import re

    cell = page._cell(f"file://{tempfile.gettempdir()}/tmpab_1/q.tgz at 127.0.0.1:8123")
    assert cell == "file://[tmp]/q.tgz at 127.0.0.1:[port]"
    assert not re.search(r"<[a-z]+>", cell)
