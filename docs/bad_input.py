"""Run every bad-input case and write the site's "What bad input gets" page.

    python docs/bad_input.py --out build/site/src/bad-input.md [--check]

Each module in `docs/bad_input_cases/` holds ``CASES``: pairs of a short
description of a hostile but honest input and a zero-argument call that feeds
it to the package. Each call runs here, with a time limit, and its outcome is
classified:

* **handled**: the call returned; the cell says what the package did;
* **clear error**: it raised one of the package's documented error types
  (``ValueError``, ``TypeError``, ``OSError``, ``KeyError`` and their
  subclasses, each with a message that names the problem);
* **crash**: any other exception (``AttributeError``, ``IndexError``, ...);
* **hang**: it ran past the time limit.

A command-line case that exits with a non-zero status and a message on stderr
counts as a clear error.

The page is generated from the code at every site build, so it cannot drift;
``--check`` exits 1 when any case crashes or hangs.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import signal
import sys
import tempfile
import warnings
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from types import FrameType

CASES_DIR = Path(__file__).resolve().parent / "bad_input_cases"
CLEAR = (ValueError, TypeError, OSError, KeyError)
LIMIT_S = 20


class _Hang(Exception):
    pass


def _alarm(signum: int, frame: FrameType | None) -> None:
    raise _Hang


def run_case(call: Callable[[], object]) -> tuple[str, str]:
    """(outcome class, what happened) for one case."""
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(LIMIT_S)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = call()
        said = "; ".join(sorted({str(w.message).splitlines()[0] for w in caught}))
        text = str(result) + (f" (warning: {said})" if said else "")
        return "handled", text
    except _Hang:
        return "hang", f"still running after {LIMIT_S} s"
    except SystemExit as exit_:  # a command line refusing with a message and a status
        return ("clear error" if isinstance(exit_.code, str) else "crash"), str(exit_.code)
    except CLEAR as err:
        msg = " ".join(str(err).split())
        msg = msg if len(msg) <= 400 else msg[:399] + "…"
        kind = "clear error" if msg else "crash"
        return kind, f"`{type(err).__name__}`: {msg}"
    except Exception as err:
        return "crash", f"`{type(err).__name__}`: {err}"
    finally:
        signal.alarm(0)


def collect() -> list[tuple[str, str, Callable[[], object]]]:
    """Every (area, description, call) from the case modules, in file order."""
    cases = []
    for path in sorted(CASES_DIR.glob("*.py")):
        if path.name.startswith("_"):
            continue
        spec = importlib.util.spec_from_file_location(f"bad_input_cases.{path.stem}", path)
        assert spec is not None
        assert spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        cases += [(path.stem, text, call) for text, call in module.CASES]
    return cases


def _cell(text: str) -> str:
    """Table-safe text, with temporary folders and local ports made neutral."""
    text = re.sub(re.escape(tempfile.gettempdir()) + r"/[\w.-]+", "<tmp>", text)
    text = re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:<port>", text)
    return text.replace("|", "\\|").replace("\n", " ")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", type=Path, help="the page to write (Markdown)")
    ap.add_argument("--check", action="store_true", help="exit 1 on any crash or hang")
    args = ap.parse_args(argv)
    rows = [(area, text, *run_case(call)) for area, text, call in collect()]
    counts = Counter(kind for *_, kind, _ in rows)
    summary = (f"{len(rows)} cases: {counts['handled']} handled, "
               f"{counts['clear error']} clear errors, {counts['crash']} crashes, "
               f"{counts['hang']} hangs")
    lines = [
        "# What bad input gets",
        "",
        "Every row below was produced by running the case against the package when "
        "this site was built (`docs/bad_input.py`, cases in `docs/bad_input_cases/`), so "
        "the table cannot drift from the code. *Handled* means the package did something "
        "sensible and said so; *clear error* means it refused with an error that names "
        "the problem and the fix, before doing expensive work; *crash* (any other "
        "exception) and *hang* are bugs.",
        "",
        f"**{summary}.**",
        "",
        "| area | input | outcome | what happened |",
        "|---|---|---|---|",
    ]
    lines += [f"| {area} | {_cell(text)} | {kind} | {_cell(what)} |"
              for area, text, kind, what in rows]
    page = "\n".join(lines) + "\n"
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(page, encoding="utf-8")
    print(summary)
    bad = [r for r in rows if r[2] in ("crash", "hang")]
    for area, text, kind, what in bad:
        print(f"{kind}: [{area}] {text}: {what}", file=sys.stderr)
    return 1 if args.check and bad else 0


if __name__ == "__main__":
    sys.exit(main())
