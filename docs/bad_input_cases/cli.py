"""Bad input to the ``hierret search`` command line (run by ``docs/bad_input.py``)."""

from __future__ import annotations

import contextlib
import io
import tempfile
from collections.abc import Callable

from hierret.cli import main


def _run(*args: str) -> Callable[[], object]:
    def call() -> object:
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            try:
                status = main(["search", *args, "--encoder", "hash",
                               "--cache-dir", tempfile.mkdtemp()])
            except SystemExit as exit_:
                status = exit_.code
        text = err.getvalue().strip().splitlines()
        said = f"exit status {status}: {text[-1] if text else '(nothing on stderr)'}"
        if status:
            raise SystemExit(said)  # a refusal: docs/bad_input.py files it as a clear error
        return said

    return call


CASES: list[tuple[str, Callable[[], object]]] = [
    ("a question of Latin-1 bytes from a non-UTF-8 terminal", _run("caf\udce9 au lait")),
    ("an empty question", _run("  ")),
    ("--overlap-chars as large as --max-chars", _run("what is a list?", "--max-chars", "300",
                                                     "--overlap-chars", "300")),
    ("--k -1", _run("what is a list?", "--k", "-1")),
    ("--section-weight abc", _run("what is a list?", "--section-weight", "abc")),
]
