"""Bad input to the ``hierret search`` command line (run by ``docs/bad_input.py``).

A refusal is an exit status other than 0 with a message on stderr; Ctrl-C
while the corpus is embedded must stop the command with status 130 and keep
every vector already stored, so that the next run carries on from there.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import tempfile
import unicodedata
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import hierret
import hierret.cli._run as cli  # its cached_encoder is swapped for a case
from bad_input_cases import Case, Check, Facts, kept, right
from hierret.cli import main
from hierret.encoders import Encoder, HashEncoder
from hierret.encoders.cache import CachedEncoder


def _status(*args: str, cache_dir: str | None = None) -> tuple[int, str]:
    """Run ``hierret search ARGS --encoder hash``; (exit status, last line on stderr)."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            status = main(
                [
                    "search",
                    *args,
                    "--encoder",
                    "hash",
                    "--cache-dir",
                    cache_dir or tempfile.mkdtemp(),
                ]
            )
        except SystemExit as exit_:
            status = exit_.code if isinstance(exit_.code, int) else 1
    text = err.getvalue().strip().splitlines()
    return status, text[-1] if text else "(nothing on stderr)"


def _run(*args: str) -> Callable[[], object]:
    def call() -> object:
        status, last = _status(*args)
        said = f"exit status {status}: {last}"
        if status:
            raise SystemExit(said)  # a refusal: docs/bad_input.py files it as a clear error
        return said

    return call


class _Recording(HashEncoder):
    """The ``hash`` encoder, remembering each batch it embeds; Ctrl-C at batch ``stop``."""

    def __init__(self, stop: int | None) -> None:
        super().__init__()
        self.stop = stop
        self.batches: list[list[str]] = []

    def _embed(self, texts: list[str]) -> Any:
        self.batches.append(list(texts))
        if len(self.batches) == self.stop:
            os.kill(os.getpid(), signal.SIGINT)  # the user presses Ctrl-C
        return super()._embed(texts)


@contextlib.contextmanager
def _encoder(enc: Encoder) -> Iterator[None]:
    """``--encoder hash`` gives ``enc``; Ctrl-C raises KeyboardInterrupt meanwhile."""
    load = cli.cached_encoder
    cli.cached_encoder = lambda name, cache, **kw: CachedEncoder(enc, cache)  # type: ignore[assignment]
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        cli.cached_encoder = load
        signal.signal(signal.SIGINT, old)


def _ctrl_c() -> Facts:
    cache_dir = tempfile.mkdtemp()
    first, second = _Recording(stop=3), _Recording(stop=None)
    args = ("what does finally do?", "--level", "fused")
    with _encoder(first):  # the query, then the passages are stored; Ctrl-C on the sections
        status, last = _status(*args, cache_dir=cache_dir)
    leftovers = [p.name for p in Path(cache_dir).rglob(".tmp-*")]
    with _encoder(second):
        again, _ = _status(*args, cache_dir=cache_dir)
    stored = {t for batch in first.batches[:-1] for t in batch}
    redone = sum(t in stored for batch in second.batches for t in batch)
    return Facts(
        f"exit status {status}: {last}; {len(leftovers)} temporary file(s) left; next run: "
        f"exit status {again}, {redone} of the {len(stored)} texts stored before (the query "
        "and the passages) embedded again",
        status=status,
        last=last,
        leftovers=leftovers,
        again=again,
        redone=redone,
        stored=len(stored),
    )


