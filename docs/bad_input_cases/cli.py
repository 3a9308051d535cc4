"""Bad input to the ``hierret search`` command line (run by ``docs/bad_input.py``).

A refusal is an exit status other than 0 with a message on stderr; Ctrl-C
while the corpus is embedded must stop the command with status 130 and keep
every vector already stored, so that the next run carries on from there.
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from bad_input_cases import Case, Facts, kept, right
from hierret import cli
from hierret.cache import CachedEncoder
from hierret.cli import main
from hierret.encoders import Encoder, HashEncoder


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


CASES: list[Case] = [
    ("a question of Latin-1 bytes from a non-UTF-8 terminal", _run("caf\udce9 au lait")),
    ("an empty question", _run("  ")),
    (
        "--overlap-chars as large as --max-chars",
        _run("what is a list?", "--max-chars", "300", "--overlap-chars", "300"),
    ),
    ("--k -1", _run("what is a list?", "--k", "-1")),
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
]
