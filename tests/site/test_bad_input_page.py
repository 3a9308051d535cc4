"""The "What bad input gets" page: its classifier on synthetic cases of each outcome, and
the real case set (``docs/bad_input_cases/``), which must have no silent, lost, crashing or
hanging case."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import psutil
import pytest

from hierret.encoders import HashEncoder
from hierret.encoders.cache import VectorCache
from hierret.structure.chunking import chunk_text

DOCS = Path(__file__).resolve().parents[2] / "docs"


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


@pytest.fixture
def quick_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    """The hang rules with small numbers, so that a test of them takes seconds."""
    monkeypatch.setattr(page, "IDLE_S", 1.5)
    monkeypatch.setattr(page, "CPU_LIMIT_S", 1.5)
    monkeypatch.setattr(page, "POLL_S", 0.05)


def _burn(cpu_s: float) -> None:
    """Use ``cpu_s`` seconds of this thread's CPU time (longer on the clock when the
    machine is busy)."""
    end = time.thread_time() + cpu_s
    while time.thread_time() < end:
        pass


_CHILD_SLEEPS = [sys.executable, "-c", "import time; time.sleep(10**6)"]
_CHILD_WORKS = [
    sys.executable,
    "-c",
    "import time\nend = time.process_time() + 2.5\nwhile time.process_time() < end: pass",
]


@pytest.mark.parametrize(
    ("call", "why"),
    [
        (lambda: time.sleep(10**6), "no progress"),  # sleeps
        (lambda: threading.Event().wait(), "no progress"),  # waits for what never comes
        (lambda: subprocess.run(_CHILD_SLEEPS, check=True), "no progress"),  # and its child
        (lambda: _burn(10**6), "of CPU time"),  # a loop that does not end
    ],
    ids=["sleep", "event", "child-sleeps", "busy-loop"],
)
@pytest.mark.usefixtures("quick_limits")
def test_a_case_that_never_ends_is_a_hang(call: Callable[[], object], why: str) -> None:
    start = time.monotonic()
    kind, what = page.run_case(call, (HOLDS,))
    assert kind == "hang", what
    assert why in what
    assert time.monotonic() - start < 60  # stopped: it would run for ever


@pytest.mark.usefixtures("quick_limits")
def test_waits_shorter_than_the_idle_window_are_no_hang() -> None:
    """Idle 1 s at a time (a package time-out, say) in a case of 3 s: not a hang, though
    it runs twice as long as the idle window."""

    def call() -> Facts:
        for _ in range(2):
            time.sleep(1.0)
            _burn(0.3)
        return Facts("done", answer=3)

    assert page.run_case(call, (HOLDS,)) == ("handled", "done")


def test_a_case_waiting_on_its_working_child_makes_progress(
    quick_limits: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The case idles while its child process works for 2.5 s of CPU: the child's CPU time
    is the case's progress (a command line run by a case, say)."""
    monkeypatch.setattr(page, "CPU_LIMIT_S", 30.0)

    def call() -> Facts:
        subprocess.run(_CHILD_WORKS, check=True)
        return Facts("the child finished", answer=3)

    assert page.run_case(call, (HOLDS,)) == ("handled", "the child finished")


def test_cpu_seconds_counts_children_that_ended() -> None:
    before = page.usage()[0]
    subprocess.run(
        [
            sys.executable,
            "-c",
            "import time\nend = time.process_time() + 0.5\nwhile time.process_time() < end: pass",
        ],
        check=True,
    )
    assert page.usage()[0] - before >= 0.5


@pytest.fixture
def busy_machine() -> Iterator[list[subprocess.Popen[bytes]]]:
    """Two CPU-bound processes beside the test (as other work on a shared machine),
    stopped when it ends."""
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        yield hogs
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()


def test_on_a_busy_machine_the_check_passes_a_slow_case_and_fails_a_hang(
    tmp_path: Path,
    quick_limits: None,
    busy_machine: list[subprocess.Popen[bytes]],
    capsys: pytest.CaptureFixture[str],
) -> None:
    """With two CPU-bound processes running, a case that takes longer on the clock than
    the idle window (and than it would take on an idle machine) still passes ``--check``;
    one that sleeps or waits for ever still fails it."""
    slow = _cases_folder(
        tmp_path / "slow",
        (
            "import time\n\n"
            "def _slow():\n"
            "    for _ in range(2):\n"
            "        end = time.thread_time() + 0.5\n"
            "        while time.thread_time() < end:\n"
            "            pass\n"
            "        time.sleep(1.0)\n"
            "    return Facts('finished', a=3)\n\n"
            "CASES = [('slow but finishing', _slow, right('a is 3', lambda f: f.a == 3))]\n"
        ),
    )
    start = time.monotonic()
    assert page.main(["--check", "--cases", str(slow)]) == 0
    wall = time.monotonic() - start
    assert capsys.readouterr().out.startswith("1 cases: 1 handled")
    assert wall > page.IDLE_S  # a wall-clock limit of the idle window would have failed it
    hung = _cases_folder(
        tmp_path / "hung",
        (
            "import threading\nimport time\n\n"
            "ANY = right('anything', lambda f: True)\n"
            "CASES = [\n"
            "    ('sleeps for ever', lambda: time.sleep(10**6), ANY),\n"
            "    ('waits for ever', lambda: threading.Event().wait(), ANY),\n"
            "]\n"
        ),
    )
    assert page.main(["--check", "--cases", str(hung)]) == 1
    err = capsys.readouterr().err
    assert "hang: [toy] sleeps for ever: no progress" in err
    assert "hang: [toy] waits for ever: no progress" in err
    assert all(hog.poll() is None for hog in busy_machine)  # the load lasted the whole test


def _cases_folder(tmp_path: Path, body: str) -> Path:
    folder = tmp_path / "cases"
    folder.mkdir(parents=True)
    (folder / "toy.py").write_text(
        "from bad_input_cases import Facts, kept, right\n"
        "from hierret.structure.chunking import chunk_text\n\n" + body,
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


def test_a_reading_that_falls_for_a_moment_is_no_loss_of_progress(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A child that has ended but is not yet reaped is in no reading: the CPU time read
    falls for a moment (2.5 s to 0 here, as when the failure was seen under load), and
    the watch keeps the highest reading instead of counting the fall against the case."""
    readings = iter([(0.0, {}), (1.0, {}), (2.5, {}), (0.0, {}), (2.6, {})])
    monkeypatch.setattr(page, "usage", lambda besides=frozenset(): next(readings))
    watch = page._Watch()
    seen = [watch._used(0.0)[0] for _ in range(4)]
    assert seen == [1.0, 2.5, 2.5, 2.6]


def test_the_children_of_a_process_the_case_did_not_start_are_not_its_own() -> None:
    """A process running before the case (left by another test, say) may start children
    of its own; their time, when they end, goes to that process, which is not counted, so
    counting them would make the reading fall."""
    parent = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import subprocess, sys\nsubprocess.run(sys.argv[1:])",
            *_CHILD_WORKS,
        ]
    )
    try:
        deadline = time.monotonic() + 30
        while not psutil.Process(parent.pid).children() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert psutil.Process(parent.pid).children(), "the parent never started its child"
        pids = {p.pid for p in page._descendants(psutil.Process(), frozenset({parent.pid}))}
        assert parent.pid not in pids
        assert not pids & {c.pid for c in psutil.Process(parent.pid).children()}
        assert parent.pid in {p.pid for p in page._descendants(psutil.Process(), frozenset())}
    finally:
        for child in psutil.Process(parent.pid).children(recursive=True):
            child.kill()
        parent.kill()
        parent.wait()