_BIDI = set("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def _obeyed(text: str) -> list[str]:
    """What a terminal would act on in ``text``: controls but newline, separators, bidi."""
    return sorted(
        {
            c
            for c in text
            if c != "\n" and (unicodedata.category(c) in ("Cc", "Cs", "Zl", "Zp") or c in _BIDI)
        }
    )


def _beir(title: str, text: str, doc_id: str = "d1") -> str:
    root = Path(tempfile.mkdtemp(), "corpus")
    (root / "qrels").mkdir(parents=True)
    docs = [
        {"_id": doc_id, "title": title, "text": text},
        {"_id": "d2", "title": "Dogs", "text": "Dogs bark at the mail carrier."},
    ]
    (root / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    (root / "queries.jsonl").write_text('{"_id": "q1", "text": "Who purrs?"}\n')
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td2\t1\n")
    return str(root)


def _printed(corpus: str, *args: str) -> Facts:
    """``hierret search "cats purr" --corpus CORPUS ARGS``: what reached the terminal."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(
            [
                *("search", "cats purr", "--corpus", corpus, *args),
                *("--encoder", "hash", "--cache-dir", tempfile.mkdtemp()),
            ]
        )
    printed = out.getvalue() + err.getvalue()
    obeyed = _obeyed(printed)
    lines = printed.strip().splitlines() or ["(nothing)"]
    last = lines[-1]
    shown = next((ln.strip() for ln in lines if "\\x" in ln or "\\u" in ln), last)
    said = f"exit status {status}; {len(obeyed)} control character(s) printed raw"
    return Facts(
        f"{said}; printed: {shown[:160]}",
        refused=SystemExit(f"exit status {status}: {last}") if status else None,
        obeyed=obeyed,
        printed=printed,
    )


_NOTHING_OBEYED = right(
    "no control, bidi or separator character printed raw", lambda f: f.obeyed == []
)


def _shows(claim: str, *escaped: str) -> tuple[Check, ...]:
    return (
        _NOTHING_OBEYED,
        right(claim, lambda f: all(e in f.printed for e in escaped)),
    )


def _folder_named(name: str) -> str:
    folder = Path(tempfile.mkdtemp(), name)
    folder.mkdir()
    return str(folder)


def _linked(make: Callable[[Path], object]) -> str:
    """A --corpus path that ``make`` turns into a link leading nowhere."""
    root = Path(tempfile.mkdtemp(), "corpus")
    make(root)
    return str(root)


def _only_document_loops() -> str:
    root = Path(tempfile.mkdtemp(), "notes")
    root.mkdir()
    (root / "a.md").symlink_to("a.md")
    (root / "questions.jsonl").write_text('{"question": "Where?", "relevant": ["a"]}\n')
    return str(root)


def _closed_pipe() -> Facts:
    """``hierret search ... | head -0``: the reader is gone before the first line."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    env = {**os.environ, "PYTHONPATH": str(Path(hierret.__file__).parents[1])}
    cmd = [sys.executable, "-m", "hierret", "search", "what is a list?", "--k", "20"]
    try:
        proc = subprocess.run(
            [*cmd, "--encoder", "hash", "--cache-dir", tempfile.mkdtemp()],
            stdout=write_end,
            stderr=subprocess.PIPE,
            env=env,  # no time-out of its own: docs/bad_input.py judges a hang on progress
        )
    finally:
        os.close(write_end)
    err = proc.stderr.decode(errors="replace").strip()
    return Facts(
        f"exit status {proc.returncode}; stderr: {err[-160:] or '(nothing)'}",
        status=proc.returncode,
        err=err,
    )


def _capped() -> Facts:
    """``hierret search "finally clause" --level fused --k 1000000000`` on python-reference."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(
            [
                *("search", "finally clause", "--level", "fused", "--k", "1000000000"),
                *("--encoder", "hash", "--cache-dir", tempfile.mkdtemp()),
            ]
        )
    hits = sum(1 for line in out.getvalue().splitlines() if line[:3].strip().isdigit())
    note = err.getvalue().strip()
    return Facts(f"exit status {status}; {hits} hits; stderr: {note[:200]}", hits=hits, err=note)


CASES: list[Case] = [
    ("a question of Latin-1 bytes from a non-UTF-8 terminal", _run("caf\udce9 au lait")),
    ("an empty question", _run("  ")),
    (
        "--overlap-chars as large as --max-chars",
        _run("what is a list?", "--max-chars", "300", "--overlap-chars", "300"),
    ),
    ("--k -1", _run("what is a list?", "--k", "-1")),
    (
        "--encoder '' (an unset shell variable: --encoder \"$MODEL\")",
        _run("what is a list?", "--encoder", ""),
    ),
    ("--section-weight abc", _run("what is a list?", "--section-weight", "abc")),
    (
        "Ctrl-C (SIGINT) while the sections are embedded, after the passages were stored",
        _ctrl_c,
        (
            right(
                "exit status 130 and a message saying what is kept",
                lambda f: f.status == 130 and "interrupted" in f.last and "cache keeps" in f.last,
            ),
            kept(
                "no half-written file; the next run embeds none of the stored texts again",
                lambda f: not f.leftovers and f.again == 0 and f.stored > 0 and f.redone == 0,
            ),
        ),
    ),
    (
        "a title that clears the screen and retitles the window (ESC[2J, OSC 0;owned BEL), "
        "searched by section",
        lambda: _printed(
            _beir("Cats \x1b[2J\x1b]0;owned\x07", "Cats purr all day."), "--level", "sections"
        ),
        _shows("the title is shown escaped", "Cats \\x1b[2J\\x1b]0;owned\\x07"),
    ),
    (
        "a snippet that moves the cursor up and erases the line above (ESC[1A ESC[2K)",
        lambda: _printed(_beir("Cats", "Cats purr \x1b[1A\x1b[2K all day.")),
        _shows("the snippet is shown escaped", "\\x1b[1A\\x1b[2K"),
    ),
    (
        "a document id holding a carriage return, a C1 CSI (U+009B) and DEL",
        lambda: _printed(_beir("Cats", "Cats purr all day.", doc_id="d\r\x9b2K\x7f1")),
        _shows("the id is shown escaped", "d\\x0d\\x9b2K\\x7f1"),
    ),
    (
        "a snippet with a right-to-left override (U+202E) and a line separator (U+2028)",
        lambda: _printed(_beir("Cats", "Cats purr \u202eyad lla\u202c\u2028 and sleep.")),
        _shows("the override shown as \\u202e ... \\u202c", "\\u202eyad lla\\u202c"),
    ),
    (
        "a --corpus folder named with a window-title sequence (the error message quotes it)",
        lambda: _printed(_folder_named("notes\x1b]0;owned\x07")),
        _shows("the folder name is shown escaped", "notes\\x1b]0;owned\\x07"),
    ),
    (
        "--corpus a symbolic link to itself",
        _run("what is a list?", "--corpus", _linked(lambda p: p.symlink_to(p.name))),
    ),
    (
        "--corpus a folder whose corpus.jsonl is a symbolic link to itself",
        _run(
            "what is a list?",
            "--corpus",
            _linked(lambda p: (p.mkdir(), (p / "corpus.jsonl").symlink_to("corpus.jsonl"))),
        ),
    ),
    (
        "--corpus a link to a folder that was moved away",
        _run("what is a list?", "--corpus", _linked(lambda p: p.symlink_to("moved-away"))),
    ),
    (
        "--corpus a folder whose only document is a symbolic link to itself",
        _run("what is a list?", "--corpus", _only_document_loops()),
    ),
    (
        "stdout a pipe whose reader has gone (hierret search ... | head -0)",
        _closed_pipe,
        (
            right("exit status 141 (128 + SIGPIPE)", lambda f: f.status == 141),
            right("nothing on stderr: no 'Broken pipe', no traceback", lambda f: f.err == ""),
        ),
    ),
    (
        "hierret search --level fused --k 1000000000 (more than the pool of 100 can rank)",
        _capped,
        right(
            "the hits come with a note naming the cap (pool=100) and how to raise it (--pool)",
            lambda f: f.hits > 0 and "pool=100" in f.err and "--pool" in f.err,
        ),
    ),
]
