"""Bad input to ``docs/execute.py``, which runs the notebooks (run by ``docs/bad_input.py``).

A run of the notebooks takes minutes to hours and writes at its end; every
place it writes (``--out``, ``--results``, the figures folder) is checked
before anything runs: a refusal is exit status 2 with a message naming the
path and the fix, never a traceback, and nothing is made.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import tempfile
from collections.abc import Callable
from pathlib import Path

from bad_input_cases import Case, Facts, kept

_EXECUTE = Path(__file__).resolve().parent.parent / "execute.py"


def _main() -> Callable[[list[str]], int]:
    spec = importlib.util.spec_from_file_location("hierret_docs_execute", _EXECUTE)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.main  # type: ignore[no-any-return]


def _run(make: Callable[[Path], list[str]]) -> Callable[[], object]:
    """``docs/execute.py ARGS --only 01_structure``, ARGS made in a fresh folder."""

    def call() -> object:
        root = Path(tempfile.mkdtemp())
        argv = make(root)
        before = sorted(p.relative_to(root) for p in root.rglob("*"))
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            try:
                status = _main()([*argv, "--only", "01_structure"])
            except SystemExit as exit_:
                status = exit_.code if isinstance(exit_.code, int) else 1
        last = (err.getvalue().strip().splitlines() or ["(nothing on stderr)"])[-1]
        after = sorted(p.relative_to(root) for p in root.rglob("*"))
        said = f"exit status {status}: {last}"
        return Facts(
            said,
            refused=SystemExit(said) if status else None,
            untouched=before == after,
        )

    return call


def _file(root: Path, name: str) -> Path:
    path = root / name
    path.write_text("the user's file")
    return path


_NOTHING_MADE = kept("nothing made or changed in the folder", lambda f: f.untouched)

CASES: list[Case] = [
    (
        "docs/execute.py --out an existing file",
        _run(lambda r: ["--out", str(_file(r, "site.html"))]),
        _NOTHING_MADE,
    ),
    (
        "docs/execute.py --out a folder to make inside an existing file",
        _run(lambda r: ["--out", str(_file(r, "notes.txt") / "site")]),
        _NOTHING_MADE,
    ),
    (
        "docs/execute.py --results an existing file (written only at the end of the run)",
        _run(lambda r: ["--out", str(r / "site"), "--results", str(_file(r, "results.json"))]),
        _NOTHING_MADE,
    ),
    (
        "docs/execute.py -p figures_dir naming a file inside --out",
        _run(lambda r: ["--out", str(r), "-p", "figures_dir", _file(r, "plot.png").name]),
        _NOTHING_MADE,
    ),
    (
        "docs/execute.py --out a folder that holds a file named figures",
        _run(lambda r: (_file(r, "figures"), ["--out", str(r)])[1]),
        _NOTHING_MADE,
    ),
]
